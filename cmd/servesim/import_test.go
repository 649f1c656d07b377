package main

import (
	"strings"
	"testing"
)

// TestImport: import reads the scenario like every other command (so --seed and --config apply)
// and takes the vllm command once.
func TestImport(t *testing.T) {
	code, out, errs := runCLI("import", "vllm", "--seed", "7", "--gpu", "B200", "--", "vllm", "serve", "glm-5.3-flash", "--max-num-seqs", "8", "--max-model-len", "128k")
	if code != 0 || !strings.Contains(out, "\nseed = 7\n") || !strings.Contains(out, "max_num_seqs = 8") {
		t.Errorf("import --seed 7: exit %d, stderr %s\n%s", code, errs, out)
	}
	code, quoted, _ := runCLI("import", "vllm", "--seed", "7", "--gpu", "B200", "vllm serve glm-5.3-flash --max-num-seqs 8 --max-model-len 128k")
	if code != 0 || quoted != out {
		t.Errorf("the command as one quoted string: exit %d, output differs from the words:\n%s", code, quoted)
	}
	code, _, errs = runCLI("import", "vllm", "--vllm-cmd", "vllm serve x", "--", "vllm", "serve", "y")
	if code != 2 || !strings.Contains(errs, "give the vllm command once") {
		t.Errorf("two vllm commands: exit %d: %s", code, errs)
	}
}
