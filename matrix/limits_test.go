package matrix

import (
	"os"
	"strings"
	"testing"
)

// TestLineAndFileLimits: a CSV or text matrix with a huge line is an error naming the file and
// line; /dev/zero as a matrix is refused as not a regular file.
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
		if err == nil || !strings.Contains(err.Error(), "/dev/zero: it is a character device, not a regular file") {
			t.Errorf("Load(/dev/zero): %v", err)
		}
	}
}

// TestNegativeMeasurementRefused: a measured matrix with a negative (or infinite) throughput,
// latency or window is refused with the cell and the field, in every format; absent stays valid.
func TestNegativeMeasurementRefused(t *testing.T) {
	head := strings.Join(CSVHeader(), ",") + "\n"
	cases := []struct{ row, want string }{
		{"prefill,8K,8192,1,Valid,-12677.8,,646.2,,,1,,\n", "total_tok_s = -12677.8: want a finite number >= 0"},
		{"prefill,8K,8192,1,Valid,12677.8,,-646.2,,,1,,\n", "ttft_ms = -646.2"},
		{"decode,8K,8192,1,Valid,100,50,100,10,1,3,3000,inf\n", "measured_s = +Inf"},
		{"decode,8K,8192,1,Valid,100,-50,100,10,1,3,3000,30\n", "per_request_tok_s = -50"},
	}
	for _, c := range cases {
		_, err := ParseCSV(strings.NewReader(head+c.row), "m.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.row, err, c.want)
		}
	}
	if _, err := ParseCSV(strings.NewReader(head+"prefill,8K,8192,1,Valid,12677.8,,646.2,,,1,,\n"), "ok.csv"); err != nil {
		t.Errorf("valid row refused: %v", err)
	}
	js := `{"prefill":[{"phase":"prefill","context":"8K","context_tokens":8192,"concurrency":1,"status":"Valid","total_tok_s":-5}],"decode":[]}`
	if _, err := ParseJSON(strings.NewReader(js), "m.json"); err == nil || !strings.Contains(err.Error(), "total_tok_s = -5") {
		t.Errorf("JSON: %v", err)
	}
}
