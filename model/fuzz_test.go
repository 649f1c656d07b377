package model

import (
	"testing"
)

func FuzzParseArch(f *testing.F) {
	for _, n := range BuiltinModels() {
		data, err := dataFS.ReadFile("data/models/" + n + ".toml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name = \"x\"\nhidden = 64\nvocab = 10\n[[layers]]\ncount = 1\n[layers.attention]\nkind = \"gqa\"\nheads = 2\nkv_heads = 1\nhead_dim = 8\n[layers.ffn]\nkind = \"dense\"\nintermediate = 16\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseArch(data, "fuzz.toml")
		if err != nil {
			return
		}
		a.Params()
		a.WeightDTypes()
	})
}

func FuzzParseCatalog(f *testing.F) {
	data, err := dataFS.ReadFile("data/gpus.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("[[gpu]]\nname = \"x\"\nmemory_gib = 1\nbandwidth_gbps = 1\nbf16_tflops = 1\nlink = \"pcie\"\nlink_gbps = 1\nlink_latency_us = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalog(data, "fuzz.toml")
		if err != nil {
			return
		}
		for i := range c.GPUs {
			if err := c.GPUs[i].Validate(); err != nil {
				t.Fatalf("parsed catalog has an invalid GPU: %v", err)
			}
			c.GPUs[i].PeakFLOPS(NVFP4)
		}
	})
}
