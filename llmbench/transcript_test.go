package llmbench_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/tomlx"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

var update = flag.Bool("update", false, "rewrite the expected output of the protocol transcripts")

// The protocol transcripts (testdata/protocol/*.txt) run the tool's schedule on a small slice of
// the seed scenario, with the physical priors, and print what the benchmark does and sees: every
// stage, and for each decode cell its scout, every poll of the readiness wait and of the window,
// every stream request, and the numbers the tool's rules make of them. A transcript is a sequence
// of commands, each followed by "----" and the expected output, then a blank line (etcd-io/raft
// interaction tests, cockroachdb/datadriven). Commands:
//
//	scenario       the lines up to "----" are TOML applied on the seed scenario
//	run            the whole schedule (llmbench.Plan) on one engine, seeded with the scenario's seed
//
// Times are seconds: a stage's start on the run's clock, everything else relative to the cell's
// start (before its scout). Refresh with go test ./bench -run Transcript -update.
func TestProtocolTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/protocol/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runTranscript(t, f) })
	}
}

type block struct {
	comments []string
	cmd      string
	body     []string
	want     string
}

func parseTranscript(t *testing.T, path string) []block {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []block
	var cur *block
	state := 0 // 0: between blocks, 1: command body, 2: expected output
	var want []string
	var comments []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		switch state {
		case 0:
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				comments = append(comments, line)
				continue
			}
			out = append(out, block{comments: comments, cmd: line})
			comments = nil
			cur = &out[len(out)-1]
			state = 1
		case 1:
			if line == "----" {
				state, want = 2, nil
				continue
			}
			cur.body = append(cur.body, line)
		case 2:
			if line == "" {
				cur.want = strings.Join(want, "\n")
				state = 0
				continue
			}
			want = append(want, line)
		}
	}
	if state == 2 {
		cur.want = strings.Join(want, "\n")
	} else if state == 1 {
		t.Fatalf("%s: command %q without ----", path, cur.cmd)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func runTranscript(t *testing.T, path string) {
	blocks := parseTranscript(t, path)
	var srv *sim.Server
	var sc *scenario.Scenario
	var rewritten strings.Builder
	for i := range blocks {
		b := &blocks[i]
		var got string
		switch b.cmd {
		case "scenario":
			// The body's keys are applied on the embedded seed scenario.
			s := scenario.Default()
			if _, err := tomlx.Decode([]byte(strings.Join(b.body, "\n")+"\n"), path, s, "scenario keys"); err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
			if err != nil {
				t.Fatal(err)
			}
			if srv, err = sim.NewServer(r.Deployment, r.Params); err != nil {
				t.Fatal(err)
			}
			sc = s
			got = fmt.Sprintf("kv_cache_size_tokens %d, max_num_seqs %d, max_num_batched_tokens %d",
				srv.Layout.KVCacheSizeTokens, srv.Deployment.Engine.MaxNumSeqs, srv.Deployment.Engine.MaxNumBatchedTokens)
		case "run":
			if srv == nil {
				t.Fatalf("%s: run before scenario", path)
			}
			got = transcriptRun(t, srv, &sc.Protocol, sc.Seed)
		default:
			t.Fatalf("%s: unknown command %q", path, b.cmd)
		}
		if !*update && got != b.want {
			t.Errorf("%s: %s:\n got:\n%s\nwant:\n%s", path, b.cmd, got, b.want)
		}
		for _, c := range b.comments {
			rewritten.WriteString(c + "\n")
		}
		rewritten.WriteString(b.cmd + "\n")
		for _, l := range b.body {
			rewritten.WriteString(l + "\n")
		}
		rewritten.WriteString("----\n" + got + "\n\n")
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(rewritten.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rel(t, start vtime.Time) string { return fmt.Sprintf("+%.3f", t.Sub(start).Seconds()) }

func transcriptRun(t *testing.T, srv *sim.Server, p *protocol.Protocol, seed uint64) string {
	jobs, stages, err := llmbench.Plan(srv, p)
	if err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	e := srv.NewEngine(seed)
	s := llmbench.NewSession(e, srv, p, seed)
	for i := range stages {
		st := &stages[i]
		start := e.Now()
		switch st.Kind {
		case protocol.StageWarmup, protocol.StageWarmupDecode:
			if err := s.Warmup(st); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&w, "%.3f %s: %d-token prompt %#x, %d output tokens; drained %s\n", start.Seconds(), st.Kind, st.PromptTokens, st.PromptID, st.MaxTokens, rel(e.Now(), start))
		case protocol.StagePrefill:
			c, err := s.Prefill(&jobs[st.Job])
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&w, "%.3f prefill %s alone: TTFT %.1f ms, %.1f tok/s\n", start.Seconds(), c.Context, c.TTFTms, c.TotalTokS)
		case protocol.StageCell:
			j := &jobs[st.Job]
			run, err := s.Cell(j, llmbench.CellOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cs := run.CellStart
			fmt.Fprintf(&w, "%.3f cell %s x %d (%d-token prompt %#x), timeout %.0f s\n", cs.Seconds(), j.Label, j.Concurrency, j.Tokens, j.PromptID, p.ReadyTimeout(j.Tokens).Seconds())
			sc := request(run.Scout)
			ttft, _ := sc.TTFTms()
			fmt.Fprintf(&w, "  scout sent %s, token %s: TTFT %.1f ms, %d of its tokens cached", rel(sc.Send, cs), rel(sc.FirstToken, cs), ttft, run.Scout.CachedTokens)
			if st.Scout >= 0 {
				pc := protocol.PrefillCell(jobs[st.Scout].Label, jobs[st.Scout].Tokens, sc)
				fmt.Fprintf(&w, " -> prefill row %s %.1f tok/s", pc.Context, pc.TotalTokS)
			}
			fmt.Fprintf(&w, "\n  %d streams sent %s\n", j.Concurrency, rel(run.Streams, cs))
			for k, pl := range run.WaitPolls {
				verdict := ""
				if k == len(run.WaitPolls)-1 {
					verdict = " -> " + run.Gate.String()
				}
				fmt.Fprintf(&w, "  wait %s: running %d waiting %d streaming %d generated %d%s\n", rel(pl.At, cs), pl.Running, pl.Waiting, pl.Streaming, pl.Generated, verdict)
			}
			fmt.Fprintf(&w, "  window [%s, %s)\n", rel(run.Window.Start, cs), rel(run.Window.End, cs))
			for _, pl := range run.Polls {
				fmt.Fprintf(&w, "  poll %s: running %d waiting %d\n", rel(pl.At, cs), pl.Running, pl.Waiting)
			}
			for k, rec := range run.Records {
				r := request(rec)
				state := "cancelled"
				if rec.Finished {
					state = "finished"
				}
				fmt.Fprintf(&w, "  request %d (stream %d) sent %s", k+1, rec.Spec.Tag, rel(r.Send, cs))
				if ms, ok := r.TTFTms(); ok {
					fmt.Fprintf(&w, " first %s (TTFT %.1f ms) last %s, %d tokens", rel(r.FirstToken, cs), ms, rel(r.LastToken, cs), r.Tokens)
					if tbt, ok := r.TBTms(); ok {
						fmt.Fprintf(&w, " (TBT %.2f ms)", tbt)
					}
				} else {
					state = "no token"
				}
				fmt.Fprintf(&w, ", %s\n", state)
			}
			fmt.Fprintf(&w, "  %d tokens in the window, the last at %s; %d completed in the cell; %d cancelled; next stage at %s\n",
				run.WindowTokens, rel(run.LastToken, cs), run.Completed, run.Cancelled, rel(e.Now(), cs))
			c := run.Cell(j)
			fmt.Fprintf(&w, "  => %s\n", cellLine(&c))
		}
	}
	return strings.TrimRight(w.String(), "\n")
}

func cellLine(c *matrix.Cell) string {
	return fmt.Sprintf("%s: total %.1f tok/s over %.3f s (%d tokens), per request %.1f tok/s, TTFT %.1f ms, TBT %.2f ms, average active %.1f, completed %d",
		c.Status, c.TotalTokS, c.MeasuredS, c.OutputTokens, c.PerRequestTokS, c.TTFTms, c.TBTms, c.AvgActive, c.Completed)
}

// request is what the client saw of a record.
func request(rec *sim.Record) protocol.Request {
	return protocol.Request{Send: rec.Send, FirstToken: rec.FirstToken, LastToken: rec.LastToken, Tokens: rec.Tokens}
}
