package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
)

// SpaceText is a sweep as a command line gives it: the lists whose items are words (on/off,
// token counts such as 16K, off or k) as text, the others as values.
type SpaceText struct {
	MaxGPUs              int
	Counts, TP           []int
	EP                   []string
	MaxNumSeqs           []int
	MaxNumBatchedTokens  []string
	KVCacheDTypes        []string
	Spec                 []string
	SpecMethods          []string
	GPUMemoryUtilization []float64
	Weights              []string
	MaxModelLen          int
}

// TokenTexts writes token counts as SpaceText takes them.
func TokenTexts(v []int) []string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return s
}

// SpecTexts writes numbers of draft tokens as SpaceText takes them (0: off).
func SpecTexts(v []int) []string {
	s := make([]string, len(v))
	for i, k := range v {
		s[i] = strconv.Itoa(k)
		if k == 0 {
			s[i] = "off"
		}
	}
	return s
}

// Space reads the sweep; an error names the flag and the item.
func (t *SpaceText) Space() (Space, error) {
	sp := Space{MaxGPUs: t.MaxGPUs, Counts: t.Counts, TP: t.TP, MaxNumSeqs: t.MaxNumSeqs, KVCacheDTypes: t.KVCacheDTypes,
		SpecMethods: t.SpecMethods, GPUMemoryUtilization: t.GPUMemoryUtilization, Weights: t.Weights, MaxModelLen: t.MaxModelLen}
	for _, f := range t.EP {
		switch strings.ToLower(f) {
		case "on", "true", "1":
			sp.EP = append(sp.EP, true)
		case "off", "false", "0":
			sp.EP = append(sp.EP, false)
		default:
			return Space{}, fmt.Errorf("--ep: %q: want on, off or on,off", f)
		}
	}
	for _, f := range t.MaxNumBatchedTokens {
		v, err := matrix.ParseContext(strings.TrimSpace(f))
		if err != nil {
			return Space{}, fmt.Errorf("--max-num-batched-tokens: %q: want token counts such as 4096,8K,16K", f)
		}
		sp.MaxNumBatchedTokens = append(sp.MaxNumBatchedTokens, v)
	}
	for _, f := range t.Spec {
		if f == "off" || f == "0" {
			sp.SpecTokens = append(sp.SpecTokens, 0)
			continue
		}
		k, err := strconv.Atoi(strings.TrimPrefix(f, "k"))
		if err != nil || k < 1 {
			return Space{}, fmt.Errorf("--spec: %q: want off or a number of draft tokens (1..32)", f)
		}
		sp.SpecTokens = append(sp.SpecTokens, k)
	}
	for _, m := range sp.SpecMethods {
		if err := CheckSpecMethod(m); err != nil {
			return Space{}, fmt.Errorf("--%v", err)
		}
	}
	return sp, nil
}

// ParseShard reads "i/n" (0 <= i < n <= MaxShards).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n <= %d, such as 0/8 (Kubernetes: $JOB_COMPLETION_INDEX/8)", s, MaxShards)
	}
	return Shard{Index: i, Count: n}, nil
}
