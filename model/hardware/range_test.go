package hardware

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
)

// TestCatalogRanges: every catalog number must be finite and physical. NaN bandwidth used to be
// accepted and panicked simulate ("vtime: invalid duration NaN s") and plan's fingerprint;
// 1e300 GiB of memory and negative prices were accepted too.
func TestCatalogRanges(t *testing.T) {
	base := map[string]string{
		"memory_gib": "95.59", "memory_gb": "96", "bandwidth_gbps": "1597", "bf16_tflops": "480",
		"fp8_tflops": "960", "fp4_tflops": "1920", "link_gbps": "64", "link_latency_us": "10", "price_per_hour": "1.6",
	}
	doc := func(key, val string) string {
		var b strings.Builder
		b.WriteString("[[gpu]]\nname = \"x\"\nlink = \"pcie\"\n")
		for k, v := range base {
			if k == key {
				v = val
			}
			b.WriteString(k + " = " + v + "\n")
		}
		return b.String()
	}
	if _, err := ParseCatalog([]byte(doc("", "")), "ok.toml"); err != nil {
		t.Fatalf("valid entry refused: %v", err)
	}
	cases := []struct{ key, val, want string }{
		{"bandwidth_gbps", "nan", "bandwidth_gbps = NaN: want a finite number in 10..100000 GB/s"},
		{"bandwidth_gbps", "inf", "bandwidth_gbps = +Inf"},
		{"bandwidth_gbps", "1e-9", "bandwidth_gbps = 1e-09"},
		{"memory_gib", "1e300", "memory_gib = 1e+300: want a finite number in 0.5..4096 GiB"},
		{"memory_gib", "0.25", "memory_gib = 0.25"},
		{"memory_gb", "-inf", "memory_gb = -Inf"},
		{"bf16_tflops", "0", "bf16_tflops = 0: want a finite number in 0.1..100000 TFLOPS"},
		{"bf16_tflops", "1e-300", "bf16_tflops = 1e-300"},
		{"fp8_tflops", "-1", "fp8_tflops = -1: want a finite number in 0.1..100000 TFLOPS (0: no fp8 tensor cores), or 0"},
		{"fp8_tflops", "1e-300", "fp8_tflops = 1e-300"},
		{"fp4_tflops", "nan", "fp4_tflops = NaN"},
		{"fp4_tflops", "1e6", "fp4_tflops = 1e+06"},
		{"link_gbps", "0.01", "link_gbps = 0.01: want a finite number in 0.1..10000 GB/s"},
		{"link_latency_us", "1e9", "link_latency_us = 1e+09: want a finite number in 0.01..1000 us"},
		{"price_per_hour", "-1", "price_per_hour = -1: want a finite number in 0..10000 USD per GPU-hour"},
		{"price_per_hour", "nan", "price_per_hour = NaN"},
	}
	for _, c := range cases {
		_, err := ParseCatalog([]byte(doc(c.key, c.val)), "g.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "g.toml: gpu[0]") {
			t.Errorf("%s = %s: err = %v, want %q", c.key, c.val, err, c.want)
		}
	}
	// Zero fp8/fp4 peaks and a zero price stay valid: "no such tensor cores", "no price".
	for _, kv := range [][2]string{{"fp8_tflops", "0"}, {"fp4_tflops", "0"}, {"price_per_hour", "0"}, {"memory_gb", "0"}} {
		if _, err := ParseCatalog([]byte(doc(kv[0], kv[1])), "z.toml"); err != nil {
			t.Errorf("%s = %s refused: %v", kv[0], kv[1], err)
		}
	}
}

// TestCardEditions: a memory-clock offset scales the bandwidth with the transfer rate and names
// the card apart; a power cap keeps the peaks, names the card apart and lowers the prior of the
// sustained compute clock as the cube root of the power.
func TestCardEditions(t *testing.T) {
	cat := BuiltinCatalog()
	ws, err := cat.Find("RTX-PRO-6000-Workstation")
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ws.WithMemoryOffset(6000)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1792 * 34000.0 / 28000; math.Abs(oc.BandwidthGBps-want) > 1e-9 || oc.Name == ws.Name {
		t.Errorf("+6000: %s %.1f GB/s, want %.1f under a name of its own", oc.Name, oc.BandwidthGBps, want)
	}
	if oc.BF16TFLOPS != ws.BF16TFLOPS {
		t.Errorf("+6000 changed the compute peak: %g", oc.BF16TFLOPS)
	}
	h100, _ := cat.Find("H100-SXM")
	if _, err := h100.WithMemoryOffset(1000); err == nil {
		t.Error("an offset on a card without its stock transfer rate was accepted")
	}
	capped := ws.WithPowerCap(300)
	if capped.Name == ws.Name || capped.BandwidthGBps != ws.BandwidthGBps {
		t.Errorf("cap: %+v", capped)
	}
	ps, _ := capped.Priors(4)
	got := 0.0
	for _, p := range ps {
		if p.ID == param.ComputePowerRatio {
			got = p.Value
		}
	}
	if want := math.Cbrt(0.5); math.Abs(got-want) > 1e-9 {
		t.Errorf("capped prior compute_power_ratio %g, want %g", got, want)
	}
	if same := ws.WithPowerCap(700); same.Name != ws.Name {
		t.Errorf("a cap above the rating renamed the card: %s", same.Name)
	}
}
