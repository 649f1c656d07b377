package hf

import (
	"os"
	"strings"
	"testing"
)

// TestMaxModelLen: vLLM's _get_and_verify_max_len on published configs and on the rule's corners.
func TestMaxModelLen(t *testing.T) {
	file := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		name, cfg  string
		def, limit int
		rule       string // a substring of the rule
	}{
		{"llama 3.1 (llama3 rope, not scaled)", file("testdata/llama-3.1-8b/config.json"), 131072, 131072, "rope_type llama3 is not scaled"},
		{"deepseek v3 (yarn: original x factor)", file("testdata/deepseek-v3/config.json"), 163840, 163840, "original_max_position_embeddings 4096 x yarn factor 40"},
		{"gpt-oss (yarn)", file("testdata/gpt-oss-120b/config.json"), 131072, 131072, "4096 x yarn factor 32"},
		{"qwen3 32b (no rope scaling)", file("testdata/qwen3-32b/config.json"), 40960, 40960, "max_position_embeddings 40960"},
		{"smallest key wins", `{"max_position_embeddings": 8192, "n_positions": 4096, "seq_length": 16384}`, 4096, 4096, "n_positions 4096"},
		{"model_max_length replaces it", `{"max_position_embeddings": 8192, "model_max_length": 131072}`, 131072, 131072, "model_max_length"},
		{"no key: 2048", `{"hidden_size": 8}`, 2048, 2048, "fallback 2048"},
		{"linear factor", `{"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}`, 16384, 16384, "factor 4"},
		{"dynamic factor", `{"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 2}}`, 8192, 8192, "rope_type dynamic"},
		{"default rope_parameters", `{"max_position_embeddings": 202752, "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}}`, 202752, 202752, ""},
		{"longrope default", `{"max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "su", "long_factor": [1]}}`, 4096, 131072, "longrope"},
		{"gemma3 already scaled", `{"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}`, 131072, 131072, "gemma3"},
		{"multimodal text_config", `{"model_type": "llama4", "text_config": {"max_position_embeddings": 10485760, "rope_scaling": {"rope_type": "llama3", "factor": 16.0}}}`, 10485760, 10485760, "text_config.max_position_embeddings"},
	} {
		def, limit, rule, err := MaxModelLen([]byte(c.cfg))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if def != c.def || limit != c.limit || !strings.Contains(rule, c.rule) {
			t.Errorf("%s: got %d, %d, %q; want %d, %d, a rule with %q", c.name, def, limit, rule, c.def, c.limit, c.rule)
		}
	}
	for _, bad := range []string{`[]`, `{"max_position_embeddings": "long"}`, `{"max_position_embeddings": 1e300, "rope_scaling": {"type": "linear", "factor": 1e300}}`} {
		if _, _, _, err := MaxModelLen([]byte(bad)); err == nil {
			t.Errorf("MaxModelLen(%s): no error", bad)
		}
	}
}

func TestFactsOfDeepSeekV3(t *testing.T) {
	a, err := Load("testdata/deepseek-v3/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if a.MTPLayers != 1 || a.MaxModelLen != 163840 || !strings.Contains(a.MaxModelLenRule, "yarn factor 40") {
		t.Errorf("deepseek-v3: %d MTP layers, max_model_len %d (%s); want 1 and 163840 (yarn)", a.MTPLayers, a.MaxModelLen, a.MaxModelLenRule)
	}
}
