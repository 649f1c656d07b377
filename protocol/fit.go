package protocol

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
)

// PrefillOnlyOutput is the max_tokens of a prefill-only row's request.
const PrefillOnlyOutput = matrix.PrefillOutputTokens

// Room is the longest prompt a request with output tokens may have: max_model_len - output -
// margin (<= 0: none).
func (p *Protocol) Room(maxModelLen, output int) int {
	return matrix.ContextRoom(maxModelLen, output, p.MarginTokens)
}

// Fit applies the context fitting rule: room = max_model_len - output - margin; a context up to
// TrimSlack above the room is trimmed to it; a larger one does not fit (ok = false).
func (p *Protocol) Fit(nominal, maxModelLen, output int) (tokens int, ok bool) {
	room := p.Room(maxModelLen, output)
	if room <= 0 {
		return 0, false
	}
	if nominal <= room {
		return nominal, true
	}
	if float64(nominal) <= float64(room)*(1+p.TrimSlack) {
		return room, true
	}
	return 0, false
}

// NeedModelLen is the smallest max_model_len at which a nominal context fits untrimmed with
// output tokens.
func (p *Protocol) NeedModelLen(nominal, output int) int { return nominal + output + p.MarginTokens }

// FitError is a context that Fit refuses.
type FitError struct {
	Nominal, MaxModelLen, Output int
	MarginTokens                 int
	TrimSlack                    float64
}

func (e *FitError) Error() string {
	unit := "tokens"
	if e.Output == 1 {
		unit = "token"
	}
	return fmt.Sprintf("%d tokens do not fit max_model_len %d with %d output %s and a %d-token margin (room %d; only contexts up to %.0f%% above the room are trimmed)",
		e.Nominal, e.MaxModelLen, e.Output, unit, e.MarginTokens, matrix.ContextRoom(e.MaxModelLen, e.Output, e.MarginTokens), 100*e.TrimSlack)
}

// FitContext parses a context label ("128K", "1019K", "131072") and fits it for a decode request
// with MaxOutput output tokens. A context that does not fit is a *FitError.
func (p *Protocol) FitContext(context string, maxModelLen int) (tokens int, err error) {
	return p.fitLabel(context, maxModelLen, p.MaxOutput)
}

func (p *Protocol) fitLabel(context string, maxModelLen, output int) (int, error) {
	n, err := matrix.ParseContext(context)
	if err != nil {
		return 0, err
	}
	t, ok := p.Fit(n, maxModelLen, output)
	if !ok {
		return 0, &FitError{Nominal: n, MaxModelLen: maxModelLen, Output: output, MarginTokens: p.MarginTokens, TrimSlack: p.TrimSlack}
	}
	return t, nil
}
