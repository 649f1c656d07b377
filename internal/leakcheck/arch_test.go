package leakcheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/servesim/servesim/"

// TestArchitecturePackageMap holds ARCHITECTURE.md's package map to the code: every package of
// the module has a row (internal/... one for all), and the rows are in import order: a package
// imports only packages of rows above its own.
func TestArchitecturePackageMap(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]int{}
	sec := string(doc)
	i := strings.Index(sec, "## Package map")
	if i < 0 {
		t.Fatal("ARCHITECTURE.md: no \"## Package map\" section")
	}
	sec = sec[i:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	for n, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/._]+)` \\|").FindAllStringSubmatch(sec, -1) {
		row[strings.TrimSuffix(m[1], "/...")] = n
	}
	imports := packageImports(t, root)
	if len(imports) < 20 {
		t.Fatalf("found %d packages: is the walk finding them?", len(imports))
	}
	rowOf := func(p string) (int, bool) {
		if strings.HasPrefix(p, "internal/") {
			p = "internal"
		}
		if r, ok := row[p]; ok {
			return r, true
		}
		// A package below another package's directory (validate/corpus) shares its row.
		for q, r := range row {
			if strings.HasPrefix(p, q+"/") {
				return r, true
			}
		}
		return 0, false
	}
	for p, ims := range imports {
		r, ok := rowOf(p)
		if !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md's package map", p)
			continue
		}
		for _, im := range ims {
			ri, ok := rowOf(im)
			if ok && ri > r {
				t.Errorf("ARCHITECTURE.md: %s imports %s, whose row is below its own: the map must be in import order", p, im)
			}
		}
	}
}

// packageImports maps every package of the module (directory relative to root) to the module
// packages its non-test files import.
func packageImports(t *testing.T, root string) map[string][]string {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && path != root) || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if q, ok := strings.CutPrefix(p, module); ok && q != pkg {
				out[pkg] = append(out[pkg], q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
