package cost

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

func (t Term) String() string {
	switch t {
	case TermWeights:
		return "weights"
	case TermCompute:
		return "compute"
	case TermAttention:
		return "attention"
	case TermState:
		return "state"
	case TermAllReduce:
		return "allreduce"
	case TermDrafter:
		return "drafter"
	case TermOverhead:
		return "overhead"
	case TermPadding:
		return "padding"
	}
	panic("cost: unknown term")
}

// StepCost is the time of one engine step, split into terms. Its JSON keys (Terms, GPU, CPU,
// Total) are those of earlier versions, which saved explanations use.
type StepCost struct {
	Seconds      [NumTerms]float64 `json:"Terms"` // by term; they add up to TotalSeconds
	GPUSeconds   float64           `json:"GPU"`   // GPU-side time
	CPUSeconds   float64           `json:"CPU"`   // CPU scheduling time for the step
	TotalSeconds float64           `json:"Total"` // wall time of the step
	// SeqShare, when above 0, is the fraction of the requests' own terms (SeqSeconds) the step
	// takes: the busiest micro-batch's or data-parallel rank's share (parallel.go); 0 is all.
	SeqShare float64 `json:"-"`
}

// Binding returns the largest term.
func (c *StepCost) Binding() Term {
	b := Term(0)
	for t := Term(1); t < NumTerms; t++ {
		if c.Seconds[t] > c.Seconds[b] {
			b = t
		}
	}
	return b
}
