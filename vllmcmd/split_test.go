package vllmcmd

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"plain", "vllm serve m --port 8000", []string{"vllm", "serve", "m", "--port", "8000"}},
		{"blanks", " \t a \n b\r\n", []string{"a", "b"}},
		{"empty", "", nil},
		{"single quotes keep JSON", `--x '{"a": 1, "b": "c d"}'`, []string{"--x", `{"a": 1, "b": "c d"}`}},
		{"single quotes keep backslashes", `'a\nb'`, []string{`a\nb`}},
		{"double quotes", `"a b" "c\"d" "e\\f" "g\h" "\$HOME"`, []string{"a b", `c"d`, `e\f`, `g\h`, "$HOME"}},
		{"double quote continuation", "\"a\\\nb\"", []string{"ab"}},
		{"adjacent quoting joins", `a'b c'"d"e`, []string{"ab cde"}},
		{"empty quotes are a word", `a '' ""`, []string{"a", "", ""}},
		{"backslash escapes", `a\ b \'c\"`, []string{"a b", `'c"`}},
		{"continuation", "vllm serve m \\\n  --port 8000 \\\r\n  --host h", []string{"vllm", "serve", "m", "--port", "8000", "--host", "h"}},
		{"trailing backslash", "a b \\", []string{"a", "b"}},
		{"variables literal", `"$HOME/bin/vllm" ${A:-x y} $B`, []string{"$HOME/bin/vllm", "${A:-x y}", "$B"}},
		{"comment", "a # b c\nd e#f", []string{"a", "d", "e#f"}},
		{"operators are words", "a 2>&1 | tee log &", []string{"a", "2>&1", "|", "tee", "log", "&"}},
		{"angle placeholder", "--api-key <redacted>", []string{"--api-key", "<redacted>"}},
		{"unicode", "«a» 'é'", []string{"«a»", "é"}},
		{"invalid UTF-8 kept", "a\xff \"\xfe\"", []string{"a\xff", "\xfe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.in)
			if err != nil {
				t.Fatalf("Split(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`vllm serve --x '{"a":1}`, "unterminated single quote opened at column 16"},
		{`a "b`, "unterminated double quote opened at column 3"},
		{`é "b`, "unterminated double quote opened at column 3"},
		{"a \\\n  'b", "unterminated single quote opened at line 2, column 3"},
		{`a ${B`, "unterminated ${ opened at column 3"},
		{`"a\"`, "unterminated double quote opened at column 1"},
	} {
		_, err := Split(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Split(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}
