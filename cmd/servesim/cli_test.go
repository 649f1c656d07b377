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
