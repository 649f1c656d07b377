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
		"mi300x":                   "MI300X",
		"mi355x":                   "MI355X",
		"rtx-pro-6000-server":      "RTX-PRO-6000-Server",
		"rtx-pro-6000-workstation": "RTX-PRO-6000-Workstation",
		"b200":                     "B200",
		"b300":                     "B300",
		"l40s":                     "L40S",
		"rtx-5090":                 "RTX-5090",
	}
}

// findGPU resolves a corpus gpu name.
func findGPU(cat *hardware.Catalog, name string) (hardware.GPU, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if n, ok := corpusGPUs()[key]; ok {
		return cat.Find(n)
	}
	if g, err := cat.Find(name); err == nil {
		return g, nil
	}
	var known []string
	for k := range corpusGPUs() {
		known = append(known, k)
	}
	sort.Strings(known)
	return hardware.GPU{}, fmt.Errorf("gpu %q: not a corpus GPU name (%s) nor in the GPU catalog (`servesim hardware list`; add it with a [[gpu]] entry)",
		name, strings.Join(known, ", "))
}
