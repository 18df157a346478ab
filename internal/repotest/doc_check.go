package repotest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// DocViolations parses the non-test Go files of p and reports a package comment count other
// than one, a package comment that does not start the Go way ("Package name ..." or, for a
// command, "Command name ..."), and exported names without a doc comment. Generated files
// are not held to the exported-name rule.
func DocViolations(p Package) ([]string, error) {
	fset := token.NewFileSet()
	var out []string
	var docFiles []string
	for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Doc != nil {
			docFiles = append(docFiles, name)
			want := "Package " + p.Name + " "
			if p.Name == "main" {
				want = "Command " + filepath.Base(p.Dir) + " "
			}
			if !strings.HasPrefix(f.Doc.Text(), want) {
				out = append(out, fmt.Sprintf("%s/%s: package comment should start %q", p.ImportPath, name, want))
			}
		}
		if !ast.IsGenerated(f) {
			out = append(out, undocumented(fset, f)...)
		}
	}
	switch len(docFiles) {
	case 0:
		out = append(out, fmt.Sprintf("%s: no package comment (add a doc.go)", p.ImportPath))
	case 1:
	default:
		out = append(out, fmt.Sprintf("%s: package comment in %d files (%s); keep exactly one", p.ImportPath, len(docFiles), strings.Join(docFiles, ", ")))
	}
	return out, nil
}

// undocumented reports exported top-level names of f without a doc comment. In a grouped
// declaration the group's comment covers its members.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(pos token.Pos, name string) {
		out = append(out, fmt.Sprintf("%s: exported %s has no doc comment", fset.Position(pos), name))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			report(d.Pos(), d.Name.Name)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT || d.Doc != nil {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil {
						report(s.Pos(), s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && s.Comment == nil {
							report(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedRecv reports whether a method's receiver type is exported, so its methods are part
// of the API. Methods that satisfy well-known interfaces (Error, Unwrap, String) still need a
// line: it is cheap, and says which interface they serve.
func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
