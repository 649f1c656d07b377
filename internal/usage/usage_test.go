package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{Errorf("--x %d: want 1", 2), true},
		{fmt.Errorf("loading: %w", Errorf("--y")), true},
		{Wrap(errors.New("plain")), true},
		{errors.New("plain"), false},
		{nil, false},
	} {
		if got := Is(c.err); got != c.want {
			t.Errorf("Is(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if Wrap(nil) != nil {
		t.Errorf("Wrap(nil) = %v, want nil", Wrap(nil))
	}
	if got, want := Errorf("--x %d: want 1", 2).Error(), "--x 2: want 1"; got != want {
		t.Errorf("Errorf: got %q, want %q", got, want)
	}
}
