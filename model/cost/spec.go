package cost

import (
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// specDrafter is the drafting of a speculative method other than DFlash (whose parallel drafter is
// drafterTime in cost.go) and mtp (the checkpoint's MTP layer, mtp.go), prepared for one
// deployment:
//
//	eagle, eagle3, draft_model  a drafter model run k times per step (vLLM's proposers,
//	    vllm/v1/spec_decode/eagle.py and draft_model.py): the first pass over every scheduled
//	    token (it writes the drafter's own cache for them and drafts from each request's last
//	    one), each later pass over one token per request in the batch; every pass runs the
//	    drafter's layers (attention over each request's context, its MLP or routed and shared
//	    experts, elementwise traffic), two all-reduces per layer, its output head on one row per
//	    request with the logits gathered, and the fixed time of its kernels. eagle and eagle3 run
//	    an EAGLE head (fc over the target's hidden states in the first pass only; eagle3 its own
//	    lm_head over draft_vocab_size tokens, eagle the target's); draft_model a whole small model
//	    with its own lm_head
//	ngram  prompt lookup on the CPU (vllm/v1/spec_decode/ngram_proposer.py): per request and
//	    step a scan of its context, ngram_ns_per_token each token; vLLM turns asynchronous
//	    scheduling off with it, so the scan adds to the step (counted in the drafter term)
//
// Everything lands in TermDrafter. The per-request part (the drafter's attention, ngram's scan)
// is Seq's Drafter; the rest depends on the batch totals (StepTotals).
type specDrafter struct {
	k      int
	gpu    bool   // a drafter model runs on the GPU (all but ngram)
	gemms  []gemm // every pass: the drafter's projections, MLPs, shared experts, routers, small weights
	fc     gemm   // the first pass only: an EAGLE head's fc over the target's hidden states
	moe    []moeLayers
	head   gemm    // the output head, one row per request and pass
	vocab  float64 // its width (the logits gathered over the TP ranks)
	attn   []attnGroup
	layers float64 // decoder layers per pass
	passes float64 // elementwise traffic per layer and token, in hidden-size bf16 vectors
	// fixedSeconds is the fixed time of a pass's kernels: its layers', the output head's, and
	// fcFixedSeconds more in the first pass (an EAGLE head's fc).
	fixedSeconds, fcFixedSeconds float64
	// ngram: CPU seconds per context token scanned, per request and step.
	ngramSecondsPerToken float64
}

// newSpecDrafter prepares the drafting of d's speculative method, or returns nil (no speculative
// decoding, DFlash or mtp).
func newSpecDrafter(c *Model, d *deploy.Deployment, p *param.Values) *specDrafter {
	e := &d.Engine
	s := &e.Speculative
	if !s.Enabled() || s.Method == "dflash" || s.Method == "mtp" {
		return nil
	}
	sd := &specDrafter{k: e.SpecTokens()}
	if s.Method == "ngram" {
		sd.ngramSecondsPerToken = p[param.NgramNsPerToken] * 1e-9
		return sd
	}
	da := d.DrafterArch()
	if da == nil {
		return nil
	}
	sd.gpu = true
	sd.gemms = denseGEMMs(da, c.kern, c.tp)
	if da.Family == "eagle" || da.Family == "eagle3" {
		// fc (2 or 3 hidden -> hidden, replicated, bf16) runs in the first pass only: take it out
		// of the small weights it is counted in (of the first bf16 group).
		in := 2.0
		if da.Family == "eagle3" {
			in = 3
		}
		fc := in * float64(da.Hidden) * float64(da.Hidden)
		bf16 := c.kern.GEMMRate(arch.BF16)
		for i := range sd.gemms {
			if x := &sd.gemms[i]; x.rate == bf16 && x.params >= fc {
				x.params -= fc
				x.bytes -= fc * arch.BF16.BytesPerParam()
				sd.fc = gemm{bytes: fc * arch.BF16.BytesPerParam(), params: fc, rate: x.rate, bw: x.bw}
				sd.fcFixedSeconds = c.kern.KernelFixedSeconds()
				break
			}
		}
	}
	// A drafter model's experts are TP-sharded (vLLM runs the drafter without expert parallel).
	sd.moe = moeFor(da, c.kern, c.tp, 1, p.RoutingConcentration())
	// The output head: the target's lm_head (eagle), or the drafter's own (an EAGLE-3 head's
	// reduced vocabulary, a draft model's full one).
	sd.head, sd.vocab = c.lmHead, c.vocab
	switch {
	case da.SharesTargetEmbeddings && da.DraftVocab > 0:
		sd.vocab = float64(da.DraftVocab)
	case !da.SharesTargetEmbeddings:
		sd.vocab = float64(da.Vocab)
	}
	if sd.vocab != c.vocab || !da.SharesTargetEmbeddings {
		lm := sd.vocab * float64(da.Hidden) / float64(c.tp)
		sd.head = c.kern.newGEMM(da.EmbedDType, lm)
	}
	sd.attn = attnFor(da, c.tp, drafterKV(d))
	sd.layers = float64(da.NumLayers())
	sd.passes = da.ElementwisePasses(c.tp, 1) + p[param.ActPasses]
	sd.fixedSeconds = float64(da.LayerKernels()+1)*c.kern.KernelFixedSeconds() + c.kern.SmallKernelSeconds(da)
	return sd
}

// drafterKV is the cache format of a drafter's layers (deploy.Deployment.KVSpecs).
func drafterKV(d *deploy.Deployment) arch.DType {
	dkv := d.Engine.KVDType()
	if s := d.Engine.Speculative.KVCacheDType; s != "" && s != "auto" {
		if dt, err := arch.ParseDType(s); err == nil {
			dkv = dt
		}
	}
	return dkv
}

// specTotals adds the drafting that depends on the batch totals: the passes' GEMMs, experts,
// output heads, gathers, all-reduces, elementwise traffic and kernels' fixed time.
func (c *Model) specTotals(n *StepCounts, st *StepCost) {
	sd := c.spec
	if !sd.gpu || n.Seqs == 0 {
		return
	}
	var d StepCost
	for i := 0; i < sd.k; i++ {
		rows := float64(n.Seqs)
		if i == 0 {
			rows = float64(n.Tokens)
			c.gemmTime(sd.fc, rows, &d, TermDrafter)
			d.Seconds[TermDrafter] += sd.fcFixedSeconds
		}
		for _, x := range sd.gemms {
			c.gemmTime(x, rows, &d, TermDrafter)
		}
		var moe StepCost
		c.moeTime(sd.moe, rows, &moe)
		d.Seconds[TermDrafter] += moe.Seconds[TermWeights] + moe.Seconds[TermCompute]
		c.gemmTime(sd.head, float64(n.Seqs), &d, TermDrafter)
		d.Seconds[TermDrafter] += c.gatherSeconds(float64(n.Seqs) * sd.vocab * 4)
		d.Seconds[TermDrafter] += c.allReduceSeconds(rows, 2*sd.layers)
		d.Seconds[TermDrafter] += c.kern.ElementwiseSeconds(sd.passes * rows * c.hidden * 2 * sd.layers)
		d.Seconds[TermDrafter] += sd.fixedSeconds
	}
	st.Seconds[TermDrafter] += d.Seconds[TermDrafter]
}

// specSeq is one request's share of the drafting: the drafter's attention in every pass (the
// first over the request's scheduled tokens, each later one over one token after them), or
// ngram's scan of its context when the request samples.
func (c *Model) specSeq(w SeqWork) float64 {
	sd := c.spec
	if !sd.gpu {
		if !w.Emits {
			return 0
		}
		return sd.ngramSecondsPerToken * float64(w.Start+w.Tokens)
	}
	var d StepCost
	c.attnTime(sd.attn, w, &d, TermDrafter, TermDrafter)
	for i := 1; i < sd.k; i++ {
		c.attnTime(sd.attn, SeqWork{Start: w.Start + w.Tokens + i - 1, Tokens: 1, Decode: true}, &d, TermDrafter, TermDrafter)
	}
	return d.Seconds[TermDrafter]
}

// specStep is the whole drafting of a step (Step's walk).
func (c *Model) specStep(s *StepShape, st *StepCost) {
	n := s.Counts()
	c.specTotals(&n, st)
	for _, w := range s.Seqs {
		st.Seconds[TermDrafter] += c.specSeq(w)
	}
}

// SpecMethod is the speculative method the model drafts with ("" when off).
func (c *Model) SpecMethod() string {
	if c.specK == 0 {
		return ""
	}
	return c.d.Engine.Speculative.Method
}
