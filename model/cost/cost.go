package cost

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// gemm is a set of weight matrices read once per step and multiplied by M rows.
type gemm struct {
	bytes  float64 // weight bytes per GPU
	params float64 // weights per GPU (FLOPs = 2 x M x params)
	rate   float64 // achieved large-M FLOP/s of the class the weights run at (Kernels.GEMMRate)
	bw     float64 // achieved weight bandwidth, bytes/s (Kernels.GEMMBandwidth)
}

// moeLayers is a set of identical MoE layers' routed experts.
type moeLayers struct {
	layers          float64
	experts         float64 // E
	topK            float64 // experts per token
	perRank         float64 // experts held by one rank (ceil(E/EP), or E when TP-sharded)
	shard           float64 // fraction of each expert a rank holds (1/TP without EP, else 1)
	ranks           float64 // EP ranks
	bytesPerExpert  float64
	paramsPerExpert float64
	rate            float64 // achieved large-M FLOP/s (Kernels.GEMMRate)
	bw              float64 // achieved weight bandwidth (Kernels.GEMMBandwidth)
	zMax            float64 // expected max of `ranks` standard normals
	alpha           float64 // gamma shape of the experts' popularity (Values.RoutingConcentration)
}

// attnGroup is a set of identical layers' token mixers prepared for one deployment.
type attnGroup struct {
	layers float64
	cost   arch.LayerCost
	// dcp > 1: decode context parallel splits this group's cache over dcp ranks; wide is the
	// group prepared with every head of the DCP group on one rank (tp / dcp), which each rank
	// runs over its 1/dcp share of the context; contextRowBytes is one cached token of a layer in
	// 16 bits, as a prefill chunk gathers the earlier context from the DCP ranks.
	dcp             int
	wide            arch.LayerCost
	contextRowBytes float64
}

// Model turns a step's shape into time on one deployment with one parameter set. Build it
// with New; it is immutable and safe to share between simulations.
type Model struct {
	d      *deploy.Deployment
	p      param.Values
	kern   *Kernels
	tp     int
	dense  []gemm
	moe    []moeLayers
	lmHead gemm
	attn   []attnGroup
	// dcpRowBytes and dcpLayers price decode context parallel's exchanges (dcpRowBytes).
	dcpRowBytes, dcpLayers float64
	roof                   arch.Roofline // what the attention kernels run against
	layers                 float64
	hidden                 float64
	vocab                  float64
	elemPasses             float64 // elementwise traffic per layer and token, in hidden-size bf16 vectors
	customAR               bool    // vLLM's custom all-reduce for messages up to 8 MiB
	// fixedSeconds is the fixed time of every GEMM and attention kernel of the decoder layers and
	// the lm_head, paid once per step.
	fixedSeconds float64
	// drafter
	draft             bool
	specK             int // draft tokens per step
	draftDense        gemm
	draftKV           gemm // context K/V projection of new tokens for the drafter
	draftAttn         []attnGroup
	draftLayers       float64
	draftFixedSeconds float64
	// the multi-token-prediction layer, when the checkpoint has one
	mtp *mtpLayer
	// the drafting of eagle, eagle3, draft_model and ngram (spec.go)
	spec             *specDrafter
	maxCaptureTokens int
	graphs           bool
	async            bool
	// parallel ranks in one engine (parallel.go): pipeline stages, data-parallel ranks stepping
	// together; 1 and 1 without them
	pp, ranks     int
	moeRanks      float64 // the MoE layers see the tokens of this many ranks (ranks; 1)
	moeLayerCount float64 // MoE layers, for the data-parallel exchange
	dpDispatch    bool    // an all-to-all backend (DeepEP, NIXL EP): top_k copies per token
}

// expectedMaxNormal is the expected maximum of n independent standard normal variables, tabulated
// for n = 1, 2, 4, 8, 16, 32 and 64 (Harter, "Expected values of normal order statistics",
// Biometrika 48, 1961; n = 2 is 1/sqrt(pi)).
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
	c.kern = NewKernels(g, &p)
	g = c.kern.GPU() // compute peaks at the sustained clock
	c.hidden = float64(d.Model.Hidden)
	c.vocab = float64(d.Model.Vocab)
	c.layers = float64(d.Model.NumLayers())
	c.dense = denseGEMMs(d.Model, c.kern, c.tp)
	c.attn = withDCP(attnFor(d.Model, c.tp, e.KVDType()), d.Model, c.tp, e.DCP(), e.KVDType())
	c.dcpRowBytes, c.dcpLayers = dcpRowBytes(d.Model, c.tp, e.DCP(), e.KVDType())
	c.roof = arch.Roofline{BandwidthBytesPerS: c.kern.BandwidthBytesPerS(), BF16FLOPS: g.PeakFLOPS(arch.BF16), FP8FLOPS: g.PeakFLOPS(arch.FP8),
		AttnPrefillEff: p[param.AttnPrefillEff], AttnDecodeEff: p[param.AttnDecodeEff], IndexerEff: p[param.IndexerEff], LinearAttnEff: p[param.LinearAttnEff],
		SparseDecodeEff: p[param.SparseDecodeEff]}
	c.roof.SparsePrefillOnce, _ = d.SparsePrefillKernel()
	c.roof.SparseHeadTile, _ = d.SparseMLAHeadTile()
	if c.roof.FP8FLOPS == 0 {
		// No fp8 tensor cores: the indexer's fp8 scoring runs at the bf16 rate.
		c.roof.FP8FLOPS = c.roof.BF16FLOPS
	}
	ep := e.EPSize()
	c.elemPasses = d.Model.ElementwisePasses(c.tp, ep) + p[param.ActPasses]
	// Without expert parallel the experts are TP-sharded over every rank that steps together:
	// tp x the data-parallel ranks of a lockstep engine.
	c.moe = moeFor(d.Model, c.kern, c.tp*d.LockstepRanks(), ep, p.RoutingConcentration())
	if !d.Model.SharesTargetEmbeddings {
		lm := float64(d.Model.Vocab) * c.hidden / float64(c.tp)
		c.lmHead = c.kern.newGEMM(d.Model.EmbedDType, lm)
	}
	c.customAR, _ = d.CustomAllReduce()
	c.fixedSeconds = float64(d.Model.LayerKernels()+1)*c.kern.KernelFixedSeconds() + c.kern.SmallKernelSeconds(d.Model)
	n := float64(c.tp)
	if d.Drafter != nil && e.Speculative.Enabled() && e.Speculative.Method == "dflash" {
		c.draft = true
		c.specK = e.SpecTokens()
		var b, prm float64
		for _, x := range denseGEMMs(d.Drafter, c.kern, c.tp) {
			b += x.bytes
			prm += x.params
		}
		c.draftDense = gemm{bytes: b, params: prm, rate: c.kern.GEMMRate(arch.BF16), bw: c.kern.GEMMBandwidth(arch.BF16)}
		dkv := arch.BF16
		c.draftAttn = attnFor(d.Drafter, c.tp, dkv)
		// The drafter's context K/V projections (on the target's hidden width, which the drafter
		// shares), applied to every new context token.
		var kvp float64
		for _, lg := range d.Drafter.Layers {
			kvp += float64(lg.Count) * float64(lg.Attn.Mixer().KVProjParams(d.Model.Hidden)) / n
		}
		c.draftKV = c.kern.newGEMM(arch.BF16, kvp)
		c.draftLayers = float64(d.Drafter.NumLayers())
		// Its layers' kernels, one K/V projection per layer and the lm_head.
		c.draftFixedSeconds = float64(d.Drafter.LayerKernels()+d.Drafter.NumLayers()+1)*c.kern.KernelFixedSeconds() + c.kern.SmallKernelSeconds(d.Drafter)
	} else if e.Speculative.Enabled() {
		c.specK = e.SpecTokens()
	}
	// The checkpoint's MTP layer: the mtp method drafts with it (mtpTotals, mtpSeq); MTP costs it
	// on request.
	c.mtp = newMTPLayer(c, d)
	c.spec = newSpecDrafter(c, d, &p)
	c.graphs = !e.EnforceEager
	c.maxCaptureTokens = e.MaxCaptureSize
	c.async = e.AsyncScheduling
	c.initParallel(d)
	return c
}

// moeFor prepares the routed experts of a's MoE layers for tp ranks with ep expert-parallel ranks
// and routing concentration alpha.
func moeFor(a *arch.Arch, k *Kernels, tp, ep int, alpha float64) []moeLayers {
	var out []moeLayers
	for _, w := range a.WeightSets() {
		if w.Part != arch.PartRoutedExperts {
			continue
		}
		out = append(out, newMoE(w, k, tp, ep, alpha))
	}
	return out
}

// newMoE prepares one weight set of routed experts.
func newMoE(w arch.WeightSet, k *Kernels, tp, ep int, alpha float64) moeLayers {
	m := moeLayers{layers: float64(w.Layers), experts: float64(w.Experts), topK: float64(w.ActiveExperts),
		bytesPerExpert:  float64(w.Params) * w.DType.BytesPerParam(),
		paramsPerExpert: float64(w.Params), rate: k.GEMMRate(w.DType), bw: k.GEMMBandwidth(w.DType), alpha: alpha}
	if ep > 1 {
		// Expert parallel: each rank holds whole experts (vLLM
		// vllm/model_executor/layers/fused_moe/layer.py); the busiest rank sets the time.
		m.ranks = float64(ep)
		m.perRank = math.Ceil(float64(w.Experts) / float64(ep))
		m.shard = 1
		m.zMax = expectedMaxNormal(ep)
	} else {
		m.ranks = 1
		m.perRank = float64(w.Experts)
		m.shard = 1 / float64(tp)
	}
	return m
}

// Params returns the parameters the model was built with.
func (c *Model) Params() *param.Values { return &c.p }

// Deployment returns the deployment the model was built for.
func (c *Model) Deployment() *deploy.Deployment { return c.d }

// Kernels returns the kernel-level formulas the model adds up.
func (c *Model) Kernels() *Kernels { return c.kern }

// denseGEMMs groups a model's non-expert weights by dtype, in the order of Arch.WeightSets:
// attention projections, dense MLPs and shared experts split over tp ranks, routers and small
// per-layer weights whole on every rank.
func denseGEMMs(a *arch.Arch, k *Kernels, tp int) []gemm {
	by := map[arch.DType]*gemm{}
	var order []arch.DType
	add := func(dt arch.DType, params float64) {
		x, ok := by[dt]
		if !ok {
			x = &gemm{rate: k.GEMMRate(dt), bw: k.GEMMBandwidth(dt)}
			by[dt] = x
			order = append(order, dt)
		}
		x.params += params
		x.bytes += params * dt.BytesPerParam()
	}
	t := float64(tp)
	for _, w := range a.WeightSets() {
		switch w.Part {
		case arch.PartRoutedExperts, arch.PartEmbedding, arch.PartLMHead, arch.PartEncoder:
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

// withDCP prepares groups (attnFor's of a on tp ranks) for decode context parallel over dcp
// ranks: every group that keeps a per-token cache (not linear attention's recurrent state).
func withDCP(groups []attnGroup, a *arch.Arch, tp, dcp int, kv arch.DType) []attnGroup {
	if dcp <= 1 {
		return groups
	}
	for i, lg := range a.Layers {
		if lg.Attn.Mixer().KVSpec(tp, kv).Kind == arch.SpecState {
			continue
		}
		groups[i].dcp = dcp
		groups[i].wide = lg.Attn.Mixer().Prepare(max(tp/dcp, 1), kv)
		groups[i].contextRowBytes = lg.Attn.Mixer().KVSpec(tp, arch.BF16).BytesPerToken
	}
	return groups
}

// dcpRowBytes is, per row and per layer that keeps a per-token cache, the bytes each rank
// contributes to decode context parallel's two exchanges: its heads' queries gathered over the
// DCP group, and the partial outputs (with their log-sum-exp) sent back to the heads' ranks. MLA
// kinds exchange the absorbed latent queries and outputs (kv_lora_rank wide), the others the
// heads' q and v. It is 0 without DCP, and kvLayers the number of layers concerned.
func dcpRowBytes(a *arch.Arch, tp, dcp int, kv arch.DType) (bytes, kvLayers float64) {
	if dcp <= 1 {
		return 0, 0
	}
	for _, lg := range a.Layers {
		if lg.Attn.Mixer().KVSpec(tp, kv).Kind == arch.SpecState {
			continue
		}
		at := lg.Attn
		width := at.HeadDim + at.VHeadDim
		if at.KVLoraRank > 0 {
			width = 2*at.KVLoraRank + at.QKRopeDim
		}
		heads := float64(at.Heads) / float64(tp)
		bytes += float64(lg.Count) * heads * (float64(width)*2 + 4)
		kvLayers += float64(lg.Count)
	}
	return bytes / kvLayers, kvLayers
}

// attnFor prepares every layer group's token mixer for tp ranks and a cache in kv.
func attnFor(a *arch.Arch, tp int, kv arch.DType) []attnGroup {
	out := make([]attnGroup, len(a.Layers))
	for i, lg := range a.Layers {
		out[i] = attnGroup{layers: float64(lg.Count), cost: lg.Attn.Mixer().Prepare(tp, kv)}
	}
	return out
}

// gemmTime is the roofline time of a GEMM set with m rows (Kernels: max(weight bytes /
// bandwidth, 2 m params / (rate x SmallM(m)))), attributed to weights or compute, whichever
// binds, or all of it to into. The kernels' fixed time is counted once per step (fixedSeconds).
func (c *Model) gemmTime(x gemm, m float64, st *StepCost, into Term) {
	if x.bytes == 0 || m <= 0 {
		return
	}
	bytesSeconds, flopsSeconds := c.kern.roof(x.bytes, x.params, x.rate, x.bw, m)
	switch {
	case into != TermWeights:
		st.Seconds[into] += math.Max(bytesSeconds, flopsSeconds)
	case bytesSeconds >= flopsSeconds:
		st.Seconds[TermWeights] += bytesSeconds
	default:
		st.Seconds[TermCompute] += flopsSeconds
	}
}

// moeTouch is, for t tokens on one set of MoE layers, the experts the busiest rank reads and the
// rows each of them runs. Each token picks topK of E experts; expert e is picked with probability
// q_e per token, q_e = topK/E x g_e with g_e gamma distributed (shape alpha, mean 1): E[1 - (1 -
// q_e)^t] ~ 1 - E[exp(-t q_e)] = 1 - (1 + t topK / (E alpha))^-alpha, the gamma's Laplace
// transform (alpha -> infinity is uniform routing with Poisson picks, 1 - exp(-t topK / E)). A
// rank holding R experts reads on average R p of them (binomial, sd sqrt(R p (1 - p))); the
// busiest of the EP ranks about mean + zMax x sd (normal approximation), at most R; its GEMMs run
// t topK / (E p) rows per touched expert.
func (m *moeLayers) touch(t float64) (loaded, rows float64) {
	pTouch := -math.Expm1(-m.alpha * math.Log1p(t*m.topK/(m.experts*m.alpha)))
	mean := m.perRank * pTouch
	sd := math.Sqrt(m.perRank * pTouch * (1 - pTouch))
	loaded = math.Min(m.perRank, mean+m.zMax*sd)
	rows = t * m.topK / (m.experts * math.Max(pTouch, 1e-12))
	return loaded, rows
}

// moeTime adds the routed-expert time for t tokens: the busiest rank's expert weights read, or
// its GEMMs at the class rate and rows per expert, whichever binds.
func (c *Model) moeTime(sets []moeLayers, t float64, st *StepCost) {
	for i := range sets {
		m := &sets[i]
		loaded, rows := m.touch(t)
		bytes := loaded * m.bytesPerExpert * m.shard
		bytesSeconds, flopsSeconds := c.kern.roof(bytes, loaded*m.paramsPerExpert*m.shard, m.rate, m.bw, rows)
		bytesSeconds *= m.layers
		flopsSeconds *= m.layers
		if bytesSeconds >= flopsSeconds {
			st.Seconds[TermWeights] += bytesSeconds
		} else {
			st.Seconds[TermCompute] += flopsSeconds
		}
	}
}

// attnTime adds one request's work on every layer group (each kind's formula is in its own file
// of package arch): indexer and attention time into term, recurrent-state time into stateTerm.
func (c *Model) attnTime(groups []attnGroup, w SeqWork, st *StepCost, term, stateTerm Term) {
	for _, g := range groups {
		if g.dcp > 1 && w.Decode {
			// Each rank attends with every head of its DCP group over its share of the context.
			sec := g.wide.Seconds(&c.roof, (w.Start+g.dcp-1)/g.dcp, w.Tokens, w.Decode)
			st.Seconds[term] += (sec.Indexer + sec.Attention) * g.layers
			st.Seconds[stateTerm] += sec.State * g.layers
			continue
		}
		if g.dcp > 1 && w.Start > 0 {
			// A prefill chunk attends over the whole context with the rank's heads: each
			// cached layer first gathers the earlier context from the DCP ranks, dequantised to
			// 16 bits (vLLM's MLA backends: cp_gather_and_maybe_dequant_cache, then an
			// all-gather over the DCP group).
			st.Seconds[term] += g.layers * c.kern.AllGatherSeconds(g.dcp, float64(w.Start)*g.contextRowBytes)
		}
		sec := g.cost.Seconds(&c.roof, w.Start, w.Tokens, w.Decode)
		st.Seconds[term] += (sec.Indexer + sec.Attention) * g.layers
		st.Seconds[stateTerm] += sec.State * g.layers
	}
}

// gatherSeconds is the time to collect bytes spread evenly over the TP ranks onto every rank
// (an NCCL all-gather).
func (c *Model) gatherSeconds(bytes float64) float64 {
	if c.tp <= 1 || bytes <= 0 {
		return 0
	}
	return c.kern.AllGatherSeconds(c.tp, bytes)
}

// allReduceSeconds is the time of count all-reduces of rows x hidden bf16 values, each as vLLM
// runs it (Kernels.AllReduceSeconds: its custom kernel where enabled and up to 8 MiB, else NCCL).
func (c *Model) allReduceSeconds(rows, count float64) float64 {
	if c.tp <= 1 || rows <= 0 {
		return 0
	}
	return count * c.kern.AllReduceSeconds(c.tp, rows*c.hidden*2, c.customAR)
}

// padTokens is the CUDA-graph size a uniform decode batch of n tokens runs at: vLLM captures 1, 2,
// 4 and then every multiple of 8 up to max_cudagraph_capture_size (vLLM vllm/config/compilation.py,
// cudagraph_capture_sizes); larger batches run without a graph.
func (c *Model) padTokens(n int) int {
	if !c.graphs || n > c.maxCaptureTokens {
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
	c.moeTime(c.moe, t*c.moeRanks, st)
	if c.ranks > 1 {
		st.Seconds[TermAllReduce] += c.dpExchangeSeconds(t)
	}
	c.gemmTime(c.lmHead, logits, st, TermWeights)
	// The vocab-parallel lm_head's fp32 logits are gathered across the TP ranks before sampling
	// (vLLM vllm/model_executor/layers/logits_processor.py).
	st.Seconds[TermAllReduce] += c.gatherSeconds(logits * c.vocab * 4)
	// Elementwise traffic (norms, activations, rotary embedding, residuals, MoE permutation, and
	// act_passes more): memory-bound.
	st.Seconds[TermCompute] += c.kern.ElementwiseSeconds(c.elemPasses * t * c.hidden * 2 * c.layers)
	// Two all-reduces per layer, after attention and after the MLP (Shoeybi et al.,
	// "Megatron-LM", 2019).
	st.Seconds[TermAllReduce] += c.allReduceSeconds(t, 2*c.layers)
}

// dcpSeconds is decode context parallel's exchange for a step with rows decode rows: per cached
// layer, the rows' queries gathered over the DCP group and their partial outputs combined (two
// exchanges of the rows' heads). Prefill chunks attend with the TP heads over the whole context
// (vLLM splits the cache the chunk writes, not its attention), after gathering it (attnTime).
func (c *Model) dcpSeconds(rows float64) float64 {
	if c.dcpLayers == 0 || rows <= 0 {
		return 0
	}
	n := c.d.Engine.DCP()
	return 2 * c.dcpLayers * c.kern.AllGatherSeconds(n, rows*c.dcpRowBytes*float64(n))
}

// Step returns the time of one engine step.
func (c *Model) Step(s *StepShape) StepCost {
	var st StepCost
	if len(s.Seqs) == 0 {
		return st
	}
	if c.split() {
		// Priced from the totals and the requests' own terms, as the fast mode does.
		n := s.Counts()
		var per SeqSeconds
		for _, w := range s.Seqs {
			per = per.Add(c.Seq(w))
		}
		return c.StepSum(&n, per)
	}
	t := float64(s.Tokens)
	// Logit rows: every verified position of decode entries, one row per other emitting entry
	// (vLLM vllm/v1/sample/rejection_sampler.py verifies every draft position).
	logits := float64(s.DecodeTokens + s.EmitSeqs - s.DecodeSeqs)
	c.tokenTerms(t, logits, &st)
	st.Seconds[TermAllReduce] += c.dcpSeconds(float64(s.DecodeTokens))
	if s.UniformDecode() {
		if pt := c.padTokens(s.Tokens); pt != s.Tokens {
			var pad StepCost
			c.tokenTerms(float64(pt), logits, &pad)
			var base StepCost
			c.tokenTerms(t, logits, &base)
			for i := range pad.Seconds {
				st.Seconds[TermPadding] += pad.Seconds[i] - base.Seconds[i]
			}
		}
	}
	for _, w := range s.Seqs {
		c.attnTime(c.attn, w, &st, TermAttention, TermState)
	}
	if c.draft && s.EmitSeqs > 0 {
		c.drafterTime(s, &st)
	}
	if c.spec != nil {
		c.specStep(s, &st)
	}
	if c.mtpDrafts() {
		c.mtpStep(s, &st)
	}
	st.Seconds[TermOverhead] += c.p[param.StepOverheadUS]*1e-6 + c.fixedSeconds
	for _, v := range st.Seconds {
		st.GPUSeconds += v
	}
	st.CPUSeconds = (c.p[param.CPUStepUS] + c.p[param.CPUPerReqUS]*float64(len(s.Seqs))) * 1e-6
	// Async scheduling prepares step n+1 on the CPU while the GPU runs step n, so a step takes the
	// longer of the two (vLLM vllm/v1/core/sched/async_scheduler.py); otherwise they add.
	if c.async {
		if st.CPUSeconds > st.GPUSeconds {
			st.Seconds[TermOverhead] += st.CPUSeconds - st.GPUSeconds
			st.TotalSeconds = st.CPUSeconds
		} else {
			st.TotalSeconds = st.GPUSeconds
		}
	} else {
		st.Seconds[TermOverhead] += st.CPUSeconds
		st.TotalSeconds = st.GPUSeconds + st.CPUSeconds
	}
	return st
}

// drafterTime adds the DFlash drafter pass: context K/V for every new token, then one forward
// over 1 + k query positions per emitting request, and k draft logits per request.
func (c *Model) drafterTime(s *StepShape, st *StepCost) {
	var d StepCost
	q := float64(s.EmitSeqs * (1 + c.specK))
	c.gemmTime(c.draftKV, float64(s.Tokens), &d, TermDrafter)
	c.gemmTime(c.draftDense, q, &d, TermDrafter)
	c.gemmTime(c.lmHead, float64(s.EmitSeqs*c.specK), &d, TermDrafter)
	d.Seconds[TermDrafter] += c.gatherSeconds(float64(s.EmitSeqs*c.specK) * c.vocab * 4)
	d.Seconds[TermDrafter] += c.allReduceSeconds(q, 2*c.draftLayers)
	d.Seconds[TermDrafter] += c.draftFixedSeconds
	for _, w := range s.Seqs {
		if !w.Emits {
			continue
		}
		c.attnTime(c.draftAttn, SeqWork{Start: w.Start + w.Tokens, Tokens: 1 + c.specK, Decode: true}, &d, TermDrafter, TermDrafter)
	}
	for _, v := range d.Seconds {
		st.Seconds[TermDrafter] += v
	}
}

// TokensPerStep is the expected tokens a decoding request emits per step (tau), early in an
// output.
func (c *Model) TokensPerStep() float64 {
	if c.specK == 0 {
		return 1
	}
	a := c.d.Acceptance(&c.p)
	return a.Mean()
}

// FrontendSeconds is the API-server time before a prompt of n tokens reaches the engine.
func (c *Model) FrontendSeconds(n int) float64 {
	return c.p[param.FrontendUSPerTok]*1e-6*float64(n) + c.p[param.FrontendMSPerReq]*1e-3
}

func (c *Model) String() string {
	return fmt.Sprintf("cost model: %s on %d x %s", c.d.Model.Name, c.d.Hardware.Count, c.d.Hardware.GPU.Name)
}
