package kvcache

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/transcript"
	"github.com/servesim/servesim/model/arch"
)

var update = flag.Bool("update", false, "rewrite the expected output of kvcache transcripts")

// A transcript is a sequence of commands, each followed by "----" and the expected output, then a
// blank line (etcd-io/raft interaction tests, cockroachdb/datadriven). Lines starting with # are
// comments: they say why the expected lines are right. Commands:
//
//	setup blocks=N block=B groups=full,state,slide:W,full/2,... [spec=K] [eagle] [nocache] [mbt=T]
//	        a Layout built by hand, one group per entry: full attention with B-token blocks
//	        (full/2: B/2-token blocks), a recurrent-state group (align mode), a sliding window of
//	        W tokens; every group draws from one pool of N blocks
//	req id=I prompt=P [pid=X] [prefix=ID:T]
//	        a request whose prompt is content X (default 1000+I), the first T tokens shared
//	        content ID; its generated tokens are unique to it
//	hit id=I [tokens=T]     FindHit for T known tokens (default: the prompt), with each group's
//	                        own longest hit under the cap tokens-1
//	admit id=I tokens=T     CanAdmit for T tokens; Admit when it can
//	grow id=I tokens=T      Grow to T tokens
//	commit id=I computed=C  Commit C computed tokens; prints the cache entries it added
//	free id=I               Free the request's blocks
//	eagle on|off            toggle the EAGLE last-block drop on the same pool
//	pool                    the free queue, least recently used first, and every request's blocks
//
// Cache entries are named after the request that first computed them: rI.gG.bK is block K of
// group G (tokens K*B .. (K+1)*B-1 of that group's block size), rI.gG@N the recurrent state after
// N tokens. A block that another request hits keeps its first owner's name, which is how a
// transcript shows sharing.
type kvHarness struct {
	m      *Manager
	reqs   map[int]*kvReq
	label  map[Hash]string
	cached map[Hash]bool // snapshot for diffs
}

type kvReq struct {
	id int
	c  Content
	t  *Table
}

func (h *kvHarness) req(t *testing.T, a map[string]string) *kvReq {
	r, ok := h.reqs[transcript.Int(t, a, "id", 0)]
	if !ok {
		t.Fatalf("no request id=%s", a["id"])
	}
	return r
}

// name labels every hash request r can produce: attention blocks up to 8 blocks past its prompt
// and state checkpoints inside its prompt. A hash already named keeps its name.
func (h *kvHarness) name(r *kvReq) {
	for g := range h.m.L.Groups {
		gr := &h.m.L.Groups[g]
		n := r.c.PromptTokens/gr.BlockTokens + 8
		for i := 0; i < n; i++ {
			hs := h.m.blockHash(r.t, &r.c, g, i)
			if _, ok := h.label[hs]; ok {
				continue
			}
			if gr.Kind == arch.SpecState {
				h.label[hs] = fmt.Sprintf("r%d.g%d@%d", r.id, g, (i+1)*gr.BlockTokens)
			} else {
				h.label[hs] = fmt.Sprintf("r%d.g%d.b%d", r.id, g, i)
			}
		}
	}
}

func (h *kvHarness) lbl(hs Hash) string {
	if s, ok := h.label[hs]; ok {
		return s
	}
	return fmt.Sprintf("%x", uint64(hs))
}

// diff prints the cache entries added and removed since the last call.
func (h *kvHarness) diff(out *strings.Builder) {
	h.m.Pool.flushAll() // what the cache holds, pending entries included
	var added, gone []string
	h.m.Pool.cached.each(func(hs Hash, _ BlockID) {
		if !h.cached[hs] {
			added = append(added, h.lbl(hs))
		}
	})
	for hs := range h.cached {
		if _, ok := h.m.Pool.Lookup(hs); !ok {
			gone = append(gone, h.lbl(hs))
		}
	}
	sortLabels(added)
	sortLabels(gone)
	if len(added) > 0 {
		fmt.Fprintf(out, "cached: %s\n", strings.Join(added, " "))
	}
	if len(gone) > 0 {
		fmt.Fprintf(out, "evicted: %s\n", strings.Join(gone, " "))
	}
	h.cached = map[Hash]bool{}
	h.m.Pool.cached.each(func(hs Hash, _ BlockID) { h.cached[hs] = true })
}

// sortLabels orders labels by request, group, then block or token count, numerically.
func sortLabels(s []string) {
	key := func(l string) []int {
		var k []int
		for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			k = append(k, n)
		}
		return k
	}
	sort.Slice(s, func(i, j int) bool {
		a, b := key(s[i]), key(s[j])
		for x := 0; x < len(a) && x < len(b); x++ {
			if a[x] != b[x] {
				return a[x] < b[x]
			}
		}
		return len(a) < len(b)
	})
}

func (h *kvHarness) tables(out *strings.Builder, r *kvReq) {
	fmt.Fprintf(out, "r%d holds", r.id)
	for g, bs := range r.t.Blocks {
		fmt.Fprintf(out, " g%d %v", g, bs)
	}
	out.WriteString("\n")
}

func (h *kvHarness) run(t *testing.T, cmd string) string {
	fields := strings.Fields(cmd)
	a := transcript.Args(fields[1:])
	var out strings.Builder
	switch fields[0] {
	case "setup":
		block := transcript.Int(t, a, "block", 4)
		l := &Layout{BlockSize: block, GroupSize: 1, NumBlocks: transcript.Int(t, a, "blocks", 32), SpecTokens: transcript.Int(t, a, "spec", 0),
			MaxModelLen: 1 << 20, MaxNumBatchedTokens: transcript.Int(t, a, "mbt", 16)}
		_, nocache := a["nocache"]
		l.PrefixCaching = !nocache
		for _, g := range strings.Split(a["groups"], ",") {
			switch {
			case g == "full":
				l.Groups = append(l.Groups, Group{Kind: arch.SpecFull, Layers: 1, BlockTokens: block})
			case g == "full/2":
				l.Groups = append(l.Groups, Group{Kind: arch.SpecFull, Layers: 1, BlockTokens: block / 2})
			case g == "state":
				l.Hybrid = true
				l.Groups = append(l.Groups, Group{Kind: arch.SpecState, Layers: 1, BlockTokens: block})
			case strings.HasPrefix(g, "slide:"):
				w, err := strconv.Atoi(strings.TrimPrefix(g, "slide:"))
				if err != nil {
					t.Fatalf("group %q: %v", g, err)
				}
				l.Groups = append(l.Groups, Group{Kind: arch.SpecSliding, Layers: 1, BlockTokens: block, Window: w})
			default:
				t.Fatalf("unknown group %q", g)
			}
		}
		_, eagle := a["eagle"]
		h.m = NewManager(l, eagle)
		h.reqs = map[int]*kvReq{}
		h.label = map[Hash]string{}
		h.cached = map[Hash]bool{}
		fmt.Fprintf(&out, "pool %d blocks; groups", l.NumBlocks)
		for g, gr := range l.Groups {
			fmt.Fprintf(&out, " g%d %s/%d", g, gr.Kind, gr.BlockTokens)
			if gr.Window > 0 {
				fmt.Fprintf(&out, " window %d", gr.Window)
			}
		}
		fmt.Fprintf(&out, "; state blocks per request %d; eagle %v\n", l.StateBlocks(), eagle)
	case "req":
		id := transcript.Int(t, a, "id", 0)
		r := &kvReq{id: id, t: h.m.NewTable(), c: Content{PromptID: uint64(transcript.Int(t, a, "pid", 1000+id)),
			PromptTokens: transcript.Int(t, a, "prompt", 1), UniqueID: uint64(1<<32 + id)}}
		if p, ok := a["prefix"]; ok {
			ids, toks, _ := strings.Cut(p, ":")
			pid, err1 := strconv.Atoi(ids)
			pt, err2 := strconv.Atoi(toks)
			if err1 != nil || err2 != nil {
				t.Fatalf("prefix=%q: want ID:TOKENS", p)
			}
			r.c.PrefixID, r.c.PrefixTokens = uint64(pid), pt
		}
		h.reqs[id] = r
		h.name(r)
		fmt.Fprintf(&out, "r%d: %d prompt tokens\n", id, r.c.PromptTokens)
	case "hit":
		r := h.req(t, a)
		tokens := transcript.Int(t, a, "tokens", r.c.PromptTokens)
		if tokens > 1 && h.m.Caching {
			h.m.Pool.Flush(r.c.PrefixID)
			h.m.Pool.Flush(r.c.PromptID)
			h.m.Pool.Flush(r.c.UniqueID)
			var per []string
			for g := range h.m.L.Groups {
				per = append(per, fmt.Sprintf("g%d %d", g, h.m.groupHit(r.t, &r.c, g, tokens-1)))
			}
			fmt.Fprintf(&out, "cap %d; alone: %s\n", tokens-1, strings.Join(per, ", "))
		}
		hit := h.m.FindHit(r.t, &r.c, tokens)
		fmt.Fprintf(&out, "hit %d", hit)
		for g, bs := range r.t.hitBlocks {
			if len(bs) == 0 {
				continue
			}
			var names []string
			for _, b := range bs {
				names = append(names, fmt.Sprintf("%d=%s", b, h.lbl(h.m.Pool.hashOf(b))))
			}
			fmt.Fprintf(&out, "; g%d reuses %s", g, strings.Join(names, " "))
		}
		out.WriteString("\n")
	case "admit":
		r := h.req(t, a)
		ok := h.m.CanAdmit(r.t, transcript.Int(t, a, "tokens", r.c.PromptTokens))
		fmt.Fprintf(&out, "can admit: %v\n", ok)
		if ok {
			h.m.Admit(r.t)
			h.tables(&out, r)
		}
		fmt.Fprintf(&out, "free %d\n", h.m.Pool.NumFree())
	case "grow":
		r := h.req(t, a)
		fmt.Fprintf(&out, "grow: %v\n", h.m.Grow(r.t, transcript.Int(t, a, "tokens", 0)))
		h.tables(&out, r)
		h.diff(&out)
		fmt.Fprintf(&out, "free %d\n", h.m.Pool.NumFree())
	case "commit":
		r := h.req(t, a)
		h.m.Commit(r.t, &r.c, transcript.Int(t, a, "computed", 0))
		h.diff(&out)
		h.tables(&out, r)
		fmt.Fprintf(&out, "free %d\n", h.m.Pool.NumFree())
	case "free":
		r := h.req(t, a)
		h.m.Free(r.t)
		fmt.Fprintf(&out, "free %d\n", h.m.Pool.NumFree())
	case "eagle":
		h.m.EagleDrop = len(fields) > 1 && fields[1] == "on"
		// FindHit remembers its last answer while the cached set is unchanged; the drop is fixed
		// per engine, so the memo does not key on it. Forget it here.
		for _, r := range h.reqs {
			r.t.hitCached = false
		}
		fmt.Fprintf(&out, "eagle %v\n", h.m.EagleDrop)
	case "pool":
		p := h.m.Pool
		var q []string
		for _, b := range p.freeQueue() {
			if int(b) < p.used && p.m(b).hash != 0 {
				hs := p.hashOf(b)
				q = append(q, fmt.Sprintf("%d=%s", b, h.lbl(hs)))
			} else {
				q = append(q, strconv.Itoa(int(b)))
			}
		}
		fmt.Fprintf(&out, "free (LRU first): %s\n", strings.Join(q, " "))
		ids := make([]int, 0, len(h.reqs))
		for id := range h.reqs {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			if r := h.reqs[id]; r.t.HeldBlocks() > 0 {
				h.tables(&out, r)
			}
		}
	default:
		t.Fatalf("unknown command %q", fields[0])
	}
	if h.m != nil {
		h.m.Pool.CheckInvariants()
	}
	return out.String()
}

func TestTranscripts(t *testing.T) {
	transcript.RunDir(t, *update, func() func(*testing.T, string) string {
		h := &kvHarness{}
		return h.run
	})
}
