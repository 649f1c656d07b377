package cost

import (
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// Pipeline stages and data-parallel ranks that step together, inside one simulated engine.
//
// Pipeline parallel (P stages; vLLM V1 keeps up to P scheduled batches in flight, each request in
// at most one of them, each with its own token budget: EngineCore.step_with_batch_queue). The
// engine's step here is the period in which every running request gets one token: the running
// requests are dealt into m = min(P, requests) micro-batches, and a micro-batch crosses the P
// stages one after the other, each stage holding 1/P of the layers (its weights and KV cache), with
// a hand-off of the micro-batch's hidden states and residual (2 x tokens x hidden bf16) between
// stages, an NCCL send/recv (Kernels.SendRecvAcross: a copy kernel's fixed time + bytes at
// nccl_bw_eff of the fabric of the engine's tp x P GPUs, the GPU link when they fit in one link
// domain, else PCIe). Its latency is
//
//	sum over stages of the stage time + (P - 1) hand-offs = Step(micro-batch) + (P - 1) x hop
//
// since the stages together hold the whole model at the same TP: the cost of the whole model on
// one micro-batch is the sum of the stages' (each reads its weights once per micro-batch). With
// m = P micro-batches the stages are all busy and the engine delivers P micro-batches per
// period: throughput about P x that of one stage's GPUs at the same micro-batch size, and per-token
// latency that of the whole model plus the hand-offs. With fewer requests than stages (m < P) the
// stages idle in turn (the bubble): the period stays one micro-batch's full latency. The
// micro-batches are taken equal (the busiest holds ceil(n / m) requests and at least the largest
// chunk); real ones differ in size and a slow one holds up the others, which this does not model.
// The CPU schedules each micro-batch: m x cpu_step_us per period.
//
// Data-parallel ranks of a MoE model (D ranks, `--data-parallel-size D`; vLLM
// DPEngineCoreProc): each rank schedules its own requests with its own budget and KV pool, and
// the ranks step together because every MoE layer spans them (idle ranks run dummy batches,
// token counts padded to the busiest rank's). One engine holds the D ranks' requests (the
// scheduler's limits and KV pool are D times a rank's; package sim); a step is priced on the
// busiest rank, ceil(n / D) requests and at least the largest chunk: its attention, dense layers,
// output head and TP all-reduces on its own tokens, the routed experts on the tokens of all D
// ranks (the busiest EP rank's share of D x its tokens, or 1/(TP x D) of every expert without
// expert parallel), and per MoE layer the exchange between the ranks over the GPU link:
//
//	allgather_reducescatter (vLLM's default backend): every rank all-gathers the D ranks' tokens
//	    (D x tokens x hidden x 2 B) before the experts and reduce-scatters them after: two NCCL
//	    all-gathers' time (Kernels.AllGatherAcross: half an all-reduce's fixed time each and
//	    (D - 1) / D of the whole through each link at nccl_bw_eff)
//	an all-to-all backend (deepep_*, nixl_ep, ...): each token is sent to its top_k experts'
//	    ranks and combined back: two all-to-alls of tokens x top_k x hidden x 2 B per rank
//	    (Kernels.AllToAllSeconds: concurrent send/recvs to the peers, SendRecvSeconds' model)
//
// over the fabric of the engine's tp x D GPUs (the GPU link within one link domain, else PCIe). The API server's
// balancing is taken as even (vLLM sends each request to the least-loaded rank); prefix-cache hits
// are looked up in one pool, though each rank caches only its own requests' prompts.

// initParallel sets up the pipeline and data-parallel pricing.
func (c *Model) initParallel(d *deploy.Deployment) {
	c.pp = max(d.Engine.PipelineParallel, 1)
	c.ranks = d.LockstepRanks()
	c.moeRanks = float64(c.ranks)
	if c.ranks > 1 {
		for _, m := range c.moe {
			c.moeLayerCount += m.layers
		}
		b := d.Engine.All2AllBackend
		c.dpDispatch = b != "" && b != "allgather_reducescatter" && b != "naive"
	}
}

// split reports whether a step is priced on a micro-batch or a rank rather than the whole batch.
func (c *Model) split() bool { return c.pp > 1 || c.ranks > 1 }

// dpExchangeSeconds is the data-parallel MoE exchange of one rank's t tokens over every MoE layer.
func (c *Model) dpExchangeSeconds(t float64) float64 {
	return c.dpExchangeLayers(t, c.moeLayerCount)
}

// dpExchangeLayers is the data-parallel MoE exchange of one rank's t tokens over layers MoE
// layers with the target's top_k.
func (c *Model) dpExchangeLayers(t, layers float64) float64 {
	if c.ranks <= 1 || layers == 0 || t <= 0 || len(c.moe) == 0 {
		return 0
	}
	gpus := c.tp * c.ranks
	var one float64
	if c.dpDispatch {
		one = c.kern.AllToAllSeconds(c.ranks, gpus, t*c.moe[0].topK*c.hidden*2)
	} else {
		one = c.kern.AllGatherAcross(c.ranks, gpus, float64(c.ranks)*t*c.hidden*2)
	}
	return layers * 2 * one
}

// hopSeconds is one pipeline hand-off of a micro-batch of t tokens: hidden states and residual.
func (c *Model) hopSeconds(t float64) float64 {
	return c.kern.SendRecvAcross(c.tp*c.pp, 2*t*c.hidden*2)
}

// splitCounts is the busiest of m equal parts of n: ceil(1/m) of each count, at least the
// largest request's chunk.
func splitCounts(n StepCounts, m int) StepCounts {
	if m <= 1 {
		return n
	}
	ceil := func(x int) int { return (x + m - 1) / m }
	out := StepCounts{Seqs: ceil(n.Seqs), MaxTokens: n.MaxTokens}
	out.Tokens = min(n.Tokens, max(ceil(n.Tokens), n.MaxTokens))
	out.DecodeSeqs = min(out.Seqs, ceil(n.DecodeSeqs))
	out.DecodeTokens = min(out.Tokens, ceil(n.DecodeTokens))
	out.EmitSeqs = min(out.Seqs, ceil(n.EmitSeqs))
	return out
}

// splitTotals is StepTotals with pipeline stages or lockstep data-parallel ranks: the busiest
// rank's busiest micro-batch through every stage, the hand-offs between stages, and the CPU's
// scheduling of each micro-batch.
func (c *Model) splitTotals(n *StepCounts) StepCost {
	if n.Seqs == 0 {
		return StepCost{}
	}
	rank := splitCounts(*n, min(c.ranks, n.Seqs))
	m := min(c.pp, rank.Seqs)
	micro := splitCounts(rank, m)
	st := c.stepTotals(&micro)
	if c.pp > 1 {
		st.Seconds[TermAllReduce] += float64(c.pp-1) * c.hopSeconds(float64(micro.Tokens))
	}
	st.CPUSeconds = (c.p[param.CPUStepUS]*float64(m) + c.p[param.CPUPerReqUS]*float64(rank.Seqs)) * 1e-6
	st.SeqShare = float64(micro.Seqs) / float64(n.Seqs)
	return st
}
