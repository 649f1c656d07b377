package hardware

import "testing"

// TestBuiltinCatalogCopies: the embedded catalog is parsed once, so each caller must get a copy
// that its changes (Merge, an edited entry or alias) do not carry into the next caller's.
func TestBuiltinCatalogCopies(t *testing.T) {
	a := BuiltinCatalog()
	want := len(a.GPUs)
	name := a.GPUs[0].Name
	a.GPUs[0].Name = "changed"
	if len(a.GPUs[0].Aliases) > 0 {
		a.GPUs[0].Aliases[0] = "changed"
	}
	a.Merge(&Catalog{GPUs: []GPU{{Name: "extra"}}})
	b := BuiltinCatalog()
	if len(b.GPUs) != want || b.GPUs[0].Name != name {
		t.Errorf("second catalog: %d GPUs, first %q; want %d, %q", len(b.GPUs), b.GPUs[0].Name, want, name)
	}
	for _, al := range b.GPUs[0].Aliases {
		if al == "changed" {
			t.Error("an alias changed in one copy shows in the next")
		}
	}
}

func BenchmarkBuiltinCatalog(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = BuiltinCatalog()
	}
}
