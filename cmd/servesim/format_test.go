package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/usage"
	"github.com/spf13/pflag"
)

// TestFormatFlag: one list of formats drives --format's default, help, check and writing.
func TestFormatFlag(t *testing.T) {
	formats := []format[int]{
		{"table", func(w io.Writer, v int) error { _, err := fmt.Fprintf(w, "table %d", v); return err }},
		{"csv", func(w io.Writer, v int) error { _, err := fmt.Fprintf(w, "csv %d", v); return err }},
		{"yaml", func(w io.Writer, v int) error { _, err := fmt.Fprintf(w, "yaml %d", v); return err }},
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var f formatFlag[int]
	f.register(fs, formats)
	if u := fs.FlagUsages(); !strings.Contains(u, `--format format   output format: table, csv or yaml (default "table")`) {
		t.Errorf("help: %s", u)
	}
	for _, name := range []string{"table", "csv", "yaml"} {
		if err := fs.Parse([]string{"--format", name}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := f.write(&buf, 7); err != nil || buf.String() != name+" 7" {
			t.Errorf("%s: wrote %q, %v", name, buf.String(), err)
		}
	}
	if err := fs.Parse([]string{"--format", "xml"}); err != nil {
		t.Fatal(err)
	}
	var u *usage.Error
	if err := f.check(); !errors.As(err, &u) || err.Error() != `--format "xml": want table, csv or yaml` {
		t.Errorf("xml: %v, want a usage error listing the formats", err)
	}
}
