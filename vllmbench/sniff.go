package vllmbench

import (
	"io"

	"github.com/servesim/servesim/internal/fsutil"
)

// ReadResultFiles reads the files that are vllm bench serve result files (recognised by their
// first MiB, where vLLM writes request_throughput before the per-request arrays) and counts the
// others (matrices, for the caller to read).
func ReadResultFiles(paths []string) (results []*Result, others int, err error) {
	for _, p := range paths {
		f, err := fsutil.Open(p, fsutil.MaxPlanBytes)
		if err != nil {
			return nil, 0, err
		}
		head := make([]byte, 1<<20)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if !IsResult(head[:n]) {
			others++
			continue
		}
		res, err := ReadResult(p)
		if err != nil {
			return nil, 0, err
		}
		results = append(results, res)
	}
	return results, others, nil
}
