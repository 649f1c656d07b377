package vllmcmd

import (
	"path"
	"regexp"
	"strings"
)

// The shell around a command line, shared by the readers of `vllm serve` (Parse) and of `vllm
// bench` (package vllmbench): what comes before the program, what ends the command, and what is
// a redirection rather than an argument.

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

var pythonRE = regexp.MustCompile(`^python[0-9]*(\.[0-9]+)*$`)

// redirectRE matches a shell redirection; group 2 is the target when it is glued on.
var redirectRE = regexp.MustCompile(`^([0-9]*>>?|&>>?|[0-9]*>&|[0-9]*<<?)(.*)$`)

// ShellPrefix reads the words before the program of a shell command line: VAR=value
// assignments, env with its options, nohup, exec and time. It returns the assignments in order
// ("VAR=value"), the index of the first word after the prefix (len(words) when nothing
// follows) and the options of env it does not know.
func ShellPrefix(words []string) (assign []string, next int, unknown []string) {
	env := false
	i := 0
	for ; i < len(words); i++ {
		a := words[i]
		switch {
		case assignRE.MatchString(a):
			assign = append(assign, a)
		case !env && (a == "env" || strings.HasSuffix(a, "/env")):
			env = true
		case env && (a == "-u" || a == "--unset"):
			i++ // skip the name too
		case env && strings.HasPrefix(a, "-"):
			switch {
			case a == "-", a == "-i", a == "--ignore-environment", a == "--", a == "-0", a == "--null",
				strings.HasPrefix(a, "--unset="):
			default:
				unknown = append(unknown, a)
			}
		case a == "nohup" || a == "exec" || a == "time":
		default:
			return assign, i, unknown
		}
	}
	return assign, min(i, len(words)), unknown
}

// IsControlOperator reports whether a word is a shell control operator, which ends a command.
func IsControlOperator(a string) bool {
	switch a {
	case "|", "||", "&&", ";", "&", "|&", ";;":
		return true
	}
	return false
}

// Redirection reports whether a word is a shell redirection (>, >>, 2>, &>, 2>&1, <, ...), and
// whether its target is the next word rather than glued on.
func Redirection(a string) (ok, targetNext bool) {
	m := redirectRE.FindStringSubmatch(a)
	if m == nil {
		return false, false
	}
	return true, m[2] == ""
}

// IsPython reports whether a program is a Python interpreter (python, python3, /usr/bin/python3.12).
func IsPython(prog string) bool { return pythonRE.MatchString(path.Base(prog)) }

func isRedirection(a string) bool {
	ok, _ := Redirection(a)
	return ok
}
