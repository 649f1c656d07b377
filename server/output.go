package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// output writes one request's reply in vLLM's response shapes (vllm/entrypoints/openai/protocol.py:
// CompletionResponse, CompletionStreamResponse, ChatCompletionResponse,
// ChatCompletionStreamResponse).
type output struct {
	q       *request
	chat    bool
	id      string
	created int64
	model   string
	vocab   []string
	seed    uint64 // the reply's text
	tokens  int    // tokens written so far
	started bool   // a chat stream's role chunk is out
	head    []byte // a chunk's JSON up to its choices (chunkHead)
	plain   int    // 1: the vocabulary's words need no JSON escaping; -1: they do; 0: not known yet
}

func newOutput(s *Server, q *request, chat bool) *output {
	n := s.ids.Add(1)
	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	return &output{q: q, chat: chat, id: fmt.Sprintf("%s%016x%016x", prefix, mix64(s.cfg.Seed, n), n), created: time.Now().Unix(),
		model: q.model, vocab: s.vocab, plain: s.vocabPlain, seed: mix64(s.cfg.Seed, q.prompt.hash)}
}

type usageInfo struct {
	PromptTokens        int  `json:"prompt_tokens"`
	TotalTokens         int  `json:"total_tokens"`
	CompletionTokens    int  `json:"completion_tokens"`
	PromptTokensDetails *int `json:"prompt_tokens_details"`
}

func (o *output) usage() *usageInfo {
	return &usageInfo{PromptTokens: o.q.prompt.tokens, CompletionTokens: o.tokens, TotalTokens: o.q.prompt.tokens + o.tokens}
}

type completionChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     *int    `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   *int    `json:"stop_reason"`
}

type chatMessageOut struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []int  `json:"tool_calls"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *chatDelta      `json:"delta,omitempty"`
	Logprobs     *int            `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
	StopReason   *int            `json:"stop_reason,omitempty"`
}

type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type response struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices any        `json:"choices"`
	Usage   *usageInfo `json:"usage,omitempty"`
}

// whole is the non-streaming response.
func (o *output) whole(reason string) response {
	text := outputText(o.vocab, o.seed, 0, o.tokens)
	r := response{ID: o.id, Created: o.created, Model: o.model, Usage: o.usage()}
	if o.chat {
		r.Object = "chat.completion"
		r.Choices = []chatChoice{{Message: &chatMessageOut{Role: "assistant", Content: text, ToolCalls: []int{}}, FinishReason: &reason}}
	} else {
		r.Object = "text_completion"
		r.Choices = []completionChoice{{Text: text, FinishReason: &reason}}
	}
	return r
}

// chunk appends the event of a delivery of t.n tokens (the last one carries the finish reason).
// It writes what encoding/json writes for vLLM's chunk shapes (the response, completionChoice,
// chatChoice, chatDelta and usageInfo types; a test holds the two equal) without reflection or
// allocation: a chunk is written for every delivery of every stream.
func (o *output) chunk(b *bytes.Buffer, t taken) {
	from := o.tokens
	o.tokens = t.total
	if o.head == nil {
		o.head = o.chunkHead()
	}
	buf := b.AvailableBuffer()
	if o.chat && !o.started {
		// vLLM's first chunk carries the role, when the first output arrives.
		buf = append(buf, "data: "...)
		buf = append(buf, o.head...)
		buf = append(buf, `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
		if o.q.contUse {
			buf = appendUsage(buf, o.q.prompt.tokens, 0)
		}
		buf = append(buf, "}\n\n"...)
		o.started = true
	}
	buf = append(buf, "data: "...)
	buf = append(buf, o.head...)
	if o.chat {
		buf = append(buf, `[{"index":0,"delta":{"content":`...)
		buf = o.appendText(buf, from, o.tokens)
		buf = append(buf, `},"logprobs":null,"finish_reason":`...)
		buf = appendReason(buf, t)
		buf = append(buf, "}]"...)
	} else {
		buf = append(buf, `[{"index":0,"text":`...)
		buf = o.appendText(buf, from, o.tokens)
		buf = append(buf, `,"logprobs":null,"finish_reason":`...)
		buf = appendReason(buf, t)
		buf = append(buf, `,"stop_reason":null}]`...)
	}
	if o.q.contUse {
		buf = appendUsage(buf, o.q.prompt.tokens, o.tokens)
	}
	buf = append(buf, "}\n\n"...)
	b.Write(buf)
}

// chunkHead is a chunk's JSON up to its choices: {"id":...,"object":...,"created":...,
// "model":...,"choices":
func (o *output) chunkHead() []byte {
	obj := "text_completion"
	if o.chat {
		obj = "chat.completion.chunk"
	}
	b := append([]byte(`{"id":`), marshalString(o.id)...)
	b = append(b, `,"object":`...)
	b = append(b, marshalString(obj)...)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, o.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, marshalString(o.model)...)
	return append(b, `,"choices":`...)
}

// appendText appends the JSON string of tokens [from, to) of the reply (outputText).
func (o *output) appendText(b []byte, from, to int) []byte {
	if o.plain == 0 {
		o.plain = -1
		if plainJSON(o.vocab) {
			o.plain = 1
		}
	}
	if o.plain < 0 {
		return append(b, marshalString(outputText(o.vocab, o.seed, from, to))...)
	}
	b = append(b, '"')
	for i := from; i < to; i++ {
		b = append(b, ' ')
		b = append(b, o.vocab[mix64(o.seed, uint64(i))%uint64(len(o.vocab))]...)
	}
	return append(b, '"')
}

func appendReason(b []byte, t taken) []byte {
	if t.done && t.err == nil {
		return append(b, marshalString(t.reason)...)
	}
	return append(b, "null"...)
}

// appendUsage appends a chunk's "usage" member (usageInfo).
func appendUsage(b []byte, prompt, completion int) []byte {
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	return append(b, `,"prompt_tokens_details":null}`...)
}

// plainJSON: every word is written by encoding/json as itself (printable ASCII without the
// characters it escapes).
func plainJSON(words []string) bool {
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if c := w[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
	}
	return true
}

func marshalString(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("server: encoding a string: %v", err))
	}
	return b
}

// usageChunk appends the final usage event of stream_options.include_usage (no choices).
func (o *output) usageChunk(b *bytes.Buffer) {
	r := response{ID: o.id, Created: o.created, Model: o.model, Choices: []int{}, Usage: o.usage()}
	r.Object = "text_completion"
	if o.chat {
		r.Object = "chat.completion.chunk"
	}
	writeEvent(b, r)
}
