package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/buildinfo"
	"github.com/servesim/servesim/internal/usage"
)

func versionCmd() *command {
	return &command{
		Name:  "version",
		Short: "print servesim's version",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			return func(args []string) error {
				if len(args) > 0 {
					return usage.Errorf("version takes no arguments (got %q)", args[0])
				}
				fmt.Fprintf(e.stdout, "servesim %s (%s, %s/%s)\n", buildinfo.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
		},
	}
}
