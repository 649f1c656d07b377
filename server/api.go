package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// apiError is an error response as vLLM's OpenAI-compatible server writes it
// (vllm/entrypoints/openai/protocol.py, ErrorResponse and ErrorInfo):
//
//	{"error": {"message": "...", "type": "BadRequestError", "param": null, "code": 400}}
type apiError struct {
	status  int
	typ     string
	message string
	param   string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "BadRequestError", message: fmt.Sprintf(format, a...)}
}

func badParam(param, format string, a ...any) *apiError {
	e := badRequest(format, a...)
	e.param = param
	return e
}

type errorBody struct {
	Error errorInfo `json:"error"`
}

type errorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func (e *apiError) body() errorBody {
	b := errorBody{Error: errorInfo{Message: e.message, Type: e.typ, Code: e.status}}
	if e.param != "" {
		p := e.param
		b.Error.Param = &p
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("server: encoding a response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)+1))
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.status, e.body()) }

// writeDetail is the body FastAPI (which vLLM's server runs on) gives a request that reaches no
// route or the wrong method: {"detail": "Not Found"}.
func writeDetail(w http.ResponseWriter, status int) {
	writeJSON(w, status, map[string]string{"detail": http.StatusText(status)})
}

// streamOptions is the OpenAI stream_options object.
type streamOptions struct {
	IncludeUsage         *bool `json:"include_usage"`
	ContinuousUsageStats *bool `json:"continuous_usage_stats"`
}

// commonParams are the sampling fields both endpoints take.
type commonParams struct {
	Model         *string         `json:"model"`
	MaxTokens     *int64          `json:"max_tokens"`
	MinTokens     *int64          `json:"min_tokens"`
	IgnoreEOS     *bool           `json:"ignore_eos"`
	Stream        *bool           `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	N             *int64          `json:"n"`
	BestOf        *int64          `json:"best_of"`
	Echo          *bool           `json:"echo"`
	Logprobs      json.RawMessage `json:"logprobs"`
	TopLogprobs   *int64          `json:"top_logprobs"`
	PromptLogp    *int64          `json:"prompt_logprobs"`
	Suffix        *string         `json:"suffix"`
	// Every other field (temperature, top_p, seed, stop, ...) is accepted and has no effect: the
	// output is synthetic.
}

type completionRequest struct {
	commonParams
	Prompt json.RawMessage `json:"prompt"`
}

type chatRequest struct {
	commonParams
	Messages            []rawMessage `json:"messages"`
	MaxCompletionTokens *int64       `json:"max_completion_tokens"`
}

type rawMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type chatMessage struct {
	Role string
	text string
}

// request is a validated request, ready for the engine.
type request struct {
	chat    bool
	model   string
	prompt  prompt
	stream  bool
	usage   bool // stream_options.include_usage
	contUse bool // stream_options.continuous_usage_stats
	// maxTokens is what the request asked (or the default); output what it will generate: fewer
	// when the output-length model ends it with EOS first (then its finish_reason is "stop").
	maxTokens, output int
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, badRequest("Unsupported Media Type: Only 'application/json' is allowed")
		}
	} else {
		return nil, badRequest("Unsupported Media Type: Only 'application/json' is allowed")
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, typ: "BadRequestError",
				message: fmt.Sprintf("request body larger than %d bytes (servesim serve --max-body-bytes)", limit)}
		}
		return nil, badRequest("reading the request body: %v", err)
	}
	return data, nil
}

// decodeJSON decodes a request body into v, with the error vLLM's validation gives bad JSON.
func decodeJSON(data []byte, v any) *apiError {
	if len(bytes.TrimSpace(data)) == 0 {
		return badRequest("JSON decode error: empty request body")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// The field's path as the client wrote it, without the embedded struct's name.
			f := strings.TrimPrefix(te.Field, "commonParams.")
			return badParam(f, "%s: expected %s, got JSON %s", f, te.Type, te.Value)
		}
		return badRequest("JSON decode error: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("JSON decode error: extra data after the request object")
	}
	return nil
}

// limits are what validation needs from the server.
type limits struct {
	model         string
	maxModelLen   int
	vocab         int
	charsPerToken float64
	blockSize     int
	eosMean       int
	seed          uint64
}

// common checks the sampling fields and fills what they decide.
func (l *limits) common(c *commonParams, q *request, defaultMax int64, maxName string, maxTokens *int64) *apiError {
	if c.Model != nil && *c.Model != "" && *c.Model != l.model {
		return &apiError{status: http.StatusNotFound, typ: "NotFoundError", param: "model",
			message: fmt.Sprintf("The model `%s` does not exist.", *c.Model)}
	}
	q.model = l.model
	if c.N != nil && *c.N != 1 {
		if *c.N < 1 {
			return badParam("n", "n must be at least 1, got %d.", *c.N)
		}
		return badParam("n", "n = %d: servesim serves n = 1 only (one output per request)", *c.N)
	}
	if c.BestOf != nil && *c.BestOf > 1 {
		return badParam("best_of", "best_of = %d: servesim serves one output per request (best_of 1)", *c.BestOf)
	}
	if c.Echo != nil && *c.Echo {
		return badParam("echo", "echo: servesim does not echo prompts (its text is synthetic)")
	}
	if lp := bytes.TrimSpace(c.Logprobs); len(lp) > 0 && !bytes.Equal(lp, []byte("null")) && !bytes.Equal(lp, []byte("false")) {
		return badParam("logprobs", "logprobs: servesim computes no log-probabilities (its output is synthetic)")
	}
	if c.TopLogprobs != nil && *c.TopLogprobs > 0 || c.PromptLogp != nil {
		return badParam("logprobs", "logprobs: servesim computes no log-probabilities (its output is synthetic)")
	}
	if c.Suffix != nil && *c.Suffix != "" {
		return badParam("suffix", "suffix: servesim does not simulate insertion (suffix)")
	}
	q.stream = c.Stream != nil && *c.Stream
	if c.StreamOptions != nil {
		if !q.stream {
			return badParam("stream_options", "Stream options can only be defined when `stream=True`.")
		}
		q.usage = c.StreamOptions.IncludeUsage != nil && *c.StreamOptions.IncludeUsage
		q.contUse = c.StreamOptions.ContinuousUsageStats != nil && *c.StreamOptions.ContinuousUsageStats
	}
	n := q.prompt.tokens
	if n == 0 {
		return badParam("prompt", "The prompt cannot be empty.")
	}
	if n >= l.maxModelLen {
		return badParam("prompt", "This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", l.maxModelLen, n)
	}
	mt := defaultMax
	if maxTokens != nil {
		mt = *maxTokens
		if mt < 1 {
			return badParam(maxName, "max_tokens must be at least 1, got %d.", mt)
		}
		if mt > int64(l.maxModelLen-n) {
			return badParam(maxName, "'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d).",
				mt, l.maxModelLen, n, mt, l.maxModelLen, n)
		}
	}
	if mt <= 0 || mt > int64(l.maxModelLen-n) {
		mt = int64(l.maxModelLen - n)
	}
	q.maxTokens = int(mt)
	minT := 0
	if c.MinTokens != nil {
		if *c.MinTokens < 0 {
			return badParam("min_tokens", "min_tokens must be greater than or equal to 0, got %d.", *c.MinTokens)
		}
		if *c.MinTokens > mt {
			return badParam("min_tokens", "min_tokens must be less than or equal to max_tokens=%d, got %d.", mt, *c.MinTokens)
		}
		minT = int(*c.MinTokens)
	}
	q.output = q.maxTokens
	if c.IgnoreEOS == nil || !*c.IgnoreEOS {
		if eos := eosLength(l.eosMean, l.seed, q.prompt.hash); eos > 0 {
			q.output = min(q.maxTokens, max(eos, minT, 1))
		}
	}
	return nil
}

// completion validates a /v1/completions body.
func (l *limits) completion(data []byte) (*request, *apiError) {
	var c completionRequest
	if err := decodeJSON(data, &c); err != nil {
		return nil, err
	}
	q := &request{}
	p, err := l.completionPrompt(c.Prompt)
	if err != nil {
		return nil, err
	}
	q.prompt = p
	// vLLM's CompletionRequest.max_tokens defaults to 16.
	if err := l.common(&c.commonParams, q, 16, "max_tokens", c.MaxTokens); err != nil {
		return nil, err
	}
	return q, nil
}

// completionPrompt reads "prompt": a string, a list of one string, a list of token ids, or a list
// of one list of token ids.
func (l *limits) completionPrompt(raw json.RawMessage) (prompt, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return prompt{}, badParam("prompt", "prompt: missing (a string, or a list of token ids)")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return prompt{}, badParam("prompt", "prompt: %v", err)
		}
		return textPrompt(s, l.charsPerToken, l.blockSize), nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return prompt{}, badParam("prompt", "prompt: want a string, a list of strings, a list of token ids or a list of lists of token ids: %v", err)
		}
		if len(items) == 0 {
			return prompt{}, badParam("prompt", "The prompt cannot be empty.")
		}
		first := bytes.TrimSpace(items[0])
		if len(first) > 0 && (first[0] == '"' || first[0] == '[') {
			if len(items) > 1 {
				return prompt{}, badParam("prompt", "prompt: a batch of %d prompts; servesim serves one prompt per request", len(items))
			}
			return l.completionPrompt(first)
		}
		ids := make([]int64, len(items))
		for i, it := range items {
			if err := json.Unmarshal(it, &ids[i]); err != nil {
				return prompt{}, badParam("prompt", "prompt[%d]: want a token id (an integer), got %s", i, clip(it))
			}
			if ids[i] < 0 || l.vocab > 0 && ids[i] >= int64(l.vocab) {
				return prompt{}, badParam("prompt", "Token id %d is out of vocabulary (the model's vocabulary has %d tokens)", ids[i], l.vocab)
			}
		}
		return tokenIDPrompt(ids, l.blockSize), nil
	}
	return prompt{}, badParam("prompt", "prompt: want a string or a list of token ids, got %s", clip(raw))
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// chat validates a /v1/chat/completions body.
func (l *limits) chat(data []byte) (*request, *apiError) {
	var c chatRequest
	if err := decodeJSON(data, &c); err != nil {
		return nil, err
	}
	if len(c.Messages) == 0 {
		return nil, badParam("messages", "messages: missing or empty (a list of {\"role\", \"content\"})")
	}
	msgs := make([]chatMessage, len(c.Messages))
	for i, m := range c.Messages {
		switch m.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return nil, badParam("messages", "messages[%d].role %q: want system, developer, user, assistant or tool", i, m.Role)
		}
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badParam("messages", "messages[%d].content: %v", i, err)
		}
		msgs[i] = chatMessage{Role: m.Role, text: text}
	}
	q := &request{chat: true}
	q.prompt = textPrompt(chatText(msgs), l.charsPerToken, l.blockSize)
	mt := c.MaxCompletionTokens
	name := "max_completion_tokens"
	if mt == nil {
		mt, name = c.MaxTokens, "max_tokens"
	}
	// Without max_tokens vLLM lets a chat reply run to max_model_len.
	if err := l.common(&c.commonParams, q, 0, name, mt); err != nil {
		return nil, err
	}
	return q, nil
}

// messageText is a message's text: a string, or a list of {"type": "text", "text": ...} parts.
func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or a list of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", fmt.Errorf("part %d has type %q: servesim serves text only", i, p.Type)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}
