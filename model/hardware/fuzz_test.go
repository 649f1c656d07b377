package hardware

import (
	"testing"

	"github.com/servesim/servesim/model/arch"
)

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
			c.GPUs[i].PeakFLOPS(arch.NVFP4)
		}
	})
}
