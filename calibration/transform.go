package calibration

import (
	"math"

	"github.com/servesim/servesim/model/param"
)

// The optimiser works in an unconstrained space: each bounded parameter v in [lo, hi] maps to
// u = logit(t), t = (g(v) - g(lo)) / (g(hi) - g(lo)), with g = log for scale parameters and the
// identity otherwise. Every u is a valid parameter, so no step can leave the bounds.

const tEps = 1e-9

func gfun(d *param.Def, v float64) float64 {
	if d.Log {
		return math.Log(v)
	}
	return v
}

func toU(d *param.Def, v float64) float64 {
	lo, hi := gfun(d, d.Lo), gfun(d, d.Hi)
	t := (gfun(d, v) - lo) / (hi - lo)
	t = math.Min(math.Max(t, tEps), 1-tEps)
	return math.Log(t / (1 - t))
}

func fromU(d *param.Def, u float64) float64 {
	t := 1 / (1 + math.Exp(-u))
	lo, hi := gfun(d, d.Lo), gfun(d, d.Hi)
	g := lo + t*(hi-lo)
	v := g
	if d.Log {
		v = math.Exp(g)
	}
	return math.Min(math.Max(v, d.Lo), d.Hi)
}

// dvdu is the derivative of the parameter with respect to its unconstrained coordinate.
func dvdu(d *param.Def, u float64) float64 {
	t := 1 / (1 + math.Exp(-u))
	dt := t * (1 - t)
	lo, hi := gfun(d, d.Lo), gfun(d, d.Hi)
	dg := dt * (hi - lo)
	if d.Log {
		return dg * fromU(d, u)
	}
	return dg
}

// vector maps between a full parameter set and the free coordinates.
type vector struct {
	base param.Values
	free []param.ID
}

func (vc *vector) toU(p param.Values) []float64 {
	u := make([]float64, len(vc.free))
	for i, id := range vc.free {
		d := id.Def()
		u[i] = toU(&d, p[id])
	}
	return u
}

func (vc *vector) params(u []float64) param.Values {
	p := vc.base
	for i, id := range vc.free {
		d := id.Def()
		p[id] = fromU(&d, u[i])
	}
	return p
}
