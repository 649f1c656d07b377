package cost

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// Term is one component of a step's time.
type Term int

const (
	TermWeights   Term = iota // streaming weights from device memory (GEMMs bound by bandwidth)
	TermCompute               // GEMM math bound by tensor-core throughput, plus elementwise traffic
	TermAttention             // softmax attention, sparse-MLA gather and the DSA indexer
	TermState                 // recurrent-state traffic and the linear-attention scan
	TermAllReduce             // tensor-parallel all-reduces
	TermDrafter               // the speculative drafter's forward pass
	TermOverhead              // fixed GPU-side step cost, and CPU time not hidden by async scheduling
	TermPadding               // extra work from padding decode batches to a CUDA-graph size
	NumTerms
)

var termNames = [NumTerms]string{"weights", "compute", "attention", "state", "allreduce", "drafter", "overhead", "padding"}

func (t Term) String() string { return termNames[t] }

// StepCost is the time of one engine step, split into terms (seconds).
type StepCost struct {
	Terms [NumTerms]float64
	GPU   float64 // GPU-side time
	CPU   float64 // CPU scheduling time for the step
	Total float64 // wall time of the step
}

// Binding returns the largest term.
func (c *StepCost) Binding() Term {
	b := Term(0)
	for t := Term(1); t < NumTerms; t++ {
		if c.Terms[t] > c.Terms[b] {
			b = t
		}
	}
	return b
}

// gemm is a set of weight matrices read once per step and multiplied by M rows.
type gemm struct {
	bytes  float64 // per GPU
	params float64 // per GPU (FLOPs = 2 x M x params)
	peak   float64 // FLOP/s of the dtype class
}

// moeLayers is a set of identical MoE layers.
type moeLayers struct {
	layers        float64
	experts       float64
	topK          float64
	perRank       float64 // experts held by one rank (E/EP, or E when TP-sharded)
	shard         float64 // fraction of each expert a rank holds (1/TP without EP, else 1)
	ranks         float64 // EP ranks
	expertBytes   float64
	expertParams  float64
	peak          float64
	zMax          float64 // expected max of `ranks` standard normals
	logMissPerTok float64 // log(1 - topK/E)
}

// attnGroup is a set of identical layers' token mixers prepared for one deployment.
type attnGroup struct {
	layers float64
	cost   arch.LayerCost
}

// Model turns a step's shape into time on one deployment with one parameter set. Build it
// with New; it is immutable and safe to share between simulations.
type Model struct {
	d        *deploy.Deployment
	p        param.Values
	bw       float64 // achieved memory bandwidth, bytes/s
	bf16Peak float64
	fp8Peak  float64
	tp       int
	dense    []gemm
	moe      []moeLayers
	lmHead   gemm
	attn     []attnGroup
	roof     arch.Roofline // what the attention kernels run against
	layers   float64
	hidden   float64
	vocab    float64
	arAlpha  float64 // seconds per all-reduce
	arBeta   float64 // seconds per payload byte
	// drafter
	draft       bool
	k           int
	draftDense  gemm
	draftKV     gemm // context K/V projection of new tokens for the drafter
	draftAttn   []attnGroup
	draftLayers float64
	maxCapture  int
	graphs      bool
	async       bool
}

// expected maximum of n standard normal variables, for n = 1, 2, 4, 8, 16, 32, 64.
func expectedMaxNormal(n int) float64 {
	switch {
	case n <= 1:
		return 0
	case n == 2:
		return 0.5642
	case n <= 4:
		return 1.0294
	case n <= 8:
		return 1.4236
	case n <= 16:
		return 1.7660
	case n <= 32:
		return 2.0697
	}
	return 2.3419
}

// New precomputes the per-GPU quantities of d under parameters p.
func New(d *deploy.Deployment, p param.Values) *Model {
	g := &d.Hardware.GPU
	e := &d.Engine
	c := &Model{d: d, p: p, tp: e.TensorParallel}
	c.bw = g.BandwidthBytesPerS() * p[param.MemBWEff]
	c.bf16Peak = g.PeakFLOPS(arch.BF16)
	c.fp8Peak = g.PeakFLOPS(arch.FP8)
	c.hidden = float64(d.Model.Hidden)
	c.vocab = float64(d.Model.Vocab)
	c.layers = float64(d.Model.NumLayers())
	c.dense = denseGEMMs(d.Model, g, c.tp)
	c.attn = attnFor(d.Model, c.tp, e.KVDType())
	c.roof = arch.Roofline{BandwidthBytesPerS: c.bw, BF16FLOPS: c.bf16Peak, FP8FLOPS: c.fp8Peak,
		AttnEff: p[param.AttnEff], IndexerEff: p[param.IndexerEff], LinearAttnEff: p[param.LinearAttnEff]}
	ep := e.EPSize()
	for _, w := range d.Model.WeightSets() {
		if w.Part != arch.PartRoutedExperts {
			continue
		}
		m := moeLayers{layers: float64(w.Layers), experts: float64(w.Experts), topK: float64(w.ActiveExperts),
			expertBytes:  float64(w.Params) * w.DType.BytesPerParam(),
			expertParams: float64(w.Params), peak: g.PeakFLOPS(w.DType)}
		if ep > 1 {
			m.ranks = float64(ep)
			m.perRank = math.Ceil(float64(w.Experts) / float64(ep))
			m.shard = 1
			m.zMax = expectedMaxNormal(ep)
		} else {
			m.ranks = 1
			m.perRank = float64(w.Experts)
			m.shard = 1 / float64(c.tp)
		}
		m.logMissPerTok = math.Log1p(-m.topK / m.experts)
		c.moe = append(c.moe, m)
	}
	if !d.Model.SharesTargetEmbeddings {
		lm := float64(d.Model.Vocab) * c.hidden / float64(c.tp)
		c.lmHead = gemm{bytes: lm * d.Model.EmbedDType.BytesPerParam(), params: lm, peak: g.PeakFLOPS(d.Model.EmbedDType)}
	}
	n := float64(c.tp)
	if c.tp > 1 {
		c.arAlpha = p[param.ARLatencyMult] * 2 * (n - 1) * g.LinkLatencyUS * 1e-6
		c.arBeta = 2 * (n - 1) / n / (g.LinkBytesPerS() * p[param.ARBWEff])
	}
	if d.Drafter != nil && e.Speculative.Enabled() {
		c.draft = true
		c.k = e.SpecTokens()
		var b, prm float64
		for _, x := range denseGEMMs(d.Drafter, g, c.tp) {
			b += x.bytes
			prm += x.params
		}
		c.draftDense = gemm{bytes: b, params: prm, peak: c.bf16Peak}
		dkv := arch.BF16
		c.draftAttn = attnFor(d.Drafter, c.tp, dkv)
		// The drafter's context K/V projections (on the target's hidden width, which the drafter
		// shares), applied to every new context token.
		var kvp float64
		for _, lg := range d.Drafter.Layers {
			kvp += float64(lg.Count) * float64(lg.Attn.Mixer().KVProjParams(d.Model.Hidden)) / n
		}
		c.draftKV = gemm{bytes: kvp * 2, params: kvp, peak: c.bf16Peak}
		c.draftLayers = float64(d.Drafter.NumLayers())
	} else if e.Speculative.Enabled() {
		c.k = e.SpecTokens()
	}
	c.graphs = !e.EnforceEager
	c.maxCapture = e.MaxCaptureSize
	c.async = e.AsyncScheduling
	return c
}

// Params returns the parameters the model was built with.
func (c *Model) Params() *param.Values { return &c.p }

// Deployment returns the deployment the model was built for.
func (c *Model) Deployment() *deploy.Deployment { return c.d }

// denseGEMMs groups a model's non-expert weights by dtype, in the order of Arch.WeightSets:
// attention projections, dense MLPs and shared experts split over tp ranks, routers and small
// per-layer weights whole on every rank.
func denseGEMMs(a *arch.Arch, g *hardware.GPU, tp int) []gemm {
	by := map[arch.DType]*gemm{}
	var order []arch.DType
	add := func(dt arch.DType, params float64) {
		x, ok := by[dt]
		if !ok {
			x = &gemm{peak: g.PeakFLOPS(dt)}
			by[dt] = x
			order = append(order, dt)
		}
		x.params += params
		x.bytes += params * dt.BytesPerParam()
	}
	t := float64(tp)
	for _, w := range a.WeightSets() {
		switch w.Part {
		case arch.PartRoutedExperts, arch.PartEmbedding, arch.PartLMHead:
			continue
		}
		params := float64(w.Layers) * float64(w.Params)
		if !w.Replicated() {
			params /= t
		}
		add(w.DType, params)
	}
	out := make([]gemm, 0, len(order))
	for _, dt := range order {
		out = append(out, *by[dt])
	}
	return out
}

// attnFor prepares every layer group's token mixer for tp ranks and a cache in kv.
func attnFor(a *arch.Arch, tp int, kv arch.DType) []attnGroup {
	out := make([]attnGroup, len(a.Layers))
	for i, lg := range a.Layers {
		out[i] = attnGroup{layers: float64(lg.Count), cost: lg.Attn.Mixer().Prepare(tp, kv)}
	}
	return out
}

// gemmTime is the roofline time of a GEMM set with M rows, attributed to weights or compute.
func (c *Model) gemmTime(x gemm, m float64, st *StepCost, into Term) {
	if x.bytes == 0 || m <= 0 {
		return
	}
	eff := c.p[param.GEMMEff] * m / (m + c.p[param.GEMMHalfM])
	tb := x.bytes / c.bw
	tf := 2 * m * x.params / (x.peak * eff)
	switch {
	case into != TermWeights:
		st.Terms[into] += math.Max(tb, tf)
	case tb >= tf:
		st.Terms[TermWeights] += tb
	default:
		st.Terms[TermCompute] += tf
	}
}

// moeTime adds the routed-expert time for T tokens.
func (c *Model) moeTime(t float64, st *StepCost) {
	for i := range c.moe {
		m := &c.moe[i]
		pTouch := -math.Expm1(t * m.logMissPerTok)
		mean := m.perRank * pTouch
		sd := math.Sqrt(m.perRank * pTouch * (1 - pTouch))
		loaded := math.Min(m.perRank, mean+m.zMax*sd)
		bytes := loaded * m.expertBytes * m.shard
		// Rows per touched expert, and the busiest rank's FLOPs.
		rows := t * m.topK / (m.experts * math.Max(pTouch, 1e-12))
		flops := 2 * rows * loaded * m.expertParams * m.shard
		eff := c.p[param.GEMMEff] * rows / (rows + c.p[param.GEMMHalfM])
		tb := bytes / c.bw * m.layers
		tf := flops / (m.peak * eff) * m.layers
		if tb >= tf {
			st.Terms[TermWeights] += tb
		} else {
			st.Terms[TermCompute] += tf
		}
	}
}

// attnTime adds one request's work on every layer group: indexer and attention time into term,
// recurrent-state time into stateTerm.
func (c *Model) attnTime(groups []attnGroup, w SeqWork, st *StepCost, term, stateTerm Term) {
	for _, g := range groups {
		sec := g.cost.Seconds(&c.roof, w.Start, w.Tokens, w.Decode)
		st.Terms[term] += (sec.Indexer + sec.Attention) * g.layers
		st.Terms[stateTerm] += sec.State * g.layers
	}
}

// gather is the time to collect bytes spread evenly over the TP ranks onto every rank.
func (c *Model) gather(bytes float64) float64 {
	if c.tp <= 1 || bytes <= 0 {
		return 0
	}
	// A ring all-gather moves (n-1)/n of the payload through each link: half an all-reduce.
	return c.arAlpha/2 + bytes*c.arBeta/2
}

// allReduce is the time of count all-reduces of rows x hidden bf16 values.
func (c *Model) allReduce(rows, count float64) float64 {
	if c.tp <= 1 || rows <= 0 {
		return 0
	}
	return count * (c.arAlpha + rows*c.hidden*2*c.arBeta)
}

// padTokens is the CUDA-graph size a uniform decode batch of n tokens runs at.
func (c *Model) padTokens(n int) int {
	if !c.graphs || n > c.maxCapture {
		return n
	}
	if n <= 8 {
		for _, s := range [...]int{1, 2, 4, 8} {
			if n <= s {
				return s
			}
		}
	}
	return (n + 7) / 8 * 8
}

// tokenTerms adds the terms that scale with the number of rows run through the model.
func (c *Model) tokenTerms(t float64, logits float64, st *StepCost) {
	for _, x := range c.dense {
		c.gemmTime(x, t, st, TermWeights)
	}
	c.moeTime(t, st)
	c.gemmTime(c.lmHead, logits, st, TermWeights)
	// The vocab-parallel lm_head's fp32 logits are gathered across the TP ranks before sampling.
	st.Terms[TermAllReduce] += c.gather(logits * c.vocab * 4)
	// Elementwise traffic (norms, activations, residuals, routing): memory-bound.
	st.Terms[TermCompute] += c.p[param.ActPasses] * t * c.hidden * 2 * c.layers / c.bw
	st.Terms[TermAllReduce] += c.allReduce(t, 2*c.layers)
}

// Step returns the time of one engine step.
func (c *Model) Step(s *StepShape) StepCost {
	var st StepCost
	if len(s.Seqs) == 0 {
		return st
	}
	t := float64(s.Tokens)
	// Logit rows: every verified position of decode entries, one row per other emitting entry.
	logits := float64(s.DecodeTokens + s.EmitSeqs - s.DecodeSeqs)
	c.tokenTerms(t, logits, &st)
	if s.UniformDecode() {
		if pt := c.padTokens(s.Tokens); pt != s.Tokens {
			var pad StepCost
			c.tokenTerms(float64(pt), logits, &pad)
			var base StepCost
			c.tokenTerms(t, logits, &base)
			for i := range pad.Terms {
				st.Terms[TermPadding] += pad.Terms[i] - base.Terms[i]
			}
		}
	}
	for _, w := range s.Seqs {
		c.attnTime(c.attn, w, &st, TermAttention, TermState)
	}
	if c.draft && s.EmitSeqs > 0 {
		c.drafterTime(s, &st)
	}
	st.Terms[TermOverhead] += c.p[param.StepOverheadUS] * 1e-6
	for _, v := range st.Terms {
		st.GPU += v
	}
	st.CPU = (c.p[param.CPUStepUS] + c.p[param.CPUPerReqUS]*float64(len(s.Seqs))) * 1e-6
	if c.async {
		if st.CPU > st.GPU {
			st.Terms[TermOverhead] += st.CPU - st.GPU
			st.Total = st.CPU
		} else {
			st.Total = st.GPU
		}
	} else {
		st.Terms[TermOverhead] += st.CPU
		st.Total = st.GPU + st.CPU
	}
	return st
}

// drafterTime adds the DFlash drafter pass: context K/V for every new token, then one forward
// over 1 + k query positions per emitting request, and k draft logits per request.
func (c *Model) drafterTime(s *StepShape, st *StepCost) {
	var d StepCost
	q := float64(s.EmitSeqs * (1 + c.k))
	c.gemmTime(c.draftKV, float64(s.Tokens), &d, TermDrafter)
	c.gemmTime(c.draftDense, q, &d, TermDrafter)
	c.gemmTime(c.lmHead, float64(s.EmitSeqs*c.k), &d, TermDrafter)
	d.Terms[TermDrafter] += c.gather(float64(s.EmitSeqs*c.k) * c.vocab * 4)
	d.Terms[TermDrafter] += c.allReduce(q, 2*c.draftLayers)
	for _, w := range s.Seqs {
		if !w.Emits {
			continue
		}
		c.attnTime(c.draftAttn, SeqWork{Start: w.Start + w.Tokens, Tokens: 1 + c.k, Decode: true}, &d, TermDrafter, TermDrafter)
	}
	for _, v := range d.Terms {
		st.Terms[TermDrafter] += v
	}
}

// TokensPerStep is the expected tokens a decoding request emits per step (tau).
func (c *Model) TokensPerStep() float64 { return c.p.MeanEmitted(c.k) }

// FrontendSeconds is the API-server time before a prompt of n tokens reaches the engine.
func (c *Model) FrontendSeconds(n int) float64 {
	return c.p[param.FrontendUSPerTok]*1e-6*float64(n) + c.p[param.FrontendMSPerReq]*1e-3
}

func (c *Model) String() string {
	return fmt.Sprintf("cost model: %s on %d x %s", c.d.Model.Name, c.d.Hardware.Count, c.d.Hardware.GPU.Name)
}
