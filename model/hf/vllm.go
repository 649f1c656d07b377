package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/model/arch"
)

// LoadAs is Load with the model named name instead of after the file's directory (a Hugging
// Face cache snapshot is named by a commit hash, not by the model).
func LoadAs(path, name string) (*arch.Arch, error) {
	cfg, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	qpath := filepath.Join(filepath.Dir(path), "hf_quant_config.json")
	q, err := fsutil.ReadFile(qpath, fsutil.MaxConfigBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("hf: %w", err)
		}
		q = nil
	}
	return parse(cfg, q, name, path, qpath)
}

// lengthKeys are the config keys vLLM reads a model's context length from, in its order
// (vllm/config/model.py, _get_and_verify_max_len, possible_keys); the smallest one present wins.
func lengthKeys() []string {
	return []string{"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
		"max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"}
}

// defaultMaxLen is vLLM's max_model_len when the config names no length (a warning is logged).
const defaultMaxLen = 2048

// maxLenLimit bounds a derived length so that conversions cannot overflow.
const maxLenLimit = 1 << 40

// MaxModelLen is what vLLM derives from a config.json when --max-model-len is not given (vLLM
// vllm/config/model.py, _get_and_verify_max_len; multimodal configs read their text_config, as
// get_hf_text_config does):
//
//   - the smallest of the length keys present (max_position_embeddings, n_positions, max_seq_len,
//     seq_length, max_target_positions, max_sequence_length, max_seq_length, seq_len); a
//     model_max_length replaces it (Command-R, Cohere2); none: 2048;
//   - RoPE scaling (rope_scaling, or transformers 5's rope_parameters; "type" read as rope_type,
//     "su" as longrope): every rope_type except llama3, su and longrope multiplies the length by
//     its factor (default 1); yarn multiplies original_max_position_embeddings instead; Gemma 3
//     configs are already scaled and are left alone;
//   - longrope: the default is original_max_position_embeddings, while a user value up to the
//     length keys' value is accepted.
//
// defaultLen is the default, limit the largest value vLLM accepts without
// VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and rule says how they were derived.
func MaxModelLen(configJSON []byte) (defaultLen, limit int, rule string, err error) {
	top, err := object(configJSON)
	if err != nil {
		return 0, 0, "", err
	}
	cfg := top
	where := ""
	if raw, ok := top["text_config"]; ok && !isNull(raw) {
		if cfg, err = object(raw); err != nil {
			return 0, 0, "", fmt.Errorf("text_config: %w", err)
		}
		where = "text_config."
	}
	derived, key := math.Inf(1), ""
	for _, k := range lengthKeys() {
		v, ok, err := number(cfg, k)
		if err != nil {
			return 0, 0, "", fmt.Errorf("%s%w", where, err)
		}
		if ok && v < derived {
			derived, key = v, k
		}
	}
	if v, ok, err := number(cfg, "model_max_length"); err == nil && ok && v > 0 {
		derived, key = v, "model_max_length"
	}
	if math.IsInf(derived, 1) {
		return defaultMaxLen, defaultMaxLen, fmt.Sprintf("no length key in config.json (%s): vLLM's fallback %d", strings.Join(lengthKeys(), ", "), defaultMaxLen), nil
	}
	rule = fmt.Sprintf("%s%s %s", where, key, fmtLen(derived))
	limit64 := derived
	modelType, _ := str(cfg, "model_type")
	topType, _ := str(top, "model_type")
	rope, ropeKey, err := ropeScaling(cfg)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s%w", where, err)
	}
	switch {
	case rope == nil:
	case strings.Contains(modelType, "gemma3") || strings.Contains(topType, "gemma3"):
		rule += "; gemma3's length is already scaled by its RoPE factor"
	default:
		rt, _ := str(rope, "rope_type")
		if rt == "" {
			rt, _ = str(rope, "type")
		}
		if rt == "su" {
			rt = "longrope"
		}
		switch rt {
		case "", "default":
		case "llama3":
			rule += fmt.Sprintf("; %s rope_type %s is not scaled", ropeKey, rt)
		case "longrope":
			orig, ok, err := number(rope, "original_max_position_embeddings")
			if err == nil && !ok {
				orig, ok, err = number(cfg, "original_max_position_embeddings")
			}
			if err != nil {
				return 0, 0, "", fmt.Errorf("%s%s: %w", where, ropeKey, err)
			}
			if ok && orig > 0 {
				derived = orig
				rule += fmt.Sprintf("; longrope: the default is original_max_position_embeddings %s (up to %s accepted)", fmtLen(orig), fmtLen(limit64))
			}
		default:
			factor, ok, err := number(rope, "factor")
			if err != nil {
				return 0, 0, "", fmt.Errorf("%s%s: %w", where, ropeKey, err)
			}
			if !ok {
				factor = 1
			}
			if orig, ok, err := number(rope, "original_max_position_embeddings"); err != nil {
				return 0, 0, "", fmt.Errorf("%s%s: %w", where, ropeKey, err)
			} else if rt == "yarn" && ok {
				derived = orig
				rule = fmt.Sprintf("%s%s.original_max_position_embeddings %s x yarn factor %g", where, ropeKey, fmtLen(orig), factor)
			} else {
				rule += fmt.Sprintf(" x %s factor %g (rope_type %s)", ropeKey, factor, rt)
			}
			derived *= factor
			limit64 = derived
		}
	}
	if derived < 1 || derived > maxLenLimit || limit64 < 1 || limit64 > maxLenLimit {
		return 0, 0, "", fmt.Errorf("%sderived max_model_len %s: want 1..%d", where, fmtLen(derived), int64(maxLenLimit))
	}
	return int(derived), int(limit64), rule, nil
}

func object(raw []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("want a JSON object: %v", err)
	}
	if m == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// number reads a numeric member; absent or null is ok = false.
func number(m map[string]json.RawMessage, key string) (float64, bool, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("%s = %s: want a number", key, raw)
	}
	return f, true, nil
}

// str reads a string member; anything else is "".
func str(m map[string]json.RawMessage, key string) (string, bool) {
	var s string
	raw, ok := m[key]
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// ropeScaling returns the RoPE scaling object (rope_scaling, else rope_parameters), nil when
// absent or null.
func ropeScaling(cfg map[string]json.RawMessage) (map[string]json.RawMessage, string, error) {
	for _, k := range []string{"rope_scaling", "rope_parameters"} {
		raw, ok := cfg[k]
		if !ok || isNull(raw) {
			continue
		}
		m, err := object(raw)
		if err != nil {
			return nil, k, fmt.Errorf("%s: %w", k, err)
		}
		return m, k, nil
	}
	return nil, "", nil
}

func fmtLen(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}
