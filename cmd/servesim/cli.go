package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/servesim/servesim/internal/editdist"
	"github.com/servesim/servesim/internal/usage"
	"github.com/spf13/pflag"
)

// command is one subcommand: its flags, help and action.
type command struct {
	Name  string
	Args  string // usage of positional arguments
	Short string // one line; the long help is help/<Name>.txt (help.go)
	// NoArgs: the command takes no positional arguments.
	NoArgs bool
	// Setup registers flags and returns the action to run with the remaining arguments.
	Setup func(fs *pflag.FlagSet, env *env) func(args []string) error
}

// env carries the output streams to a command.
type env struct {
	stdout, stderr io.Writer
	// quiet (--quiet, every command): no progress and no informational lines on stderr; warnings
	// and errors still print.
	quiet bool
}

// info is where informational lines go: stderr, or nowhere with --quiet.
func (e *env) info() io.Writer {
	if e.quiet {
		return io.Discard
	}
	return e.stderr
}

// commands is every subcommand, in the order 'servesim help' lists them.
func commands() []*command {
	return []*command{
		capacityCmd(),
		configCmd(),
		explainCmd(),
		fitCmd(),
		fleetCmd(),
		hardwareCmd(),
		importCmd(),
		kernelsCmd(),
		matrixCmd(),
		mergeCmd(),
		modelCmd(),
		planCmd(),
		plotCmd(),
		reportCmd(),
		serveCmd(),
		simulateCmd(),
		validateCmd(),
		versionCmd(),
		workloadCmd(),
	}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, `servesim: a discrete-event simulator and capacity planner for LLM serving on vLLM-style engines.

Usage:
  servesim <command> [flags] [arguments]

Commands:`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Short)
	}
	fmt.Fprintln(w, `
Run 'servesim <command> --help' for a command's flags.
With no --config, commands use the embedded seed scenario: GLM-5.3-Flash NVFP4 on
4 x RTX PRO 6000 Blackwell Server Edition, vLLM TP4 + EP, DFlash k=7, llm-inference-bench.
Your own deployment: --vllm-cmd "vllm serve MODEL ..." --gpu NAME (flags not given take
vLLM's defaults for the version, GPU and model; see 'servesim import --help').`)
}

// run is the whole program: it returns the exit code (0 ok, 1 failed run, 2 usage).
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "servesim: internal error: %v\n(this is a bug in servesim; please report it with the command line)\n", r)
			code = 1
		}
	}()
	if len(args) == 0 {
		printHelp(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "--version", "-version", "-V":
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	if name == "plan" && slices.Contains(args[1:], "--fleet") {
		// plan --fleet is the fleet command's plan: the same flags, one implementation.
		rest := []string{"fleet", "--plan"}
		for _, a := range args[1:] {
			if a != "--fleet" {
				rest = append(rest, a)
			}
		}
		name, args = "fleet", rest
	}
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c := findCommand(args[1]); c != nil {
				fs := newFlagSet(c, stdout)
				c.Setup(fs, &env{stdout: stdout, stderr: stderr})
				fs.BoolP("quiet", "q", false, "no progress or informational lines on stderr (warnings and errors still print)")
				printCommandHelp(stdout, c, fs)
				return 0
			}
		}
		printHelp(stdout)
		return 0
	}
	c := findCommand(name)
	if c == nil {
		if s := nearestCommand(name); s != "" {
			fmt.Fprintf(stderr, "servesim: unknown command %q: did you mean %q?\nRun 'servesim help' for the commands.\n", name, s)
			return 2
		}
		fmt.Fprintf(stderr, "servesim: unknown command %q\n\n", name)
		printHelp(stderr)
		return 2
	}
	fs := newFlagSet(c, stderr)
	e := &env{stdout: stdout, stderr: stderr}
	action := c.Setup(fs, e)
	fs.BoolVarP(&e.quiet, "quiet", "q", false, "no progress or informational lines on stderr (warnings and errors still print)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandHelp(stdout, c, fs)
			return 0
		}
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			if s := nearestFlag(fs, f); s != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", s)
			}
		}
		fmt.Fprintf(stderr, "servesim %s: %s\n", c.Name, msg)
		fmt.Fprintf(stderr, "Run 'servesim %s --help' for usage.\n", c.Name)
		return 2
	}
	if err := outputNotInput(fs); err != nil {
		fmt.Fprintf(stderr, "servesim %s: %v\nRun 'servesim %s --help' for usage.\n", c.Name, err, c.Name)
		return 2
	}
	var err error
	if c.NoArgs && len(fs.Args()) > 0 {
		err = usage.Errorf("unexpected argument %q", fs.Args()[0])
	} else {
		err = action(fs.Args())
	}
	if err != nil {
		if usage.Is(err) {
			fmt.Fprintf(stderr, "servesim %s: %v\nRun 'servesim %s --help' for usage.\n", c.Name, err, c.Name)
			return 2
		}
		fmt.Fprintf(stderr, "servesim %s: %v\n", c.Name, err)
		return 1
	}
	return 0
}

// nearestCommand is the command a mistyped name nearly spells ("matirx": matrix), "" when none
// is near (at most two edits, letters swapped counting one).
func nearestCommand(name string) string {
	best, bestD := "", 0
	for _, c := range commands() {
		if d := editdist.Distance(strings.ToLower(name), c.Name); best == "" || d < bestD {
			best, bestD = c.Name, d
		}
	}
	if bestD > 2 || bestD >= len(best) {
		return ""
	}
	return best
}

// nearestFlag is the command's flag a mistyped name nearly spells, "" when none is near.
func nearestFlag(fs *pflag.FlagSet, name string) string {
	name, _, _ = strings.Cut(name, "=")
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) }) // (in lexical order)
	return editdist.Nearest(name, names)
}

func newFlagSet(c *command, out io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("servesim "+c.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

func printCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: servesim %s [flags] %s\n\n%s\n", c.Name, c.Args, c.Short)
	if long := longHelp(c.Name); long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(long))
	}
	if u := fs.FlagUsages(); u != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", u)
	}
}

// outputNotInput refuses an output flag (--out, --params-out, --report-out, --series) that names
// the same file as another flag or an argument: writing it would replace one of the command's
// inputs.
func outputNotInput(fs *pflag.FlagSet) error {
	outs := map[string]os.FileInfo{}
	fs.Visit(func(f *pflag.Flag) {
		if f.Name == "out" || strings.HasSuffix(f.Name, "-out") || f.Name == "series" {
			if st, err := os.Stat(f.Value.String()); err == nil && st.Mode().IsRegular() {
				outs["--"+f.Name] = st
			}
		}
	})
	if len(outs) == 0 {
		return nil
	}
	check := func(what, path string) error {
		st, err := os.Stat(path)
		if err != nil {
			return nil
		}
		for name, o := range outs {
			if name != what && os.SameFile(o, st) {
				return fmt.Errorf("%s %s is also an input (%s): write the output to another file", name, path, what)
			}
		}
		return nil
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if err = check("--"+f.Name, v); err != nil {
				return
			}
		}
	})
	for _, a := range fs.Args() {
		if err == nil {
			err = check("argument", a)
		}
	}
	return err
}
