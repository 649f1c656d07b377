package server

import (
	"bytes"
	"fmt"
	"testing"
)

// chunkReference is output.chunk written with encoding/json on vLLM's response types: what the
// fast encoder must write byte for byte.
func (o *output) chunkReference(b *bytes.Buffer, t taken) {
	from := o.tokens
	o.tokens = t.total
	text := outputText(o.vocab, o.seed, from, o.tokens)
	var reason *string
	if t.done && t.err == nil {
		reason = &t.reason
	}
	r := response{ID: o.id, Created: o.created, Model: o.model}
	if o.q.contUse {
		r.Usage = o.usage()
	}
	if o.chat {
		r.Object = "chat.completion.chunk"
		if !o.started {
			empty := ""
			first := r
			first.Choices = []chatChoice{{Delta: &chatDelta{Role: "assistant", Content: &empty}}}
			if o.q.contUse {
				first.Usage = &usageInfo{PromptTokens: o.q.prompt.tokens, TotalTokens: o.q.prompt.tokens}
			}
			writeEvent(b, first)
			o.started = true
		}
		r.Choices = []chatChoice{{Delta: &chatDelta{Content: &text}, FinishReason: reason}}
	} else {
		r.Object = "text_completion"
		r.Choices = []completionChoice{{Text: text, FinishReason: reason}}
	}
	writeEvent(b, r)
}

// TestChunkEncoding: the streamed chunks are what encoding/json writes for vLLM's chunk types,
// for completions and chat, with and without continuous usage, a finish reason, an error end, a
// model name and a vocabulary that need escaping.
func TestChunkEncoding(t *testing.T) {
	s, err := New(testConfig(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, chat := range []bool{false, true} {
		for _, contUse := range []bool{false, true} {
			for _, model := range []string{"test-model", `odd <"model"> & \ name`} {
				for _, vocab := range [][]string{words(), {"plain", `q"uote`, "<tag>", "é", "tab\t"}} {
					name := fmt.Sprintf("chat=%v/contUse=%v/model=%q/vocab=%d", chat, contUse, model, len(vocab))
					q := &request{chat: chat, model: model, stream: true, usage: true, contUse: contUse, maxTokens: 40, output: 40}
					q.prompt.tokens, q.prompt.hash = 123, 99
					fast, ref := newOutput(s, q, chat), newOutput(s, q, chat)
					fast.vocab, ref.vocab = vocab, vocab
					fast.plain = 0 // not known for this vocabulary
					ref.id, ref.created = fast.id, fast.created
					steps := []taken{{n: 1, total: 1}, {n: 3, total: 4}, {n: 2, total: 6, done: true, reason: "length"}}
					if contUse {
						steps[2] = taken{n: 2, total: 6, done: true, err: &apiError{status: 503}}
					}
					for i, st := range steps {
						var a, b bytes.Buffer
						a.WriteString("prefix ")
						b.WriteString("prefix ")
						fast.chunk(&a, st)
						ref.chunkReference(&b, st)
						if a.String() != b.String() {
							t.Errorf("%s: chunk %d:\n got %s\nwant %s", name, i, a.String(), b.String())
						}
					}
				}
			}
		}
	}
}
