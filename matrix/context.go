package matrix

import "strings"

// Context fitting of llm-inference-bench: a decode request needs room for its output and a small
// margin, so the largest prompt is room = max_model_len - max_output - ContextMarginTokens; a
// nominal context above room (within 10 %) is trimmed to room and labelled by what it became
// (1,048,576 - 4,096 - 64 = 1,044,416 tokens, "1019K" in the seed). A prefill-only row asks for
// PrefillOutputTokens, so its room is max_model_len - 1 - 64 (1,048,511 for the "1024K" row).
// Package protocol applies the same rule (Protocol.Fit) with these values as its defaults; this
// file reads a published page, whose labels were made by it.
const (
	// ContextMarginTokens is the benchmark's margin below max_model_len (protocol's
	// margin_tokens default).
	ContextMarginTokens = 64
	// PrefillOutputTokens is the max_tokens of a prefill-only row's request.
	PrefillOutputTokens = 1
)

// ContextRoom is the longest prompt a request with output tokens may have: max_model_len -
// output - margin (<= 0: none).
func ContextRoom(maxModelLen, output, margin int) int { return maxModelLen - output - margin }

// LabelTokens returns the prompt tokens behind a context label of a row in phase, for a server
// with maxModelLen (0 = unknown) and a benchmark with maxOutputTokens (0 = unknown). Without
// maxModelLen it is the nominal label*1024. With it, the label that names the trimmed decode
// room ("1019K") maps to that room, and a nominal context above the phase's room is trimmed to it.
// Prefill rows of a decode context share the decode prompt (the scout request sends it).
func LabelTokens(label string, phase Phase, maxModelLen, maxOutputTokens int) (int, error) {
	nominal, err := ParseContext(label)
	if err != nil || maxModelLen <= 0 {
		return nominal, err
	}
	decodeRoom := ContextRoom(maxModelLen, maxOutputTokens, ContextMarginTokens)
	if maxOutputTokens > 0 && decodeRoom > 0 && isKLabel(label) && nominal/1024 == decodeRoom/1024 {
		return decodeRoom, nil
	}
	room := ContextRoom(maxModelLen, PrefillOutputTokens, ContextMarginTokens)
	if phase == Decode && maxOutputTokens > 0 {
		room = decodeRoom
	}
	if room > 0 && nominal > room {
		return room, nil
	}
	return nominal, nil
}

func isKLabel(label string) bool {
	t := strings.TrimSpace(label)
	return strings.HasSuffix(t, "K") || strings.HasSuffix(t, "k")
}
