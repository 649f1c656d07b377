package server

import (
	"bytes"
	"fmt"
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
}

func newOutput(s *Server, q *request, chat bool) *output {
	n := s.ids.Add(1)
	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	return &output{q: q, chat: chat, id: fmt.Sprintf("%s%016x%016x", prefix, mix64(s.cfg.Seed, n), n), created: time.Now().Unix(),
		model: q.model, vocab: words(), seed: mix64(s.cfg.Seed, q.prompt.hash)}
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
func (o *output) chunk(b *bytes.Buffer, t taken) {
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
			// vLLM's first chunk carries the role, when the first output arrives.
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

// usageChunk appends the final usage event of stream_options.include_usage (no choices).
func (o *output) usageChunk(b *bytes.Buffer) {
	r := response{ID: o.id, Created: o.created, Model: o.model, Choices: []int{}, Usage: o.usage()}
	r.Object = "text_completion"
	if o.chat {
		r.Object = "chat.completion.chunk"
	}
	writeEvent(b, r)
}
