package tomlx

import (
	"errors"
	"strings"
	"testing"
)

func TestLineOf(t *testing.T) {
	data := []byte("seed = 1\n\n[engine]\nmax_num_seqs = 4 # c\n[engine.speculative]\nmethod = \"dflash\"\n[[layers]]\ncount = 3\n")
	for _, c := range []struct {
		key  string
		want int
	}{{"seed", 1}, {"engine.max_num_seqs", 4}, {"engine.speculative.method", 6}, {"layers.count", 8}, {"engine.nope", 0}} {
		if got := LineOf(data, c.key); got != c.want {
			t.Errorf("LineOf(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

func TestDecodeAndLocate(t *testing.T) {
	var v struct {
		Engine struct {
			MaxNumSeqs int `toml:"max_num_seqs"`
		} `toml:"engine"`
	}
	data := []byte("[engine]\nmax_num_seqs = 4\nbogus = 1\n")
	if _, err := Decode(data, "s.toml", &v, "see docs"); err == nil || err.Error() != `s.toml:3: unknown key "engine.bogus" (see docs)` {
		t.Errorf("err = %v", err)
	}
	if _, err := Decode([]byte("[engine\n"), "s.toml", &v, ""); err == nil || !strings.HasPrefix(err.Error(), "s.toml: line ") {
		t.Errorf("syntax err = %v", err)
	}
	err := Locate([]byte("[engine]\nmax_num_seqs = -4\n"), "s.toml", errors.New("engine.max_num_seqs = -4: must be positive"))
	if err.Error() != "s.toml:2: engine.max_num_seqs = -4: must be positive" {
		t.Errorf("Locate = %v", err)
	}
	if FieldOf("protocol.concurrency[0] = 0") != "protocol.concurrency" {
		t.Error("FieldOf")
	}
}

// TestNegativeUnsigned: seed = -1 into a uint64 is refused, naming the key and line, instead of
// wrapping to 18446744073709551615 (BurntSushi/toml converts it silently).
func TestNegativeUnsigned(t *testing.T) {
	type inner struct {
		Seed uint64 `toml:"seed"`
		N    int    `toml:"n"`
	}
	type doc struct {
		Seed  uint64  `toml:"seed"`
		Sub   inner   `toml:"sub"`
		List  []inner `toml:"list"`
		Plain int     `toml:"plain"`
	}
	cases := []struct{ in, want string }{
		{"seed = -1\n", `f.toml:1: seed = -1: want a non-negative integer`},
		{"plain = -3\n[sub]\nn = -2\nseed = -5\n", `f.toml:4: sub.seed = -5`},
		{"[[list]]\nseed = 1\n[[list]]\nseed = -7\n", `list.seed = -7`},
		{"sEed = -1\n", `f.toml:1: sEed = -1: want a non-negative integer`}, // keys match fields case-insensitively
	}
	for _, c := range cases {
		var d doc
		_, err := Decode([]byte(c.in), "f.toml", &d, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
	var d doc
	if _, err := Decode([]byte("seed = 7\nplain = -3\n[sub]\nn = -2\n"), "f.toml", &d, ""); err != nil || d.Seed != 7 || d.Plain != -3 {
		t.Errorf("valid document: %v, %+v", err, d)
	}
}

// FuzzDecode: strict decoding with the unsigned check never panics, and a document it accepts
// has no negative value in an unsigned field.
func FuzzDecode(f *testing.F) {
	f.Add("seed = 1\n[sub]\nseed = 2\n[[list]]\nseed = 3\n")
	f.Add("seed = -1\n")
	f.Add("[[list]]\nn = -2\nseed = -0\n")
	type inner struct {
		Seed uint64 `toml:"seed"`
		N    int    `toml:"n"`
	}
	type doc struct {
		Seed uint64            `toml:"seed"`
		Sub  inner             `toml:"sub"`
		List []inner           `toml:"list"`
		M    map[string]uint32 `toml:"m"`
		P    *inner            `toml:"p"`
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4096 {
			return
		}
		var d doc
		if _, err := Decode([]byte(in), "f.toml", &d, ""); err != nil {
			return
		}
		if d.Seed > 1<<63 || d.Sub.Seed > 1<<63 {
			t.Fatalf("%q: a negative seed wrapped around: %+v", in, d)
		}
		for _, e := range d.List {
			if e.Seed > 1<<63 {
				t.Fatalf("%q: a negative list seed wrapped around: %+v", in, d)
			}
		}
		if d.P != nil && d.P.Seed > 1<<63 {
			t.Fatalf("%q: %+v", in, d.P)
		}
	})
}
