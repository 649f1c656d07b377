package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/workload"
)

func workloadCmd() *command {
	return &command{
		Name:  "workload",
		Short: "print an annotated example workload file (--example), or describe a workload file or preset",
		Long: `A workload file is TOML (strict: an unknown key is an error naming it) and is given to
'servesim simulate --workload FILE' and 'servesim plan --workload FILE'.

--example prints an annotated file with every key, which runs as it is (an open loop of chat
requests); the other kinds' tables (closed, trace, bench, vllm-bench) are in it, commented out.
With a file or preset name, prints what that workload runs, in one line.

Example:
  servesim workload --example > my-chat.toml
  servesim simulate --workload my-chat.toml --slo-ttft-ms 500
  servesim workload chat-bursty`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			example := fs.Bool("example", false, "print an annotated workload file that runs as it is")
			return func(args []string) error {
				switch {
				case *example && len(args) > 0:
					return usagef("--example takes no argument (got %q)", args[0])
				case *example:
					_, err := io.WriteString(e.stdout, workload.ExampleTOML)
					return err
				case len(args) != 1:
					return usagef("give --example, or one workload file or preset (%s)", presetNames())
				}
				s, err := loadWorkload(args[0])
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(e.stdout, "%s: %s\n", s.Name, s.Describe())
				return err
			}
		},
	}
}
