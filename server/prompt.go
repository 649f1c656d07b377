package server

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/servesim/servesim/sim"
)

// prompt is a request's prompt reduced to what the simulation needs: its length in tokens and
// a fingerprint of every full KV-cache block, from which the loop derives the content ids the
// engine's prefix cache compares (contentIndex).
type prompt struct {
	tokens int
	// hash fingerprints the whole prompt; blocks[i] the prompt's first (i+1) x blockSize tokens
	// (chained: equal values mean equal leading content).
	hash   uint64
	blocks []uint64
}

// mix64 is a 64-bit hash combiner (a splitmix64 round over a and b).
func mix64(a, b uint64) uint64 {
	x := a ^ (b + 0x9e3779b97f4a7c15 + (a << 6) + (a >> 2))
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// promptBuilder fingerprints a token sequence as it is produced, one token at a time.
type promptBuilder struct {
	blockSize int
	p         prompt
	block     uint64 // running hash of the current block
	chain     uint64 // hash of the blocks before it
}

func newPromptBuilder(blockSize int) *promptBuilder {
	return &promptBuilder{blockSize: max(blockSize, 1), chain: 0x5e5e}
}

func (b *promptBuilder) add(tok uint64) {
	b.block = mix64(b.block, tok+1)
	b.p.tokens++
	if b.p.tokens%b.blockSize == 0 {
		b.chain = mix64(b.chain, b.block)
		b.p.blocks = append(b.p.blocks, b.chain)
		b.block = 0
	}
}

func (b *promptBuilder) finish() prompt {
	b.p.hash = mix64(mix64(b.chain, b.block), uint64(b.p.tokens))
	return b.p
}

// tokenIDPrompt fingerprints a prompt given as token ids: its length is exact.
func tokenIDPrompt(ids []int64, blockSize int) prompt {
	b := newPromptBuilder(blockSize)
	for _, id := range ids {
		b.add(uint64(id))
	}
	return b.finish()
}

// textTokens is servesim's stand-in for a tokenizer: a text is ceil(characters / charsPerToken)
// tokens, token i being the i-th run of charsPerToken characters (Unicode code points). It is
// deterministic and close to the 3.5-4.5 characters per token of English text under the BPE
// tokenizers of current models; it knows nothing of a model's vocabulary or special tokens.
func textTokens(text string, charsPerToken float64) int {
	n := utf8.RuneCountInString(text)
	return int(math.Ceil(float64(n) / charsPerToken))
}

// textPrompt fingerprints a text prompt tokenised by textTokens's rule.
func textPrompt(text string, charsPerToken float64, blockSize int) prompt {
	b := newPromptBuilder(blockSize)
	n := utf8.RuneCountInString(text)
	tokens := int(math.Ceil(float64(n) / charsPerToken))
	// Token i covers characters [floor(i c), floor((i+1) c)), so the count is exactly tokens.
	var h uint64
	next, tok, at := 0, 0, 0
	if tokens > 0 {
		next = int(math.Floor(charsPerToken))
	}
	for _, r := range text {
		h = mix64(h, uint64(r))
		at++
		if at >= next && tok < tokens {
			b.add(h)
			h = 0
			tok++
			next = int(math.Floor(float64(tok+1) * charsPerToken))
		}
	}
	for tok < tokens {
		b.add(h)
		h = 0
		tok++
	}
	return b.finish()
}

// chatText renders chat messages as the prompt a chat template would make of them: each message
// as "<|role|>\n" + its text + "\n", then "<|assistant|>\n" for the reply (the generation
// prompt). Real templates differ by model; this one is stated and deterministic.
func chatText(msgs []chatMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|")
		b.WriteString(m.Role)
		b.WriteString("|>\n")
		b.WriteString(m.text)
		b.WriteString("\n")
	}
	b.WriteString("<|assistant|>\n")
	return b.String()
}

// contentIndex gives each prompt the content ids the engine's prefix cache compares
// (sim.RequestSpec's PromptID, PrefixID and PrefixTokens), from the blocks of the prompts seen
// before. The engine names a prompt by one id for a shared leading part and one for the rest; a
// block of an earlier prompt is cached under the id it carried then. So a new prompt's shared part
// is the longest run of its leading blocks that an earlier prompt registered under one id, and it
// takes that id as its PrefixID: its blocks then hash as the earlier prompt's did, and hit if they
// are still cached. Its remaining blocks are registered under its own PromptID (a hash of the
// whole prompt, so identical prompts have equal ids). Prompts that share a prefix with a
// prompt that itself had one (three levels) share only the first level. The index is bounded: two
// generations of at most maxBlocks entries, the older dropped when the newer fills (prompts seen
// long ago then share nothing, as evicted blocks would not hit anyway).
type contentIndex struct {
	blockSize int
	blocks    genMap // chained block hash -> the content id its block was registered under
	prompts   genMap // whole-prompt hash -> 1: prompts seen
}

func newContentIndex(blockSize, maxBlocks int) *contentIndex {
	return &contentIndex{blockSize: max(blockSize, 1), blocks: newGenMap(maxBlocks), prompts: newGenMap(maxBlocks / 16)}
}

// genMap is a map bounded to two generations of at most n entries: when the newer fills, the
// older is dropped.
type genMap struct {
	n          int
	young, old map[uint64]uint64
}

func newGenMap(n int) genMap {
	return genMap{n: max(n, 1), young: map[uint64]uint64{}, old: map[uint64]uint64{}}
}

func (g *genMap) get(k uint64) (uint64, bool) {
	if v, ok := g.young[k]; ok {
		return v, true
	}
	v, ok := g.old[k]
	return v, ok
}

func (g *genMap) put(k, v uint64) {
	if len(g.young) >= g.n {
		g.old, g.young = g.young, make(map[uint64]uint64, len(g.young))
	}
	g.young[k] = v
}

// spec fills the content fields of a request for prompt p and registers its blocks. Its Tag is
// repeatedTag when the same prompt was seen before (batchCost).
func (x *contentIndex) spec(p *prompt) sim.RequestSpec {
	s := sim.RequestSpec{PromptTokens: p.tokens, PromptID: p.hash | 1} // never 0
	if _, ok := x.prompts.get(p.hash); ok {
		s.Tag = repeatedTag
	} else {
		x.prompts.put(p.hash, 1)
	}
	shared := 0
	if len(p.blocks) > 0 {
		if first, ok := x.blocks.get(p.blocks[0]); ok {
			shared = 1
			for shared < len(p.blocks) {
				id, ok := x.blocks.get(p.blocks[shared])
				if !ok || id != first {
					break
				}
				shared++
			}
			s.PrefixID, s.PrefixTokens = first, shared*x.blockSize
		}
	}
	for i := range p.blocks {
		id := s.PromptID
		if i < shared {
			id = s.PrefixID
		}
		x.blocks.put(p.blocks[i], id)
	}
	return s
}

// words are the synthetic output's vocabulary: token i of a reply is one of them, with a leading
// space, chosen by a hash of the prompt and i (so a prompt always gets the same reply, as with
// greedy decoding).
func words() []string {
	return []string{"the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
		"not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were",
		"their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would", "who", "so",
		"no", "time", "model", "token", "server", "cache", "batch", "step", "queue", "engine", "prompt", "stream", "request", "reply", "simulated", "vLLM"}
}

// outputText is the text of a reply's tokens [from, to).
func outputText(vocab []string, seed uint64, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteByte(' ')
		b.WriteString(vocab[mix64(seed, uint64(i))%uint64(len(vocab))])
	}
	return b.String()
}

// eosLength is the output-length model for a request that does not ignore EOS: the reply ends
// with EOS after L tokens, L geometric with mean meanTokens (a fixed probability 1 / meanTokens
// that each token is the last), drawn from a hash of the prompt and the server's seed, so a
// prompt always gets the same length. 0 means no EOS.
func eosLength(meanTokens int, seed, promptHash uint64) int {
	if meanTokens <= 0 {
		return 0
	}
	if meanTokens == 1 {
		return 1
	}
	u := (float64(mix64(seed^0xe05, promptHash)>>11) + 0.5) / (1 << 53) // uniform in (0, 1)
	l := 1 + math.Floor(math.Log(u)/math.Log1p(-1/float64(meanTokens)))
	if l > 1<<30 {
		return 1 << 30
	}
	return int(l)
}
