package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/buildinfo"
)

func versionCmd() *command {
	return &command{
		Name:  "version",
		Short: "print servesim's version",
		Long: `Prints the version of this servesim binary: the module version for 'go install ...@vX',
else the release line and the git revision the binary was built from. JSON outputs and the
HTML report carry the same string.

Example:
  servesim version
  servesim --version`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments (got %q)", args[0])
				}
				fmt.Fprintf(e.stdout, "servesim %s (%s, %s/%s)\n", buildinfo.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
		},
	}
}
