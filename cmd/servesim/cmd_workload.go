package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/workload"
)

func workloadCmd() *command {
	return &command{
		Name:  "workload",
		Short: "print an annotated example workload file (--example), or describe a workload file or preset",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			example := fs.Bool("example", false, "print an annotated workload file that runs as it is")
			return func(args []string) error {
				switch {
				case *example && len(args) > 0:
					return usage.Errorf("--example takes no argument (got %q)", args[0])
				case *example:
					_, err := io.WriteString(e.stdout, workload.ExampleTOML)
					return err
				case len(args) != 1:
					return usage.Errorf("give --example, or one workload file or preset (%s)", workload.PresetNames())
				}
				s, err := workload.LoadArg("--workload", args[0])
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(e.stdout, "%s: %s\n", s.Name, s.Describe())
				return err
			}
		},
	}
}
