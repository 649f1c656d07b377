package workload

import (
	"strings"
	"testing"
)

// FuzzParseWorkload: a workload TOML either parses into a valid spec or is an error naming the
// file; a valid spec describes itself and, when small, generates requests that are sane (lengths
// positive, arrivals ordered and non-negative). Trace and ShareGPT files are not read: the
// fuzzer must not open arbitrary paths.
func FuzzParseWorkload(f *testing.F) {
	for _, s := range []string{
		"kind = \"closed\"\n[lengths]\ninput_tokens = 100\noutput_tokens = 10\n[closed]\nrequests = 4\nconcurrency = 2\n",
		"kind = \"open\"\nseed = 3\n[lengths]\ninput_tokens = 1024\noutput_tokens = 256\nrange_ratio = 0.5\nprefix_tokens = 512\nprefix_groups = 2\n[open]\nprocess = \"gamma\"\ncv = 2\nrate = 4\nrequests = 50\n",
		"kind = \"open\"\n[lengths]\ninput_tokens = 64\noutput_tokens = 8\n[open]\nprocess = \"poisson\"\nduration_s = 5\nramp = [{at_s = 0, rate = 1}, {at_s = 5, rate = 10}]\n",
		"kind = \"bench\"\n[bench]\ncontext = \"8K\"\nconcurrency = 4\nduration_s = 10\n[slo]\ntpot_ms = 40\nquantile = 0.99\n",
		"kind = \"vllm-bench\"\n[vllm_bench]\ndataset = \"random\"\nnum_prompts = 20\nrandom_input_len = 100\nrandom_output_len = 10\nrequest_rate = 5\n",
		"kind = \"trace\"\n[trace]\nfile = \"t.csv\"\nspeedup = 2\n",
		"seed = -1\nkind = \"closed\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4<<10 {
			return
		}
		s, err := Parse([]byte(in), "w.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "w.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("a parsed workload does not validate: %v", err)
		}
		_ = s.Describe()
		_ = s.MaxConcurrency()
		small := false
		switch s.Kind {
		case KindClosed:
			small = s.Closed.Requests <= 2000
		case KindOpen:
			small = s.Open.Requests > 0 && s.Open.Requests <= 2000
		case KindVLLMBench, KindOffline:
			small = s.VLLM.Dataset == "random" && s.VLLM.N() <= 2000
		}
		if !small {
			return
		}
		_ = s.MaxRequestTokens()
		reqs, err := s.Requests(s.Seed)
		if err != nil {
			return
		}
		for i, r := range reqs {
			if r.InputTokens < 1 || r.OutputTokens < 1 || r.At < 0 || (i > 0 && r.At < reqs[i-1].At) {
				t.Fatalf("request %d: %+v (previous at %v)", i, r, reqs[max(i-1, 0)].At)
			}
		}
	})
}

// TestTraceSpeedupBounded: a speedup that pushes arrivals past int64 nanoseconds is refused
// (1e-300 used to replay the trace's second request at a wrapped-around time).
func TestTraceSpeedupBounded(t *testing.T) {
	_, err := Parse([]byte("kind = \"trace\"\n[trace]\nfile = \"t.csv\"\nspeedup = 1e-300\n"), "s.toml")
	if err == nil || !strings.Contains(err.Error(), "s.toml:4: trace.speedup = 1e-300: must be in [1e-06, 1e+06]") {
		t.Errorf("speedup 1e-300: %v", err)
	}
	s := &Spec{Name: "t", Kind: KindTrace, Trace: Trace{Speedup: 1e-6}}
	s.SetTrace([]TraceRow{{ArrivalNS: 0, InputTokens: 10, OutputTokens: 1}, {ArrivalNS: 5e16, InputTokens: 10, OutputTokens: 1}})
	if _, err := s.Requests(1); err == nil || !strings.Contains(err.Error(), "past the") {
		t.Errorf("arrival beyond the replay span: %v", err)
	}
}
