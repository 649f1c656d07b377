package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHFCacheRefIsACommit: a cache ref holds a 40-hex commit hash and nothing else; a ref that
// points outside the cache ("../../../elsewhere"), holds garbage or cannot be read is an error,
// and a revision with ".." is refused; a real commit ref finds its snapshot.
func TestHFCacheRefIsACommit(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "hub", "models--org--m")
	commit := strings.Repeat("ab", 20)
	for _, d := range []string{"refs", "snapshots/" + commit, "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := []byte(`{"model_type":"llama"}`)
	os.WriteFile(filepath.Join(repo, "snapshots", commit, "config.json"), cfg, 0o644)
	os.WriteFile(filepath.Join(repo, "elsewhere", "config.json"), cfg, 0o644)
	ref := filepath.Join(repo, "refs", "main")
	for _, bad := range []string{"../elsewhere", "../../../elsewhere", "main", strings.Repeat("AB", 20), commit + "0"} {
		os.WriteFile(ref, []byte(bad+"\n"), 0o644)
		if p, err := cachedSnapshot(repo, ""); err == nil || !strings.Contains(err.Error(), "commit hash") {
			t.Errorf("ref %q: %q, %v; want an error", bad, p, err)
		}
	}
	os.WriteFile(ref, []byte(commit+"\n"), 0o644)
	if p, err := cachedSnapshot(repo, ""); err != nil || p != filepath.Join(repo, "snapshots", commit) {
		t.Errorf("good ref: %q, %v", p, err)
	}
	if _, err := cachedSnapshot(repo, "../elsewhere"); err == nil {
		t.Error("revision ../elsewhere: want an error")
	}
	// An unreadable ref (a directory in its place) is an error, not skipped.
	os.Remove(ref)
	os.Mkdir(ref, 0o755)
	if _, err := cachedSnapshot(repo, ""); err == nil {
		t.Error("unreadable ref: want an error")
	}
}
