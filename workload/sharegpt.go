package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"unicode/utf8"
)

// DefaultCharsPerToken is the characters-per-token ratio that estimates a ShareGPT turn's tokens
// when the file gives no count: about 4 for English text with BPE tokenizers of 32K-150K
// entries (OpenAI's rule of thumb; code and other languages run denser).
const DefaultCharsPerToken = 4.0

// MaxShareGPTBytes bounds a ShareGPT file (1 GiB: the public ShareGPT_V3_unfiltered_cleaned_split
// file is about 670 MB). The file is read as a stream, one conversation at a time.
const MaxShareGPTBytes = 1 << 30

// ErrTooLarge is returned when an input is larger than its reader accepts.
var ErrTooLarge = errors.New("file too large")

// ShareGPTPair is one conversation's first two turns as token counts: the prompt and the reply,
// as tokenizer(text).input_ids counts them (special tokens included: vLLM's ShareGPT sampling
// counts the reply that way too).
type ShareGPTPair struct {
	PromptTokens int
	ReplyTokens  int
	// Estimated is true when a count came from characters rather than the file.
	Estimated bool
}

// ShareGPTOptions tune ParseShareGPT.
type ShareGPTOptions struct {
	// CharsPerToken estimates tokens from characters (Unicode code points, as Python's len):
	// ceil(chars / CharsPerToken) + SpecialTokens. Default DefaultCharsPerToken.
	CharsPerToken float64
	SpecialTokens int
	// MaxBytes bounds the input (default MaxShareGPTBytes).
	MaxBytes int64
}

// limitedReader returns ErrTooLarge once more than n bytes have been read.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if l.n < 0 {
		return k, ErrTooLarge
	}
	return k, err
}

// sgTurn is one turn of a conversation. NumTokens, when present, is taken as the turn's token
// count instead of the character estimate.
type sgTurn struct {
	Value     *string `json:"value"`
	NumTokens *int    `json:"num_tokens"`
}

// ParseShareGPT reads a ShareGPT file: a JSON list of entries {"conversations": [{"from": ...,
// "value": text}, ...], ...}. Like vLLM's ShareGPTDataset it keeps the entries with at least two
// turns and takes the first two (prompt, reply) whoever speaks them. A turn's token count is its
// "num_tokens" field when present, else estimated from its characters (ShareGPTOptions). The
// file is decoded one entry at a time; the texts are not kept.
func ParseShareGPT(r io.Reader, name string, opt ShareGPTOptions) ([]ShareGPTPair, error) {
	if opt.CharsPerToken == 0 {
		opt.CharsPerToken = DefaultCharsPerToken
	}
	if opt.MaxBytes == 0 {
		opt.MaxBytes = MaxShareGPTBytes
	}
	if !(opt.CharsPerToken > 0) || math.IsInf(opt.CharsPerToken, 0) {
		return nil, fmt.Errorf("%s: chars per token %v: must be positive", name, opt.CharsPerToken)
	}
	dec := json.NewDecoder(&limitedReader{r: r, n: opt.MaxBytes})
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...))
	}
	wrap := func(err error, where string) error {
		if errors.Is(err, ErrTooLarge) {
			return fail("larger than %d bytes: servesim refuses ShareGPT files above that size", opt.MaxBytes)
		}
		return fail("%s (byte %d): %v", where, dec.InputOffset(), err)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, fail("empty file: want a JSON list of conversations")
		}
		return nil, wrap(err, "not JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fail("want a JSON list of conversations [{\"conversations\": [...]}, ...], got %v", tok)
	}
	count := func(t sgTurn, entry, turn int) (int, bool, error) {
		if t.NumTokens != nil {
			if *t.NumTokens < 0 || *t.NumTokens > maxTokens {
				return 0, false, fail("entry %d, turn %d: num_tokens %d: want 0..%d", entry, turn, *t.NumTokens, maxTokens)
			}
			return *t.NumTokens, false, nil
		}
		if t.Value == nil {
			return 0, false, fail("entry %d, turn %d: no \"value\" (the turn's text) and no \"num_tokens\"", entry, turn)
		}
		chars := utf8.RuneCountInString(*t.Value)
		return int(math.Ceil(float64(chars)/opt.CharsPerToken)) + opt.SpecialTokens, true, nil
	}
	var out []ShareGPTPair
	for i := 0; dec.More(); i++ {
		var raw struct {
			Conversations *[]sgTurn `json:"conversations"`
		}
		if err := dec.Decode(&raw); err != nil {
			return nil, wrap(err, fmt.Sprintf("entry %d", i))
		}
		if raw.Conversations == nil || len(*raw.Conversations) < 2 {
			continue // vLLM keeps only entries with at least two turns
		}
		c := *raw.Conversations
		p, e1, err := count(c[0], i, 0)
		if err != nil {
			return nil, err
		}
		o, e2, err := count(c[1], i, 1)
		if err != nil {
			return nil, err
		}
		if len(out) >= MaxRequests {
			return nil, fail("more than %d conversations", MaxRequests)
		}
		out = append(out, ShareGPTPair{PromptTokens: p, ReplyTokens: o, Estimated: e1 || e2})
	}
	if _, err := dec.Token(); err != nil {
		return nil, wrap(err, "end of the list")
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fail("data after the list of conversations (byte %d)", dec.InputOffset())
		}
		return nil, wrap(err, "after the list")
	}
	if len(out) == 0 {
		return nil, fail("no conversation with at least two turns")
	}
	return out, nil
}

// ShareGPTSample are the sampling flags of vllm bench's ShareGPT dataset.
type ShareGPTSample struct {
	N              int
	Seed           uint64
	OutputLen      int // --sharegpt-output-len (0: the reply's length)
	DisableShuffle bool
	NoOversample   bool
}

// PCG streams of the ShareGPT sampling.
const (
	streamShuffle    = 0x73687566666c65 // "shuffle"
	streamOversample = 0x6f766572736d70 // "oversmp"
)

// validShareGPT is vLLM's is_valid_sequence: prompt >= 4 and <= 1024 tokens, prompt + output <=
// 2048, output >= 4 unless the output length is fixed.
func validShareGPT(prompt, output int, fixed bool) bool {
	return prompt >= 4 && (fixed || output >= 4) && prompt <= 1024 && prompt+output <= 2048
}

// SampleShareGPT picks N prompts as vLLM's ShareGPTDataset does: shuffle the conversations
// (seeded; unless DisableShuffle), walk them keeping those that pass is_valid_sequence until N are
// kept, then top up with seeded random duplicates of the kept ones (unless NoOversample).
// Duplicates have the same content, so they hit the prefix cache. The shuffle and the draws use
// math/rand/v2 PCG streams seeded with Seed, not Python's random: the same distributions, not the
// same picks.
func SampleShareGPT(pairs []ShareGPTPair, s ShareGPTSample) ([]BenchPrompt, []string, error) {
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	if !s.DisableShuffle {
		rng := rand.New(rand.NewPCG(s.Seed, streamShuffle))
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	}
	fixed := s.OutputLen > 0
	var out []BenchPrompt
	estimated := 0
	for _, i := range order {
		if len(out) >= s.N {
			break
		}
		p := pairs[i]
		o := p.ReplyTokens
		if fixed {
			o = s.OutputLen
		}
		if !validShareGPT(p.PromptTokens, o, fixed) {
			continue
		}
		out = append(out, BenchPrompt{Tokens: p.PromptTokens, OutputTokens: max(o, 1), Group: i + 1})
		if p.Estimated {
			estimated++
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("sharegpt: none of the %d conversations passes vLLM's filters (prompt 4..1024 tokens, prompt + output <= 2048, output >= 4)", len(pairs))
	}
	var notes []string
	if estimated > 0 {
		notes = append(notes, fmt.Sprintf("sharegpt: %d of %d prompts have token counts estimated from characters (no tokenizer in servesim; see --chars-per-token)", estimated, len(out)))
	}
	if kept := len(out); kept < s.N {
		if s.NoOversample {
			notes = append(notes, fmt.Sprintf("sharegpt: only %d conversations pass the filters; --no-oversample keeps %d prompts", kept, kept))
		} else {
			rng := rand.New(rand.NewPCG(s.Seed, streamOversample))
			for len(out) < s.N {
				out = append(out, out[rng.IntN(kept)])
			}
			notes = append(notes, fmt.Sprintf("sharegpt: %d conversations pass the filters; topped up to %d with duplicates (prefix-cache hits)", kept, s.N))
		}
	}
	return out, notes, nil
}
