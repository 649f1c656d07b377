package vllmcmd

import (
	"reflect"
	"testing"
)

func TestShellPrefix(t *testing.T) {
	for _, c := range []struct {
		words   []string
		assign  []string
		next    int
		unknown []string
	}{
		{[]string{"vllm", "serve", "m"}, nil, 0, nil},
		{[]string{"A=1", "env", "-u", "X", "B=2", "nohup", "vllm"}, []string{"A=1", "B=2"}, 6, nil},
		{[]string{"time", "exec", "python3", "-m"}, nil, 2, nil},
		{[]string{"env", "-S", "vllm"}, nil, 2, []string{"-S"}},
		{[]string{"A=1", "env"}, []string{"A=1"}, 2, nil},
		{[]string{"env", "-u"}, nil, 2, nil},
	} {
		a, n, u := ShellPrefix(c.words)
		if !reflect.DeepEqual(a, c.assign) || n != c.next || !reflect.DeepEqual(u, c.unknown) {
			t.Errorf("ShellPrefix(%q) = %q, %d, %q; want %q, %d, %q", c.words, a, n, u, c.assign, c.next, c.unknown)
		}
	}
}

func TestRedirection(t *testing.T) {
	for _, c := range []struct {
		w              string
		ok, targetNext bool
	}{{">", true, true}, {">log", true, false}, {"2>&1", true, false}, {"&>>", true, true}, {"<", true, true}, {"--x", false, false}, {"a>b", false, false}} {
		ok, next := Redirection(c.w)
		if ok != c.ok || next != c.targetNext {
			t.Errorf("Redirection(%q) = %v, %v; want %v, %v", c.w, ok, next, c.ok, c.targetNext)
		}
	}
	if !IsPython("/usr/bin/python3.12") || IsPython("pythonista") || !IsControlOperator("&&") || IsControlOperator("-x") {
		t.Error("IsPython or IsControlOperator")
	}
}
