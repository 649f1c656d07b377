// Package usage is the error of a command called wrongly: a flag value out of range, a missing or
// contradicting argument. Library packages that check a command's options (planner.Args,
// fleet.Options, server.Options, ...) return it naming the flag; the command maps it to exit
// status 2 and its usage hint. Any other error is a failed run.
package usage

import (
	"errors"
	"fmt"
)

// Error is an error in how a command was called.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf formats a usage error.
func Errorf(format string, a ...any) error { return &Error{fmt.Errorf(format, a...)} }

// Wrap marks err as a usage error (nil stays nil).
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{err}
}

// Is reports whether err is, or wraps, a usage error.
func Is(err error) bool {
	var u *Error
	return errors.As(err, &u)
}
