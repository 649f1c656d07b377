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
