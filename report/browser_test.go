package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestReportInChromium renders the report in headless Chromium and checks that the screenshot
// is a PNG with something drawn on it. It is skipped when no chromium is on PATH (Debian and
// Ubuntu: apt-get install -y chromium). SERVESIM_REPORT=FILE checks that file instead of the
// seed report; SERVESIM_SCREENSHOT=FILE keeps the screenshot (scripts/check-report-browser.sh
// sets both).
func TestReportInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not on PATH: install it (apt-get install -y chromium) to run the browser check")
	}
	if testing.Short() {
		t.Skip("browser check skipped in -short mode")
	}
	dir := t.TempDir()
	page := os.Getenv("SERVESIM_REPORT")
	if page == "" {
		page = filepath.Join(dir, "report.html")
		data, err := Render(seedInput(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(page, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page, err = filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "screenshot.png")
	profile := filepath.Join(dir, "profile")
	if err := os.Mkdir(profile, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--screenshot="+shot, "--window-size=1400,3000", "file://"+page)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out.Bytes())
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\nchromium said:\n%s", err, out.Bytes())
	}
	if keep := os.Getenv("SERVESIM_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 2000 {
		t.Errorf("screenshot %dx%d px, want about 1400x3000", b.Dx(), b.Dy())
	}
	variance, inked := pixelStats(img)
	t.Logf("screenshot %v: luminance variance %.0f, %.1f %% of pixels not near white", img.Bounds().Size(), variance, inked*100)
	// A blank page has zero variance and no ink; the seed report has text, tables and figures
	// over the whole 3000 px (variance in the thousands, several percent ink).
	if variance < 100 || inked < 0.01 {
		t.Errorf("the screenshot looks blank: luminance variance %.1f, ink %.3f %%", variance, inked*100)
	}
}

// pixelStats returns the variance of the luminance (0..255) over a grid of sampled pixels and
// the fraction of those pixels that are not near white.
func pixelStats(img image.Image) (variance, inked float64) {
	b := img.Bounds()
	var sum, sum2 float64
	n, ink := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sum2 += l * l
			n++
			if l < 235 {
				ink++
			}
		}
	}
	mean := sum / float64(n)
	return sum2/float64(n) - mean*mean, float64(ink) / float64(n)
}
