package hf

import (
	"bytes"
	"encoding/json"
	"math"
)

// maxModelLen is the max_model_len vLLM derives from the config (vllm/config/model.py,
// _get_and_verify_max_len): the smallest of the length keys present, replaced by model_max_length
// when that is set, 2,048 when none is; then, unless the RoPE scaling type is llama3, su or
// longrope, multiplied by the RoPE factor, starting from original_max_position_embeddings for
// yarn. rope_scaling is read, or transformers 5's rope_parameters when it is absent, with "type"
// standing for "rope_type" (vLLM's patch_rope_scaling).
func maxModelLen(r *reader, c *rawConfig) int {
	derived := math.Inf(1)
	for _, v := range []*float64{c.MaxPositionEmbeddings, c.NPositions, c.MaxSeqLen, c.SeqLength, c.ModelMaxLength,
		c.MaxTargetPositions, c.MaxSequenceLength, c.MaxSeqLength, c.SeqLen} {
		if v != nil {
			derived = math.Min(derived, *v)
		}
	}
	if c.ModelMaxLength != nil && *c.ModelMaxLength > 0 {
		derived = *c.ModelMaxLength
	}
	if math.IsInf(derived, 1) {
		derived = 2048
	}
	rope := bytes.TrimSpace(c.RopeScaling)
	if len(rope) == 0 || bytes.Equal(rope, []byte("null")) {
		rope = bytes.TrimSpace(c.RopeParameters)
	}
	var rs struct {
		RopeType *string  `json:"rope_type"`
		Type     *string  `json:"type"`
		Factor   *float64 `json:"factor"`
		Original *float64 `json:"original_max_position_embeddings"`
	}
	if len(rope) > 0 && rope[0] == '{' && json.Unmarshal(rope, &rs) == nil {
		t := ""
		switch {
		case rs.RopeType != nil:
			t = *rs.RopeType
		case rs.Type != nil:
			t = *rs.Type
		}
		switch t {
		case "su", "longrope", "llama3":
		default:
			if rs.Factor != nil {
				if t == "yarn" && rs.Original != nil {
					derived = *rs.Original
				}
				derived *= *rs.Factor
			}
		}
	}
	if !(derived >= 1 && derived <= 1<<31) {
		r.fail("max_model_len derived from the config = %g: want 1..%d", derived, 1<<31)
		return 0
	}
	return int(derived)
}

// mtpLayers is the number of multi-token-prediction layers: num_nextn_predict_layers (DeepSeek-V3,
// GLM), mtp_num_hidden_layers (Qwen3-Next, Qwen3.5), or num_mtp_modules when use_mtp
// (MiniMax-M2).
func mtpLayers(r *reader, c *rawConfig) int {
	switch {
	case c.NumNextnPredictLayers != nil:
		return r.check("num_nextn_predict_layers", *c.NumNextnPredictLayers, 0, maxLayers)
	case c.MTPNumHiddenLayers != nil:
		return r.check("mtp_num_hidden_layers", *c.MTPNumHiddenLayers, 0, maxLayers)
	case c.NumMTPModules != nil && flag(c.UseMTP):
		return r.check("num_mtp_modules", *c.NumMTPModules, 0, maxLayers)
	}
	return 0
}
