package kernels

import (
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
)

// Shape is the model shape a Vidur compute profile was taken on (constant within a file).
type Shape struct {
	Heads, KVHeads int
	Hidden         int // n_embd
	Intermediate   int // n_expanded_embd
	Vocab          int
	Gated          bool // use_gated_mlp: SwiGLU (gate and up fused)
}

// ComputeRow is one (token count, TP degree) row of a Vidur mlp.csv: the median time of each
// operator on one GPU for its 1/TP shard, in seconds.
type ComputeRow struct {
	SKU    string // the profile's GPU folder: h100, a100
	Model  string // org/name
	Shape  Shape
	Tokens int
	TP     int
	// Seconds by operator (attn_pre_proj, attn_post_proj, mlp_up_proj, mlp_down_proj, mlp_act,
	// input_layernorm, post_attention_layernorm, attn_rope, add, emb); absent operators are
	// missing from the map.
	Seconds map[string]float64
}

// NetRow is one row of a Vidur network profile: the median time of one collective.
type NetRow struct {
	Node           string // the profile's folder: h100_dgx, a100_pairwise_nvlink, ...
	Collective     string // all_reduce or send_recv
	Workers        int    // GPUs taking part
	DevicesPerNode int    // GPUs per node used (Workers / DevicesPerNode nodes)
	Bytes          float64
	Seconds        float64
}

// Profiles is what Load read.
type Profiles struct {
	Compute []ComputeRow
	Network []NetRow
	// Files lists the files read, relative to the directory.
	Files []string
}

// ComputeOps are the operators of a compute profile, in report order; the first four are the
// GEMMs.
func ComputeOps() []string {
	return []string{"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "mlp_act", "input_layernorm", "post_attention_layernorm", "attn_rope", "add"}
}

// IsGEMM reports whether op is one of the four GEMM operators.
func IsGEMM(op string) bool {
	switch op {
	case "attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj":
		return true
	}
	return false
}

// Load reads a Vidur profiling tree (the upstream data/profiling folder, or servesim's testdata
// subset with the same layout): compute/<sku>/<org>/<model>/mlp.csv and
// network/<node>/{all_reduce,send_recv}.csv. Files it does not recognise are skipped.
func Load(fsys fs.FS) (*Profiles, error) {
	p := &Profiles{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".csv") {
			return err
		}
		parts := strings.Split(name, "/")
		switch {
		case len(parts) == 5 && parts[0] == "compute" && parts[4] == "mlp.csv":
			f, err := openProfile(fsys, name)
			if err != nil {
				return err
			}
			rows, err := readCompute(f, name, parts[1], parts[2]+"/"+parts[3])
			f.Close()
			if err != nil {
				return err
			}
			p.Compute = append(p.Compute, rows...)
		case len(parts) == 3 && parts[0] == "network" && (parts[2] == "all_reduce.csv" || parts[2] == "send_recv.csv"):
			f, err := openProfile(fsys, name)
			if err != nil {
				return err
			}
			rows, err := readNetwork(f, name, parts[1])
			f.Close()
			if err != nil {
				return err
			}
			p.Network = append(p.Network, rows...)
		default:
			return nil
		}
		p.Files = append(p.Files, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.Compute) == 0 && len(p.Network) == 0 {
		return nil, fmt.Errorf("no Vidur profiles found (want compute/<sku>/<org>/<model>/mlp.csv or network/<node>/all_reduce.csv)")
	}
	sort.Strings(p.Files)
	return p, nil
}

// LoadDir is Load on a directory of the file system.
func LoadDir(dir string) (*Profiles, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	p, err := Load(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Clean(dir), err)
	}
	return p, nil
}

// MaxProfileBytes bounds one profile CSV (Vidur's largest, an H100 mlp.csv, is a few MB).
const MaxProfileBytes = 64 << 20

// Bounds of a profile's values: counts and shapes are positive integers of at most maxCount,
// times positive and at most maxMS milliseconds (an hour: no kernel or collective of a profile
// takes that long), sizes positive and at most maxBytes (a petabyte).
const (
	maxCount = 1 << 31
	maxMS    = 3.6e6
	maxBytes = 1e15
)

// bounded reads a positive number of at most max.
func (h header) bounded(rec []string, col, file string, line int, max float64) (float64, error) {
	v, err := h.num(rec, col, file, line)
	if err != nil {
		return 0, err
	}
	if v > max {
		return 0, fmt.Errorf("%s:%d:%d: column %s: %q: implausible, want at most %g", file, line, h[col]+1, col, rec[h[col]], max)
	}
	return v, nil
}

// openProfile opens a profile file of fsys: a regular file (a named pipe or a device is refused),
// read up to MaxProfileBytes with lines of at most fsutil.MaxLineBytes.
func openProfile(fsys fs.FS, name string) (io.ReadCloser, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := fsutil.CheckRegular(name, st); err != nil {
		return nil, err
	}
	if st.Size() > MaxProfileBytes {
		return nil, &fsutil.TooLargeError{Name: name, Limit: MaxProfileBytes}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{fsutil.LineLimitReader(fsutil.LimitReader(f, name, MaxProfileBytes), name, fsutil.MaxLineBytes), f}, nil
}

type header map[string]int

func (h header) get(rec []string, col, file string, line int) (string, error) {
	i, ok := h[col]
	if !ok {
		return "", fmt.Errorf("%s: no column %q", file, col)
	}
	if i >= len(rec) {
		return "", fmt.Errorf("%s:%d: short row", file, line)
	}
	return rec[i], nil
}

// num reads a positive finite number: NaN, an infinity, zero or a negative value is an error
// naming the file, line, column number and column.
func (h header) num(rec []string, col, file string, line int) (float64, error) {
	s, err := h.get(rec, col, file, line)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("%s:%d:%d: column %s: %q: want a positive finite number", file, line, h[col]+1, col, s)
	}
	return v, nil
}

// count reads a positive integer of at most maxCount (a shape, a token or worker count).
func (h header) count(rec []string, col, file string, line int) (int, error) {
	v, err := h.num(rec, col, file, line)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || v > maxCount {
		return 0, fmt.Errorf("%s:%d:%d: column %s: %q: want a positive integer of at most %d", file, line, h[col]+1, col, rec[h[col]], maxCount)
	}
	return int(v), nil
}

func readAll(r io.Reader, file string) (header, [][]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) < 1 {
		return nil, nil, fmt.Errorf("%s: empty", file)
	}
	h := header{}
	for i, c := range recs[0] {
		h[c] = i
	}
	return h, recs[1:], nil
}

func readCompute(r io.Reader, file, sku, model string) ([]ComputeRow, error) {
	h, recs, err := readAll(r, file)
	if err != nil {
		return nil, err
	}
	var out []ComputeRow
	for i, rec := range recs {
		line := i + 2
		ints := map[string]int{}
		for _, c := range []string{"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "num_tokens", "num_tensor_parallel_workers"} {
			v, err := h.count(rec, c, file, line)
			if err != nil {
				return nil, err
			}
			ints[c] = v
		}
		gated, err := h.get(rec, "use_gated_mlp", file, line)
		if err != nil {
			return nil, err
		}
		row := ComputeRow{SKU: sku, Model: model, Tokens: ints["num_tokens"], TP: ints["num_tensor_parallel_workers"],
			Shape: Shape{Heads: ints["n_head"], KVHeads: ints["n_kv_head"], Hidden: ints["n_embd"], Intermediate: ints["n_expanded_embd"],
				Vocab: ints["vocab_size"], Gated: strings.EqualFold(gated, "true")},
			Seconds: map[string]float64{}}
		if row.TP < 1 || row.Tokens < 1 || row.Shape.Heads < 1 || row.Shape.Hidden < 1 {
			return nil, fmt.Errorf("%s:%d: shape or size out of range", file, line)
		}
		for _, op := range append(ComputeOps(), "emb") {
			col := "time_stats." + op + ".median"
			if _, ok := h[col]; !ok {
				continue
			}
			s, _ := h.get(rec, col, file, line)
			if strings.TrimSpace(s) == "" {
				continue // not profiled in this row
			}
			v, err := h.bounded(rec, col, file, line, maxMS)
			if err != nil {
				return nil, err
			}
			row.Seconds[op] = v * 1e-3
		}
		out = append(out, row)
	}
	return out, nil
}

func readNetwork(r io.Reader, file, node string) ([]NetRow, error) {
	h, recs, err := readAll(r, file)
	if err != nil {
		return nil, err
	}
	coll := strings.TrimSuffix(path.Base(file), ".csv")
	var out []NetRow
	for i, rec := range recs {
		line := i + 2
		med, err := h.bounded(rec, "time_stats."+coll+".median", file, line, maxMS)
		if err != nil {
			return nil, err
		}
		n, err := h.count(rec, "num_workers", file, line)
		if err != nil {
			return nil, err
		}
		dpn, err := h.count(rec, "devices_per_node", file, line)
		if err != nil {
			return nil, err
		}
		size, err := h.bounded(rec, "size", file, line, maxBytes)
		if err != nil {
			return nil, err
		}
		if n < 2 {
			return nil, fmt.Errorf("%s:%d:%d: column num_workers: %d: a collective needs at least 2 workers", file, line, h["num_workers"]+1, n)
		}
		out = append(out, NetRow{Node: node, Collective: coll, Workers: n, DevicesPerNode: dpn, Bytes: size, Seconds: med * 1e-3})
	}
	return out, nil
}
