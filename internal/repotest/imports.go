package repotest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// importClass is where an imported package comes from, in the order a file lists them:
// the standard library, other modules, then this module (goimports -local's grouping).
type importClass int

const (
	standard importClass = iota
	thirdParty
	local
)

func (c importClass) String() string {
	return [...]string{"the standard library", "another module", "this module"}[c]
}

func classOf(path string) importClass {
	switch first, _, _ := strings.Cut(path, "/"); {
	case path == Module || strings.HasPrefix(path, Module+"/"):
		return local
	case strings.Contains(first, "."):
		return thirdParty
	default:
		return standard
	}
}

// ImportGroupViolations reads every Go file under root (outside hidden directories,
// node_modules and testdata) and names each import block whose groups (runs of imports
// between blank lines) mix classes, or list them out of order: the standard library, then
// other modules, then this module, as `goimports -local` writes them.
func ImportGroupViolations(root string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		v, err := importGroupViolations(rel, src)
		found = append(found, v...)
		return err
	})
	return found, err
}

// importGroupViolations checks one file's source (see ImportGroupViolations).
func importGroupViolations(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	var found []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		last, prevEnd, highest := importClass(-1), 0, standard
		for i, spec := range gen.Specs {
			s := spec.(*ast.ImportSpec)
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			start := s.Pos()
			if s.Doc != nil {
				start = s.Doc.Pos()
			}
			c, line := classOf(p), fset.Position(start).Line
			newGroup := i == 0 || line > prevEnd+1
			switch {
			case !newGroup && c != last:
				found = append(found, fmt.Sprintf("%s:%d: %q (%s) shares a group with imports from %s; put a blank line between them", name, line, p, c, last))
			case newGroup && c < highest:
				found = append(found, fmt.Sprintf("%s:%d: %q (%s) comes after imports from %s; list the standard library, other modules, then this module", name, line, p, c, highest))
			}
			last, prevEnd, highest = c, fset.Position(s.End()).Line, max(highest, c)
		}
	}
	return found, nil
}
