package arch

import (
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, n := range BuiltinNames() {
		data, err := dataFS.ReadFile("data/models/" + n + ".toml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name = \"x\"\nhidden = 64\nvocab = 10\n[[layers]]\ncount = 1\n[layers.attention]\nkind = \"gqa\"\nheads = 2\nkv_heads = 1\nhead_dim = 8\n[layers.ffn]\nkind = \"dense\"\nintermediate = 16\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data, "fuzz.toml")
		if err != nil {
			return
		}
		a.Params()
		a.WeightDTypes()
	})
}
