package plots

import (
	"image/color"
	"sort"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/cost"
)

// contextPalette is a qualitative palette (matplotlib's tab10, grey moved last) for contexts.
func contextPalette() []color.RGBA {
	return []color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, // blue
		{0xff, 0x7f, 0x0e, 0xff}, // orange
		{0x2c, 0xa0, 0x2c, 0xff}, // green
		{0xd6, 0x27, 0x28, 0xff}, // red
		{0x94, 0x67, 0xbd, 0xff}, // purple
		{0x8c, 0x56, 0x4b, 0xff}, // brown
		{0xe3, 0x77, 0xc2, 0xff}, // pink
		{0x17, 0xbe, 0xcf, 0xff}, // cyan
		{0xbc, 0xbd, 0x22, 0xff}, // olive
		{0x7f, 0x7f, 0x7f, 0xff}, // grey
	}
}

// gpuPalette is the qualitative palette of GPU kinds (matplotlib's tab20: tab10's colours, then
// their light companions), so that a plan over the whole catalog (18 kinds and more) gives each
// kind its own colour.
func gpuPalette() []color.RGBA {
	return append(contextPalette(),
		color.RGBA{0xae, 0xc7, 0xe8, 0xff}, // light blue
		color.RGBA{0xff, 0xbb, 0x78, 0xff}, // light orange
		color.RGBA{0x98, 0xdf, 0x8a, 0xff}, // light green
		color.RGBA{0xff, 0x98, 0x96, 0xff}, // light red
		color.RGBA{0xc5, 0xb0, 0xd5, 0xff}, // light purple
		color.RGBA{0xc4, 0x9c, 0x94, 0xff}, // light brown
		color.RGBA{0xf7, 0xb6, 0xd2, 0xff}, // light pink
		color.RGBA{0x9e, 0xda, 0xe5, 0xff}, // light cyan
		color.RGBA{0xdb, 0xdb, 0x8d, 0xff}, // light olive
		color.RGBA{0x30, 0x30, 0x30, 0xff}, // near black
	)
}

// GPUColor returns the colour of GPU kind i (cycling after 20; neutral grey when i < 0).
func GPUColor(i int) color.RGBA {
	if i < 0 {
		return darkGrey()
	}
	p := gpuPalette()
	return p[i%len(p)]
}

// Neutral colours for things that are not a context.
func black() color.RGBA     { return color.RGBA{0x20, 0x20, 0x20, 0xff} }
func darkGrey() color.RGBA  { return color.RGBA{0x55, 0x55, 0x55, 0xff} }
func lightGrey() color.RGBA { return color.RGBA{0xd9, 0xd9, 0xd9, 0xff} }
func gridGrey() color.RGBA  { return color.RGBA{0xe8, 0xe8, 0xe8, 0xff} }
func white() color.RGBA     { return color.RGBA{0xff, 0xff, 0xff, 0xff} }

// PaletteColor returns the context colour with index i (cycling; neutral grey when i < 0).
func PaletteColor(i int) color.RGBA {
	if i < 0 {
		return darkGrey()
	}
	p := contextPalette()
	return p[i%len(p)]
}

// ContextColors gives every context label one palette index, in order of increasing prompt
// tokens over all the matrices it was built from, so a context has the same colour in every
// figure of a set.
type ContextColors struct {
	labels []string
	index  map[string]int
}

// NewContextColors indexes the contexts (prefill rows and decode cells) of the matrices; nil
// matrices are skipped.
func NewContextColors(ms ...*matrix.Matrix) *ContextColors {
	tokens := map[string]int{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, c := range m.Cells() {
			if t, ok := tokens[c.Context]; !ok || c.ContextTokens > t {
				tokens[c.Context] = c.ContextTokens
			}
		}
	}
	cc := &ContextColors{index: map[string]int{}}
	for l := range tokens {
		cc.labels = append(cc.labels, l)
	}
	sort.Slice(cc.labels, func(i, j int) bool {
		a, b := cc.labels[i], cc.labels[j]
		if tokens[a] != tokens[b] {
			return tokens[a] < tokens[b]
		}
		return a < b
	})
	for i, l := range cc.labels {
		cc.index[l] = i
	}
	return cc
}

// Index returns the context's palette index, -1 when unknown.
func (cc *ContextColors) Index(label string) int {
	if cc == nil {
		return -1
	}
	if i, ok := cc.index[label]; ok {
		return i
	}
	return -1
}

// Labels lists the contexts in colour order.
func (cc *ContextColors) Labels() []string { return append([]string(nil), cc.labels...) }

// statusFill is the status map's cell colour for a predicted status.
func statusFill(s matrix.Status) color.RGBA {
	switch s {
	case matrix.Valid:
		return color.RGBA{0xc7, 0xe9, 0xc0, 0xff} // light green
	case matrix.RequestsQueued:
		return color.RGBA{0xfd, 0xd4, 0x9e, 0xff} // light orange
	case matrix.OverCapacity:
		return lightGrey()
	case matrix.Error:
		return color.RGBA{0xfc, 0x92, 0x72, 0xff} // light red
	}
	return white()
}

// mismatchColor outlines status mismatches.
func mismatchColor() color.RGBA { return color.RGBA{0xc0, 0x00, 0x00, 0xff} }

// termPalette colours the step-time terms (cost.Term order).
func termPalette() [cost.NumTerms]color.RGBA {
	return [cost.NumTerms]color.RGBA{
		{0x4e, 0x79, 0xa7, 0xff}, // weights: blue
		{0xf2, 0x8e, 0x2b, 0xff}, // compute: orange
		{0xe1, 0x57, 0x59, 0xff}, // attention: red
		{0x76, 0xb7, 0xb2, 0xff}, // state: teal
		{0x59, 0xa1, 0x4f, 0xff}, // allreduce: green
		{0xb0, 0x7a, 0xa1, 0xff}, // drafter: purple
		{0x9c, 0x75, 0x5f, 0xff}, // overhead: brown
		{0xba, 0xb0, 0xac, 0xff}, // padding: grey
	}
}

// band25 and band10 shade the parity bands: ±25 % lighter than ±10 %.
func band25() color.RGBA { return color.RGBA{0xee, 0xee, 0xee, 0xff} }
func band10() color.RGBA { return color.RGBA{0xd4, 0xd4, 0xd4, 0xff} }
