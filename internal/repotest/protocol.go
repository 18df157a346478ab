package repotest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ProtocolConstant is a constant of the wire protocol found in the source: a JWS typ, a
// gossip topic, a stream protocol id, a DHT namespace or key prefix, a body kind, a sync set
// or request name, a URI under surety.dev.
type ProtocolConstant struct {
	Pos   string // file:line
	Name  string // package.Name
	Value string
}

// protocolValue matches the values that are the protocol's by their shape: a JWS or JWT typ
// (…+jws, …+jwt), an id under /surety (topics, protocols, the DHT prefix, key prefixes),
// Surety's namespaces and body kinds (surety-…, surety.…), Surety's URIs (problem types,
// extension URIs) and credential types (Surety…Credential).
var protocolValue = regexp.MustCompile(`(\+jw[st]$)|(^/surety)|(^surety[.-])|(^https?://surety\.dev/)|(^Surety[A-Za-z]*Credential$)`)

// protocolName matches the names of constants that are the protocol's whatever their value:
// gossip topics, stream protocols, DHT namespaces, sync sets and request kinds, JWS types.
var protocolName = regexp.MustCompile(`(Topic|Protocol|Namespace|Set|SetName|Kind|Type)$`)

// ProtocolConstants parses the non-test Go files of p and returns its string constants that
// belong to the wire protocol: by their value (protocolValue), or, for constants whose name
// says so (protocolName), whatever their value unless it is empty. Constants of a declared
// type other than string (enums such as KeyType) are not protocol names by their name alone.
func ProtocolConstants(p Package) ([]ProtocolConstant, error) {
	fset := token.NewFileSet()
	var out []ProtocolConstant
	for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.GenDecl)
			if !ok || d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil || v == "" {
						continue
					}
					typed := vs.Type != nil && !isIdent(vs.Type, "string")
					byName := protocolName.MatchString(id.Name) && !typed
					if !protocolValue.MatchString(v) && !byName {
						continue
					}
					out = append(out, ProtocolConstant{Pos: fset.Position(id.Pos()).String(), Name: p.Name + "." + id.Name, Value: v})
				}
			}
		}
	}
	return out, nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// UndocumentedProtocol lists the constants whose value docs (docs/PROTOCOL.md) does not
// name in code quotes (`value`), one line each, sorted.
func UndocumentedProtocol(consts []ProtocolConstant, docs string) []string {
	var out []string
	for _, c := range consts {
		if w := docForm(c.Value); !strings.Contains(docs, w) {
			out = append(out, fmt.Sprintf("%s: %s = %q is a protocol constant that docs/PROTOCOL.md does not name (write it as %s)", c.Pos, c.Name, c.Value, w))
		}
	}
	sort.Strings(out)
	return out
}

// docForm is how the document names value: in code quotes, as it is when it is printable
// text, else in Go's escaped form (a note signature type such as \x01).
func docForm(value string) string {
	if strconv.CanBackquote(value) {
		return "`" + value + "`"
	}
	q := strconv.Quote(value)
	return "`" + q[1:len(q)-1] + "`"
}
