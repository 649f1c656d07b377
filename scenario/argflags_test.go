package scenario

import (
	"strings"
	"testing"
)

// FuzzSeedValue: a --seed that is accepted is never negative and reads back as itself.
func FuzzSeedValue(f *testing.F) {
	for _, s := range []string{"16,32,64", "0/8", "-1", "1e309", "NaN", "9223372036854775808", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a Args
		sd := SeedValue{&a}
		if err := sd.Set(s); err == nil {
			if strings.HasPrefix(strings.TrimSpace(s), "-") || !a.SeedSet {
				t.Fatalf("--seed %q accepted as %s", s, sd.String())
			}
			var b Args
			if err := (SeedValue{&b}).Set(sd.String()); err != nil || b.Seed != a.Seed || b.SeedSet != a.SeedSet {
				t.Fatalf("--seed %q: %s does not read back", s, sd.String())
			}
		}
	})
}
