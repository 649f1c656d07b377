package kvcache

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
)

// GroupKind mirrors arch.KVSpecKind for a KV-cache group.
type GroupKind = arch.KVSpecKind

// Group is one KV-cache group: up to GroupSize layers of one spec that allocate blocks together.
// Every group draws its blocks from the same pool (vLLM's unified page size).
type Group struct {
	Spec        int // index into Layout.Specs
	Kind        GroupKind
	Layers      int // real layers in the group (the rest of GroupSize is padding)
	BlockTokens int // tokens per block for attention groups; the unified block size for state groups
	Window      int // sliding window, tokens
}

// Layout is the KV-cache configuration vLLM derives at start-up (kv_cache_utils.py).
type Layout struct {
	Specs []arch.KVSpec
	// BlockSize is the main attention block size in tokens (what the engine logs).
	BlockSize int
	// PageBytes is the unified per-layer page size in bytes.
	PageBytes float64
	// GroupSize is the number of layer slots per group; a block spans GroupSize pages.
	GroupSize int
	Groups    []Group
	// AvailableBytes is the per-GPU memory given to the KV cache.
	AvailableBytes float64
	NumBlocks      int
	// Speculative tokens (k) and the engine limits the layout was built for.
	SpecTokens          int
	MaxModelLen         int
	MaxNumBatchedTokens int
	PrefixCaching       bool
	// BlocksPerRequestMax is blocks(max_model_len); MaxConcurrency = NumBlocks / that.
	BlocksPerRequestMax int
	MaxConcurrency      float64
	// KVCacheSizeTokens is int(MaxConcurrency x max_model_len), as the server reports it.
	KVCacheSizeTokens int
	Hybrid            bool
}

// Options are the engine settings that shape the layout.
type Options struct {
	BlockSize           int // 0 = automatic
	SpecTokens          int
	MaxModelLen         int
	MaxNumBatchedTokens int
	PrefixCaching       bool
	// GroupsByTarget: the group size comes from the target model's layers alone, and a
	// separate drafter's layers (KVSpec.Drafter) fill groups of that size
	// (deploy.EngineConfig.KVGroupsByTarget); otherwise from every kind, the drafter's included,
	// as vLLM does.
	GroupsByTarget bool
	// SizedBy names the setting that sized the cache, for the advice when a max_model_len
	// request does not fit ("" = gpu_memory_utilization; kv_cache_memory_bytes when that is set).
	SizedBy string
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// NewLayout derives groups, block size and the number of blocks from per-GPU specs and the
// memory available for the KV cache, as vllm/v1/core/kv_cache_utils.py does (see doc.go):
//
//   - one kind everywhere: one group holding every layer, num_blocks = available // (page x layers);
//   - several kinds: G = the smallest layer count among kinds (or the largest when all are within
//     25 % of each other), each kind split into ceil(n/G) groups padded to G layers, and
//     num_blocks = available // (page x G); with Options.GroupsByTarget, G counts the target's
//     kinds only and a separate drafter's layers fill groups of G;
//   - with recurrent-state layers the attention block is raised until an attention page holds a
//     state page (aligned to the kernel's block multiple) and state pages are padded to it.
func NewLayout(specs []arch.KVSpec, available float64, o Options) (*Layout, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("kvcache: model has no KV-cache layers")
	}
	if o.MaxModelLen <= 0 {
		return nil, fmt.Errorf("kvcache: max_model_len = %d: must be positive", o.MaxModelLen)
	}
	l := &Layout{Specs: specs, AvailableBytes: available, SpecTokens: o.SpecTokens, MaxModelLen: o.MaxModelLen,
		MaxNumBatchedTokens: o.MaxNumBatchedTokens, PrefixCaching: o.PrefixCaching}

	// Main attention spec: the token-indexed spec with the most layers.
	main := -1
	var stateBytes float64
	for i, s := range specs {
		if s.Kind == arch.SpecState {
			l.Hybrid = true
			stateBytes = math.Max(stateBytes, s.StateBytes)
			continue
		}
		if main < 0 || s.Layers > specs[main].Layers {
			main = i
		}
	}
	if main < 0 {
		// Pure recurrent model: blocks are state pages; tokens per block is nominal.
		l.BlockSize = o.MaxModelLen
		l.PageBytes = stateBytes
	} else {
		m := specs[main]
		b := o.BlockSize
		if b == 0 {
			b = 16
			if m.AlignTokens > b {
				b = m.AlignTokens
			}
		}
		if l.Hybrid && float64(b)*m.BytesPerToken < stateBytes {
			need := int(math.Ceil(stateBytes / m.BytesPerToken))
			b = roundUp(need, 16)
		}
		l.BlockSize = b
		l.PageBytes = float64(b) * m.BytesPerToken
	}

	// Group size.
	minN, maxN, kinds := math.MaxInt, 0, 0
	for _, s := range specs {
		if o.GroupsByTarget && s.Drafter {
			continue
		}
		minN = min(minN, s.Layers)
		maxN = max(maxN, s.Layers)
		kinds++
	}
	if kinds == 0 {
		// Nothing but a drafter's layers: they set the size.
		for _, s := range specs {
			minN, maxN = min(minN, s.Layers), max(maxN, s.Layers)
		}
		kinds = len(specs)
	}
	g := minN
	if float64(maxN) < float64(minN)*1.25 {
		g = maxN
	}
	if kinds == 1 {
		g = maxN
	}
	l.GroupSize = g
	for i, s := range specs {
		bt := l.BlockSize
		if s.Kind != arch.SpecState && i != main {
			bt = secondaryBlockTokens(l.BlockSize, l.PageBytes, s.BytesPerToken)
			if bt < 1 {
				return nil, fmt.Errorf("kvcache: layer kind %s needs %.0f bytes per token, more than the %.0f-byte page", s.Name, s.BytesPerToken, l.PageBytes)
			}
		}
		for left := s.Layers; left > 0; left -= g {
			l.Groups = append(l.Groups, Group{Spec: i, Kind: s.Kind, Layers: min(left, g), BlockTokens: bt, Window: s.Window})
		}
	}
	blockBytes := l.PageBytes * float64(g)
	if available <= 0 {
		return l, fmt.Errorf("kvcache: %.2f GiB available for the KV cache: the model does not fit", available/(1<<30))
	}
	l.NumBlocks = int(available / blockBytes)
	l.BlocksPerRequestMax = l.BlocksFor(o.MaxModelLen)
	if l.NumBlocks < l.BlocksPerRequestMax {
		// vLLM refuses to start when one max-length request does not fit.
		l.MaxConcurrency = float64(l.NumBlocks) / float64(l.BlocksPerRequestMax)
		l.KVCacheSizeTokens = int(l.MaxConcurrency * float64(o.MaxModelLen))
		knob := o.SizedBy
		if knob == "" {
			knob = "gpu_memory_utilization"
		}
		return l, fmt.Errorf("kvcache: %d blocks hold %d tokens, less than one request of max_model_len %d (needs %d blocks): lower max_model_len or raise %s",
			l.NumBlocks, l.KVCacheSizeTokens, o.MaxModelLen, l.BlocksPerRequestMax, knob)
	}
	l.MaxConcurrency = float64(l.NumBlocks) / float64(l.BlocksPerRequestMax)
	l.KVCacheSizeTokens = int(l.MaxConcurrency * float64(o.MaxModelLen))
	return l, nil
}

// StateBlocks is the number of blocks a recurrent-state group holds per running request: 2 + k in
// vLLM's "align" prefix-caching mode (current state, the one being written, one per draft), 1 + k
// without prefix caching.
func (l *Layout) StateBlocks() int {
	if l.PrefixCaching {
		return 2 + l.SpecTokens
	}
	return 1 + l.SpecTokens
}

// GroupBlocks is the number of blocks group g needs for a request holding tokens tokens.
func (l *Layout) GroupBlocks(g *Group, tokens int) int {
	switch g.Kind {
	case arch.SpecState:
		return l.StateBlocks()
	case arch.SpecSliding:
		full := cdiv(tokens, g.BlockTokens)
		win := cdiv(g.Window+l.MaxNumBatchedTokens, g.BlockTokens) + 1
		return min(full, win)
	}
	return cdiv(tokens, g.BlockTokens)
}

// BlocksFor is blocks(L): the blocks one request of L tokens holds over all groups.
func (l *Layout) BlocksFor(tokens int) int {
	n := 0
	for i := range l.Groups {
		n += l.GroupBlocks(&l.Groups[i], tokens)
	}
	return n
}

// PageTokens is the context the pool holds counted in pages of the main attention: num_gpu_blocks
// x block size over the groups the main attention layers fill (pages x page width, recurrent-state
// and other groups' blocks not charged).
func (l *Layout) PageTokens() int {
	n := 0
	for i := range l.Groups {
		g := &l.Groups[i]
		if g.Kind == arch.SpecFull && g.BlockTokens == l.BlockSize {
			n++
		}
	}
	if n == 0 {
		return l.KVCacheSizeTokens
	}
	return l.NumBlocks / n * l.BlockSize
}

// BytesPerToken is the per-GPU KV bytes one more token of context costs, counting group padding.
func (l *Layout) BytesPerToken() float64 {
	var b float64
	for i := range l.Groups {
		g := &l.Groups[i]
		if g.Kind == arch.SpecFull {
			b += l.PageBytes * float64(l.GroupSize) / float64(g.BlockTokens)
		}
	}
	return b
}

func cdiv(a, b int) int { return (a + b - 1) / b }

// secondaryBlockTokens is the block size of a token-indexed kind other than the main attention:
// its page must fit the unified page, and its block size must divide the main block size so that
// a prefix hit at a main-block boundary is also a boundary of this group (vLLM requires hit
// lengths that every group can represent). Smaller pages are padded.
func secondaryBlockTokens(main int, page, bytesPerToken float64) int {
	for r := 1; r <= main; r++ {
		if main%r == 0 && float64(main/r)*bytesPerToken <= page {
			return main / r
		}
	}
	return 0
}
