package main

import "testing"

// TestCommandList: the declared list is in name order (help prints it as is) and names are unique.
func TestCommandList(t *testing.T) {
	cs := commands()
	for i := 1; i < len(cs); i++ {
		if cs[i-1].Name >= cs[i].Name {
			t.Errorf("commands(): %q before %q: keep the list sorted by name, without duplicates", cs[i-1].Name, cs[i].Name)
		}
	}
}

// TestVersionFlag: servesim --version prints what 'servesim version' prints, as most tools do.
func TestVersionFlag(t *testing.T) {
	_, want, _ := runCLI("version")
	for _, f := range []string{"--version", "-V"} {
		if c, got, errs := runCLI(f); c != 0 || got != want {
			t.Errorf("servesim %s: exit %d, %q (stderr %q), want %q", f, c, got, errs, want)
		}
	}
}
