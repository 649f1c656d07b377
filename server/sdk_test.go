package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// sdkClient is the OpenAI Go SDK pointed at a test server.
func sdkClient(url string) openai.Client {
	return openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0),
		option.WithRequestTimeout(30*time.Second))
}

// TestOpenAISDK: the OpenAI Go SDK (a client servesim did not write) streams completions and
// chat completions with include_usage, sees several tokens in a chunk under speculative decoding
// (the seed's DFlash), gets the same text streamed as whole, and reads vLLM's errors as API
// errors with their status.
func TestOpenAISDK(t *testing.T) {
	r := serve(t, testConfig(t, 200))
	if seedServer(t).Deployment.Engine.SpecTokens() == 0 {
		t.Fatal("the seed has no speculative decoding: the multi-token chunk check does not apply")
	}
	c := sdkClient(r.url)
	ctx := context.Background()
	ignoreEOS := option.WithJSONSet("ignore_eos", true)
	params := openai.CompletionNewParams{
		Model:         "test-model",
		Prompt:        openai.CompletionNewParamsPromptUnion{OfString: openai.String("Tell me about the simulated engine.")},
		MaxTokens:     openai.Int(40),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	s := c.Completions.NewStreaming(ctx, params, ignoreEOS)
	var text strings.Builder
	chunks, multi, usage, finish := 0, 0, int64(-1), ""
	for s.Next() {
		ch := s.Current()
		if len(ch.Choices) == 0 {
			usage = ch.Usage.CompletionTokens
			continue
		}
		chunks++
		if strings.Count(ch.Choices[0].Text, " ") > 1 {
			multi++
		}
		text.WriteString(ch.Choices[0].Text)
		if ch.Choices[0].FinishReason != "" {
			finish = string(ch.Choices[0].FinishReason)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(text.String())); n != 40 || usage != 40 || finish != "length" {
		t.Errorf("streamed %d words, usage %d, finish %q; want 40, 40, length", n, usage, finish)
	}
	if multi == 0 || chunks >= 40 {
		t.Errorf("%d chunks for 40 tokens, %d with several tokens: want multi-token chunks under speculative decoding", chunks, multi)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	whole, err := c.Completions.New(ctx, params, ignoreEOS)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Choices[0].Text != text.String() || whole.Usage.CompletionTokens != 40 {
		t.Errorf("whole reply %q (%d tokens), streamed %q", whole.Choices[0].Text, whole.Usage.CompletionTokens, text.String())
	}

	cs := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:               "test-model",
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hello")},
		MaxCompletionTokens: openai.Int(30),
		StreamOptions:       openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, ignoreEOS)
	var acc openai.ChatCompletionAccumulator
	for cs.Next() {
		acc.AddChunk(cs.Current())
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || len(strings.Fields(acc.Choices[0].Message.Content)) != 30 || acc.Choices[0].FinishReason != "length" ||
		acc.Usage.CompletionTokens != 30 || acc.Usage.PromptTokens != 13 {
		t.Errorf("chat stream accumulated %+v, usage %+v", acc.Choices, acc.Usage)
	}

	_, err = c.Completions.New(ctx, openai.CompletionNewParams{Model: "no-such-model", Prompt: params.Prompt})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Type != "NotFoundError" || !strings.Contains(apiErr.Message, "no-such-model") {
		t.Errorf("unknown model: %v", err)
	}
	_, err = c.Completions.New(ctx, openai.CompletionNewParams{Model: "test-model", Prompt: params.Prompt, N: openai.Int(3)})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" {
		t.Errorf("n = 3: %v", err)
	}
}
