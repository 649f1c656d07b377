package workload

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExampleTOML: the printed example loads as it is, gives the workload its comments say, and
// each commented-out kind's table parses once uncommented with its kind.
func TestExampleTOML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my-chat.toml")
	if err := os.WriteFile(path, []byte(ExampleTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatalf("the example does not load: %v", err)
	}
	if s.Name != "my-chat" || s.Kind != KindOpen || s.Open.RatePerS != 4 || s.Open.Requests != 600 || s.Lengths.InputTokens != 1024 ||
		s.SLO.TTFTms != 2000 || s.SLO.TPOTms != 40 || s.Seed != 7 {
		t.Errorf("example: %+v", s)
	}
	// Uncomment one kind's table (and drop the open loop's) and parse it.
	table := func(name string) string {
		re := regexp.MustCompile(`(?ms)^# \[` + name + `\]\n((?:# [^\n]*\n)+)`)
		m := re.FindStringSubmatch(ExampleTOML)
		if m == nil {
			t.Fatalf("no commented [%s] table", name)
		}
		var b strings.Builder
		b.WriteString("[" + name + "]\n")
		for _, l := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
			l = strings.TrimPrefix(l, "# ")
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	for _, c := range []struct{ kind, table, extra string }{
		{"closed", "closed", "[lengths]\ninput_tokens = 1024\noutput_tokens = 256\n"},
		{"bench", "bench", ""},
		{"vllm-bench", "vllm_bench", ""},
	} {
		doc := "kind = \"" + c.kind + "\"\n" + c.extra + table(c.table)
		if _, err := Parse([]byte(doc), c.kind+".toml"); err != nil {
			t.Errorf("the example's [%s] table, uncommented:\n%s\n%v", c.table, doc, err)
		}
	}
}
