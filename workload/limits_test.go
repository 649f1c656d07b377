package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTraceLineLimit: one huge line in a trace is an error naming the file and the line after
// reading about a MiB of it (a 1 GiB line used to take 29 s and 4.3 GB before its error).
func TestTraceLineLimit(t *testing.T) {
	long := strings.Repeat("9", 8<<20)
	csvIn := "arrival_s,input_tokens,output_tokens\n0,100,10\n" + long + ",100,10\n"
	start := time.Now()
	_, err := ParseCSV(strings.NewReader(csvIn), "t.csv", TraceOptions{})
	if err == nil || err.Error() != "t.csv: line 3: longer than 1 MiB: servesim reads lines of at most that length" {
		t.Errorf("CSV: err = %v", err)
	}
	jsonIn := `{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10}` + "\n" + `{"arrival_s": ` + long + "}\n"
	_, err = ParseJSONL(strings.NewReader(jsonIn), "t.jsonl", TraceOptions{})
	if err == nil || !strings.Contains(err.Error(), "t.jsonl: line 2: longer than") {
		t.Errorf("JSONL: err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("rejecting the long lines took %v", d)
	}
}

// TestWorkloadFileLimit: a device (/dev/zero) as a workload or as its trace is refused at once,
// naming the file, rather than read without end.
func TestWorkloadFileLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Load("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: it is a character device, not a regular file") {
		t.Errorf("Load(/dev/zero): %v", err)
	}
	dir := t.TempDir()
	toml := filepath.Join(dir, "w.toml")
	if err := os.WriteFile(toml, []byte("kind = \"trace\"\n[trace]\nfile = \"/dev/zero\"\nformat = \"csv\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(toml)
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: it is a character device, not a regular file") {
		t.Errorf("trace /dev/zero: %v", err)
	}
}
