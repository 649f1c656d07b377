package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servesim/servesim/model/hardware"
)

// corpusGPUs maps the corpus's gpu column to the GPU catalog (model/hardware). A name not in the
// table is looked up in the catalog as it is (names and aliases); a name the catalog does not know
// either is an error naming both lists.
func corpusGPUs() map[string]string {
	return map[string]string{
		"h100-sxm":                 "H100-SXM",
		"h100-sxm5":                "H100-SXM",
		"h200":                     "H200-SXM",
		"h200-sxm":                 "H200-SXM",
		"h800":                     "H800-SXM",
		"h20":                      "H20",
		"mi300x":                   "MI300X",
		"mi355x":                   "MI355X",
		"rtx-pro-6000-server":      "RTX-PRO-6000-Server",
		"rtx-pro-6000-workstation": "RTX-PRO-6000-Workstation",
		"rtx-pro-6000-maxq":        "RTX-PRO-6000-Max-Q",
		"b200":                     "B200",
		"b300":                     "B300",
		"l40s":                     "L40S",
		"rtx-5090":                 "RTX-5090",
	}
}

// corpusEdition is a corpus gpu name that is a catalog card run differently (README 1.6): a
// memory-clock offset ("-vram6000": an NVML offset of +6000 on the transfer rate), or a card whose
// edition the source leaves open.
type corpusEdition struct {
	base       string
	memOffset  float64 // MT/s on the transfer rate
	assumption string  // a note for the row
}

func corpusEditions() map[string]corpusEdition {
	return map[string]corpusEdition{
		"rtx-pro-6000-workstation-vram6000": {base: "RTX-PRO-6000-Workstation", memOffset: 6000},
		"rtx-pro-6000-maxq-vram6000":        {base: "RTX-PRO-6000-Max-Q", memOffset: 6000},
		"rtx-pro-6000-unstated": {base: "RTX-PRO-6000-Workstation",
			assumption: "gpu rtx-pro-6000-unstated: the source does not say which RTX PRO 6000 edition; taken as the Workstation card at stock clocks, the host's usual one"},
	}
}

// findGPU resolves a corpus gpu name, with a note when the row's card is assumed or derived.
func findGPU(cat *hardware.Catalog, name string) (hardware.GPU, string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if ed, ok := corpusEditions()[key]; ok {
		g, err := cat.Find(ed.base)
		if err != nil {
			return g, "", err
		}
		note := ed.assumption
		if ed.memOffset != 0 {
			if g, err = g.WithMemoryOffset(ed.memOffset); err != nil {
				return g, "", err
			}
			note = fmt.Sprintf("gpu %s: the %s with a memory-clock offset of +%g MT/s on its %g MT/s transfer rate: %.0f GB/s peak (the bandwidth scales with the rate; the row's measured gain is not read)",
				name, ed.base, ed.memOffset, g.MemoryRateMTps-ed.memOffset, g.BandwidthGBps)
		}
		return g, note, nil
	}
	if n, ok := corpusGPUs()[key]; ok {
		g, err := cat.Find(n)
		return g, "", err
	}
	if g, err := cat.Find(name); err == nil {
		return g, "", nil
	}
	var known []string
	for k := range corpusGPUs() {
		known = append(known, k)
	}
	for k := range corpusEditions() {
		known = append(known, k)
	}
	sort.Strings(known)
	return hardware.GPU{}, "", fmt.Errorf("gpu %q: not a corpus GPU name (%s) nor in the GPU catalog (`servesim hardware list`; add it with a [[gpu]] entry)",
		name, strings.Join(known, ", "))
}
