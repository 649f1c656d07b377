package cost

import (
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// specDrafter is the drafting of a speculative method other than DFlash (whose parallel drafter is
// drafterTime in cost.go), prepared for one deployment:
//
//	mtp, eagle, eagle3, draft_model  a drafter model run k times per step (vLLM's proposers,
//	    vllm/v1/spec_decode/eagle.py and draft_model.py): the first pass over every scheduled
//	    token (it writes the drafter's own cache for them and drafts from each request's last
//	    one), each later pass over one token per request in the batch; every pass runs the
//	    drafter's layers (attention over each request's context, its MLP or routed and shared
//	    experts), two all-reduces per layer, and its output head on one row per request with the
//	    logits gathered. mtp runs the checkpoint's MTP module (arch.Arch.MTPArch: eh_proj, its one
//	    decoder layer of the target's kind, the target's lm_head; k > n_predict runs the layers
//	    again); eagle and eagle3 an EAGLE head (fc over the target's hidden states in the first
//	    pass only; eagle3 its own lm_head over draft_vocab_size tokens, eagle the target's);
//	    draft_model a whole small model with its own lm_head
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
	// ngram: CPU seconds per context token scanned, per request and step.
	ngramSecondsPerToken float64
}

// newSpecDrafter prepares the drafting of d's speculative method, or returns nil (no speculative
// decoding, or DFlash).
func newSpecDrafter(c *Model, d *deploy.Deployment, p *param.Values) *specDrafter {
	e := &d.Engine
	s := &e.Speculative
	if !s.Enabled() || s.Method == "dflash" {
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
	g := &d.Hardware.GPU
	sd.gpu = true
	sd.gemms = denseGEMMs(da, g, c.tp)
	if da.Family == "eagle" || da.Family == "eagle3" {
		// fc (2 or 3 hidden -> hidden, replicated, bf16) runs in the first pass only: take it out
		// of the small weights it is counted in (of the first 16-bit group: bf16 and fp16 weigh and
		// run alike).
		in := 2.0
		if da.Family == "eagle3" {
			in = 3
		}
		fc := in * float64(da.Hidden) * float64(da.Hidden)
		for i := range sd.gemms {
			if x := &sd.gemms[i]; x.peakFLOPS == g.PeakFLOPS(arch.BF16) && x.params >= fc {
				x.params -= fc
				x.bytes -= fc * arch.BF16.BytesPerParam()
				sd.fc = gemm{bytes: fc * arch.BF16.BytesPerParam(), params: fc, peakFLOPS: x.peakFLOPS}
				break
			}
		}
	}
	ep := 1
	if s.Method == "mtp" {
		ep = e.EPSize() // the MTP layer's experts are placed like the target's
	}
	for _, w := range da.WeightSets() {
		if w.Part != arch.PartRoutedExperts {
			continue
		}
		m := moeLayers{layers: float64(w.Layers), experts: float64(w.Experts), topK: float64(w.ActiveExperts),
			bytesPerExpert: float64(w.Params) * w.DType.BytesPerParam(), paramsPerExpert: float64(w.Params),
			peakFLOPS: g.PeakFLOPS(w.DType), alpha: p[param.RoutingAlpha], ranks: 1, perRank: float64(w.Experts), shard: 1 / float64(c.tp)}
		if ep > 1 {
			m.ranks, m.perRank, m.shard, m.zMax = float64(ep), math.Ceil(float64(w.Experts)/float64(ep)), 1, expectedMaxNormal(ep)
		}
		sd.moe = append(sd.moe, m)
	}
	// The output head: the target's lm_head (mtp, eagle), or the drafter's own (an EAGLE-3 head's
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
		sd.head = gemm{bytes: lm * da.EmbedDType.BytesPerParam(), params: lm, peakFLOPS: g.PeakFLOPS(da.EmbedDType)}
	}
	sd.attn = attnFor(da, c.tp, drafterKV(d))
	sd.layers = float64(da.NumLayers())
	if s.Method == "mtp" {
		sd.layers = 1 // one MTP layer per pass, whichever of the n_predict it is
		n := float64(da.NumLayers())
		for i := range sd.gemms {
			sd.gemms[i].bytes /= n
			sd.gemms[i].params /= n
		}
		for i := range sd.moe {
			sd.moe[i].layers = 1
		}
		for i := range sd.attn {
			sd.attn[i].layers = 1
		}
	}
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
// output heads, gathers, all-reduces and elementwise traffic.
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
		}
		for _, x := range sd.gemms {
			c.gemmTime(x, rows, &d, TermDrafter)
		}
		d.Seconds[TermDrafter] += c.moeSetSeconds(sd.moe, rows)
		c.gemmTime(sd.head, float64(n.Seqs), &d, TermDrafter)
		d.Seconds[TermDrafter] += c.gatherSeconds(float64(n.Seqs) * sd.vocab * 4)
		d.Seconds[TermDrafter] += c.allReduceSeconds(rows, 2*sd.layers)
		d.Seconds[TermDrafter] += c.p[param.ActPasses] * rows * c.hidden * 2 * sd.layers / c.bwBytesPerS
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

// moeSetSeconds is moeTime for the drafter's routed experts (the same coverage of t tokens by the
// busiest rank, its expert weights read or its GEMMs, whichever binds), as seconds.
func (c *Model) moeSetSeconds(sets []moeLayers, t float64) float64 {
	var sec float64
	for i := range sets {
		m := &sets[i]
		pTouch := -math.Expm1(-m.alpha * math.Log1p(t*m.topK/(m.experts*m.alpha)))
		mean := m.perRank * pTouch
		sd := math.Sqrt(m.perRank * pTouch * (1 - pTouch))
		loaded := math.Min(m.perRank, mean+m.zMax*sd)
		bytes := loaded * m.bytesPerExpert * m.shard
		rows := t * m.topK / (m.experts * math.Max(pTouch, 1e-12))
		flops := 2 * rows * loaded * m.paramsPerExpert * m.shard
		bytesSeconds := bytes / c.bwBytesPerS * m.layers
		flopsSeconds := flops / (m.peakFLOPS * c.gemmEff(rows)) * m.layers
		sec += math.Max(bytesSeconds, flopsSeconds)
	}
	return sec
}

// SpecMethod is the speculative method the model drafts with ("" when off).
func (c *Model) SpecMethod() string {
	if c.k == 0 {
		return ""
	}
	return c.d.Engine.Speculative.Method
}
