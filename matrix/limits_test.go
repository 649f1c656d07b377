package matrix

import (
	"os"
	"strings"
	"testing"
)

// TestLineAndFileLimits: a CSV or text matrix with a huge line is an error naming the file and
// line; /dev/zero as a matrix is an error naming the file and the size limit.
func TestLineAndFileLimits(t *testing.T) {
	long := strings.Repeat("x", 2<<20)
	in := strings.Join(CSVHeader(), ",") + "\n" + long + "\n"
	_, err := ParseCSV(strings.NewReader(in), "m.csv")
	if err == nil || !strings.Contains(err.Error(), "m.csv:2") || !strings.Contains(err.Error(), "longer than 1 MiB") {
		t.Errorf("CSV: err = %v", err)
	}
	_, err = ParseText(strings.NewReader("# page\n"+long+"\n"), "m.txt")
	if err == nil || !strings.Contains(err.Error(), "m.txt:2") {
		t.Errorf("text: err = %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := Load("/dev/zero")
		if err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 64 MiB") {
			t.Errorf("Load(/dev/zero): %v", err)
		}
	}
}
