package noglobals

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowed lists the package-level vars the test tolerates for now, each with the reason: the
// package directory relative to the module root ("dir/..." matches dir and every package below
// it) and the var's name. Anything else must be a constant, a function, or a field of a value the
// caller holds. An entry that matches nothing fails the test, so that it is deleted.
var allowed = []struct{ pkg, name, why string }{}

// TestNoPackageLevelVars parses every non-test file of every library package (all but cmd/ and
// package main) and fails on a package-level var that is not
//   - an error sentinel: var ErrX = errors.New(...) or fmt.Errorf(...),
//   - an embed.FS (the embedded data, read-only),
//   - a compiled regexp: var xRE = regexp.MustCompile(...) (a *regexp.Regexp is immutable and
//     safe for concurrent use),
//   - a value computed once: var x = sync.OnceValue(func() T {...}) or sync.OnceValues(...), the
//     way to parse an embedded table once (the function returns the same value to every caller,
//     so what it returns must be immutable or handed out as a copy), or
//   - a compile-time check: var _ I = ...,
//
// unless allowed lists it. A library holding mutable state at package level answers differently
// depending on what ran before it in the same process (a loader hook set by the CLI, a lookup
// table someone appended to); mutable tables belong in functions or in a value the caller holds.
func TestNoPackageLevelVars(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	used := make([]bool, len(allowed))
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == "cmd" || name == "testdata" || name == "vendor" || (strings.HasPrefix(name, ".") && rel != ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		files++
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if name.Name == "_" || isEmbedFS(vs.Type) || (i < len(vs.Values) && (isErrorSentinel(vs.Values[i]) || isImmutable(vs.Values[i]))) {
						continue
					}
					if k := allowedIndex(dir, name.Name); k >= 0 {
						used[k] = true
						continue
					}
					t.Errorf("%s: package-level var %s in %s: make it a constant or a function, or keep it in a value the caller holds",
						fset.Position(name.Pos()), name.Name, dir)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("checked only %d files: is the walk finding the packages?", files)
	}
	for k, a := range allowed {
		if !used[k] {
			t.Errorf("allowed entry %s %s (%s) matches no package-level var any more: delete it", a.pkg, a.name, a.why)
		}
	}
}

// allowedIndex is the index of the allowed entry for the var name in the package at dir, or -1.
func allowedIndex(dir, name string) int {
	for k, a := range allowed {
		if a.name != name {
			continue
		}
		if base, ok := strings.CutSuffix(a.pkg, "/..."); ok {
			if dir == base || strings.HasPrefix(dir, base+"/") {
				return k
			}
		} else if dir == a.pkg {
			return k
		}
	}
	return -1
}

func isEmbedFS(t ast.Expr) bool {
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "embed" && sel.Sel.Name == "FS"
}

func isErrorSentinel(v ast.Expr) bool {
	pkg, fn := calledFunc(v)
	return (pkg == "errors" && fn == "New") || (pkg == "fmt" && fn == "Errorf")
}

// isImmutable reports whether v builds a value that never changes once the package is
// initialised: a compiled regexp, or a sync.OnceValue(s) whose function computes it once.
func isImmutable(v ast.Expr) bool {
	pkg, fn := calledFunc(v)
	return (pkg == "regexp" && fn == "MustCompile") || (pkg == "sync" && (fn == "OnceValue" || fn == "OnceValues"))
}

// calledFunc is pkg and name of a call pkg.Name(...) (a generic one too: pkg.Name[T](...)), or
// empty strings.
func calledFunc(v ast.Expr) (pkg, name string) {
	call, ok := v.(*ast.CallExpr)
	if !ok {
		return "", ""
	}
	fun := call.Fun
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return x.Name, sel.Sel.Name
}

// TestClassify checks the rule on small declarations: what is tolerated and what is not.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		expr string
		ok   bool
	}{
		{`regexp.MustCompile("^a+$")`, true},
		{`sync.OnceValue(func() int { return 1 })`, true},
		{`sync.OnceValues(func() (int, error) { return 1, nil })`, true},
		{`sync.OnceValue[int](f)`, true},
		{`errors.New("x")`, true},
		{`map[string]int{}`, false},
		{`make([]int, 3)`, false},
		{`regexp.Compile("a")`, false},
		{`new(sync.Mutex)`, false},
		{`sync.OnceFunc(f)`, false},
	} {
		e, err := parser.ParseExpr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := isErrorSentinel(e) || isImmutable(e); got != c.ok {
			t.Errorf("%s: tolerated %v, want %v", c.expr, got, c.ok)
		}
	}
}
