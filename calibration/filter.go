package calibration

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
)

// Filter selects cells: conditions joined by "," (AND) over phase, context and concurrency, each
// with one of = != < <= > >=. Contexts take tokens or a K suffix ("context<=64K"); phase takes
// prefill or decode. The empty filter matches everything.
type Filter struct {
	src   string
	conds []cond
	// custom, when set, replaces the conditions (cross-validation folds).
	custom func(*matrix.Cell) bool
}

type cond struct {
	field string
	op    string
	num   int
	str   string
}

// ParseExclude parses a list of exclusion filters (Problem.Exclude): each entry is a filter
// expression; "none" entries are skipped.
func ParseExclude(exprs []string) ([]Filter, error) {
	var out []Filter
	for _, x := range exprs {
		if strings.TrimSpace(x) == "none" {
			continue
		}
		f, err := ParseFilter(x)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseFilter parses a filter expression, naming the bad condition and what was expected.
func ParseFilter(s string) (Filter, error) {
	f := Filter{src: strings.TrimSpace(s)}
	if f.src == "" {
		return f, nil
	}
	for _, part := range strings.Split(f.src, ",") {
		c, err := parseCond(strings.TrimSpace(part))
		if err != nil {
			return Filter{}, fmt.Errorf("filter %q: %w", s, err)
		}
		f.conds = append(f.conds, c)
	}
	return f, nil
}

func parseCond(p string) (cond, error) {
	if p == "" {
		return cond{}, fmt.Errorf("empty condition: want field op value, e.g. concurrency<=8")
	}
	i := strings.IndexAny(p, "=!<>")
	if i <= 0 {
		return cond{}, fmt.Errorf("condition %q: want field op value with op one of = != < <= > >=", p)
	}
	field := strings.ToLower(strings.TrimSpace(p[:i]))
	rest := p[i:]
	op := ""
	for _, o := range []string{"!=", "<=", ">=", "=", "<", ">"} {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	if op == "" {
		return cond{}, fmt.Errorf("condition %q: unknown operator (want = != < <= > >=)", p)
	}
	val := strings.TrimSpace(strings.TrimPrefix(rest, op))
	if strings.HasPrefix(val, "=") {
		return cond{}, fmt.Errorf("condition %q: unknown operator (want = != < <= > >=)", p)
	}
	c := cond{field: field, op: op}
	switch field {
	case "phase":
		if op != "=" && op != "!=" {
			return cond{}, fmt.Errorf("condition %q: phase takes only = or !=", p)
		}
		switch strings.ToLower(val) {
		case "prefill", "decode":
			c.str = strings.ToLower(val)
		default:
			return cond{}, fmt.Errorf("condition %q: phase must be prefill or decode", p)
		}
	case "context", "ctx":
		c.field = "context"
		n, err := matrix.ParseContext(val)
		if err != nil {
			return cond{}, fmt.Errorf("condition %q: %w", p, err)
		}
		c.num = n
	case "concurrency", "c":
		c.field = "concurrency"
		n, err := strconv.Atoi(val)
		if err != nil || n <= 0 {
			return cond{}, fmt.Errorf("condition %q: concurrency must be a positive integer", p)
		}
		c.num = n
	default:
		return cond{}, fmt.Errorf("condition %q: unknown field %q (want phase, context or concurrency)", p, field)
	}
	return c, nil
}

func compare(a int, op string, b int) bool {
	switch op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	}
	return a >= b
}

// contextValue is the context a condition compares: the size its label names (KiB of tokens), so
// a filter reads like the table ("1019K" compares as 1,043,456 tokens, "1024K" as 1,048,576).
func contextValue(c *matrix.Cell) int {
	if n, err := matrix.ParseContext(c.Context); err == nil {
		return n
	}
	return c.ContextTokens
}

// Match reports whether cell c satisfies every condition.
func (f Filter) Match(c *matrix.Cell) bool {
	if f.custom != nil {
		return f.custom(c)
	}
	for _, k := range f.conds {
		ok := true
		switch k.field {
		case "phase":
			ok = (string(c.Phase) == k.str) == (k.op == "=")
		case "context":
			ok = compare(contextValue(c), k.op, k.num)
		case "concurrency":
			ok = compare(c.Concurrency, k.op, k.num)
		}
		if !ok {
			return false
		}
	}
	return true
}

// Empty reports whether the filter has no conditions.
func (f Filter) Empty() bool { return len(f.conds) == 0 && f.custom == nil }

func (f Filter) String() string { return f.src }
