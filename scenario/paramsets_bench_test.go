package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/hardware"
)

// setsFile is a parameter file of n [[set]] tables, a third each at the gpu, engine and model
// level, for GPUs the catalog does not know (half without a generation, so each is looked up).
func setsFile(n int) []byte {
	var b strings.Builder
	gens := []string{"hopper", "", "ampere", ""}
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "[[set]]\nlevel = \"gpu\"\nkey = \"GPU-%07d\"\n", i)
			if g := gens[i%4]; g != "" {
				fmt.Fprintf(&b, "generation = %q\n", g)
			}
			b.WriteString("[set.params]\nmem_bw_eff = 0.8\n\n")
		case 1:
			fmt.Fprintf(&b, "[[set]]\nlevel = \"engine\"\nkey = \"vllm 0.%d.x (V1)\"\n[set.params]\nstep_overhead_us = 300\n\n", i)
		default:
			fmt.Fprintf(&b, "[[set]]\nlevel = \"model\"\nkey = \"model-%d\"\n[set.params]\nact_passes = 1\n\n", i)
		}
	}
	return []byte(b.String())
}

// BenchmarkParamsSets: reading a parameter file of 1,000 and 100,000 [[set]] tables and choosing
// the parameters of 200 deployments on the catalog's GPUs from it (a plan's sweep chooses once
// per row). Each choice must cost the same whatever the number of sets.
func BenchmarkParamsSets(b *testing.B) {
	r, err := Default().Resolve(ResolveOptions{})
	if err != nil {
		b.Fatal(err)
	}
	gpus := hardware.BuiltinCatalog().GPUs
	for _, n := range []int{1000, 100000} {
		path := filepath.Join(b.TempDir(), "sets.toml")
		if err := os.WriteFile(path, setsFile(n), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("sets=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pol, err := NewParamsPolicy(ResolveOptions{ParamsFile: path}, nil)
				if err != nil {
					b.Fatal(err)
				}
				d := *r.Deployment
				for i := range 200 {
					d.Hardware.GPU = gpus[i%len(gpus)]
					if _, err := pol.Choose(&d); err != nil {
						b.Fatal(err)
					}
				}
				_ = pol.Describe()
			}
		})
	}
}
