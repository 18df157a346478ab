// Package bindgen turns forge's build output into the committed contract artifacts and the Go
// bindings generated from them with go-ethereum's abigen (v2). The artifacts (ABI and creation
// bytecode of every contract under contracts/src) are committed so that the bindings can be
// regenerated, and checked for drift, without a Solidity compiler.
package bindgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi/abigen"
)

// Artifact is the committed form of one compiled contract.
type Artifact struct {
	// Name is the contract name, which is also the Go type name of its binding.
	Name string `json:"contractName"`
	// Source is the Solidity file it comes from, relative to the repository root.
	Source string `json:"sourceName"`
	// ABI is the contract's JSON ABI.
	ABI json.RawMessage `json:"abi"`
	// Bytecode is the creation bytecode, 0x-prefixed hex; "0x" for interfaces and abstract
	// contracts, which get bindings but cannot be deployed.
	Bytecode string `json:"bytecode"`
}

// forgeArtifact is the part of forge's out/<File>.sol/<Name>.json that we keep.
type forgeArtifact struct {
	ABI      json.RawMessage `json:"abi"`
	Bytecode struct {
		Object string `json:"object"`
	} `json:"bytecode"`
	Metadata struct {
		Settings struct {
			CompilationTarget map[string]string `json:"compilationTarget"`
		} `json:"settings"`
	} `json:"metadata"`
}

// SourceDir is where the contracts to bind live, relative to the repository root (foundry.toml's
// src). Contracts compiled from elsewhere (tests, scripts) get no bindings.
const SourceDir = "contracts/src"

// FromForge collects the artifacts of every contract compiled from a .sol file in SourceDir
// under the repository root out of forge's output dir outDir, sorted by name.
func FromForge(outDir, root string) ([]Artifact, error) {
	srcDir := filepath.Join(root, filepath.FromSlash(SourceDir))
	sources, err := filepath.Glob(filepath.Join(srcDir, "*.sol"))
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no Solidity sources in %s", srcDir)
	}
	var arts []Artifact
	for _, src := range sources {
		dir := filepath.Join(outDir, filepath.Base(src))
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no forge output for %s in %s: run forge build first", src, dir)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var fa forgeArtifact
			if err := json.Unmarshal(raw, &fa); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			// Forge puts several versions of a contract in one folder as Name.0.8.x.json;
			// the project pins one compiler, so a name with a dot is a stale leftover.
			if strings.Contains(name, ".") {
				return nil, fmt.Errorf("%s: unexpected artifact name; clean %s and rebuild", f, outDir)
			}
			source := SourceDir + "/" + filepath.Base(src)
			if fa.Metadata.Settings.CompilationTarget[source] != name {
				// The folder of a file can also hold contracts compiled from elsewhere
				// under the same file name; only the file's own contracts are kept.
				continue
			}
			if string(compact(fa.ABI)) == "[]" {
				continue // a library of internal functions: nothing to call from Go
			}
			arts = append(arts, Artifact{Name: name, Source: source, ABI: compact(fa.ABI), Bytecode: fa.Bytecode.Object})
		}
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].Name < arts[j].Name })
	return arts, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// Encode renders an artifact as the committed file's bytes.
func Encode(a Artifact) ([]byte, error) {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Load reads every committed artifact in dir, sorted by name.
func Load(dir string) ([]Artifact, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no artifacts in %s", dir)
	}
	arts := make([]Artifact, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var a Artifact
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		a.ABI = compact(a.ABI)
		if a.Name+".json" != filepath.Base(f) {
			return nil, fmt.Errorf("%s: holds contract %q", f, a.Name)
		}
		arts = append(arts, a)
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].Name < arts[j].Name })
	return arts, nil
}

// Bindings generates the Go source of the bindings for arts in package pkg.
func Bindings(arts []Artifact, pkg string) ([]byte, error) {
	if len(arts) == 0 {
		return nil, errors.New("no artifacts to bind")
	}
	var types, abis, codes []string
	for _, a := range arts {
		types = append(types, a.Name)
		abis = append(abis, string(a.ABI))
		code := a.Bytecode
		if code == "0x" {
			code = ""
		}
		codes = append(codes, code)
	}
	src, err := abigen.BindV2(types, abis, codes, pkg, map[string]string{}, map[string]string{})
	if err != nil {
		return nil, fmt.Errorf("abigen: %w", err)
	}
	header := "// Code generated by contracts/internal/bindgen from contracts/artifacts; DO NOT EDIT.\n" +
		"// Regenerate with `make contracts` (after a Solidity change) or `go generate ./contracts`.\n\n"
	out, err := format.Source([]byte(header + dedupeTypes(prefixOutputs(stripHeader(src)))))
	if err != nil {
		return nil, fmt.Errorf("format bindings: %w", err)
	}
	return out, nil
}

var (
	metaDataLine = regexp.MustCompile(`(?m)^// (\w+)MetaData contains all meta data concerning the \w+ contract\.$`)
	outputDecl   = regexp.MustCompile(`(?m)^type (\w+)Output struct \{\n(?:\t.*\n)*\}\n`)
	// typeDecl matches a struct type abigen declares at the top level, with its doc comment.
	typeDecl = regexp.MustCompile(`(?m)^(?:// .*\n)*type (\w+) struct \{\n(?:\t.*\n)*\}\n`)
)

// prefixOutputs names the struct of a method's several return values after its contract too
// (ReputationRegistryGetSummaryOutput) when two contracts declare that name differently:
// abigen v2 names it after the method alone (GetSummaryOutput), and the reputation and
// validation registries both have a getSummary, with other returns. A name every contract
// declares alike (an interface and its implementation) is left as it is, for dedupeTypes.
// Each contract's code runs from its MetaData comment to the next one.
func prefixOutputs(src string) string {
	starts := metaDataLine.FindAllStringSubmatchIndex(src, -1)
	if len(starts) == 0 {
		return src
	}
	type section struct{ contract, code string }
	var sections []section
	decls := map[string]map[string]bool{} // method name -> its distinct declarations
	for i, m := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		sec := section{contract: src[m[2]:m[3]], code: src[m[0]:end]}
		for _, d := range outputDecl.FindAllStringSubmatch(sec.code, -1) {
			if decls[d[1]] == nil {
				decls[d[1]] = map[string]bool{}
			}
			decls[d[1]][d[0]] = true
		}
		sections = append(sections, sec)
	}
	var b strings.Builder
	b.WriteString(src[:starts[0][0]])
	for _, sec := range sections {
		code := sec.code
		for _, d := range outputDecl.FindAllStringSubmatch(sec.code, -1) {
			if len(decls[d[1]]) > 1 {
				code = regexp.MustCompile(`\b`+d[1]+`Output\b`).ReplaceAllString(code, sec.contract+d[1]+"Output")
			}
		}
		b.WriteString(code)
	}
	return b.String()
}

// dedupeTypes keeps the first of identical struct declarations. abigen names the struct of a
// method's several return values after the method alone (JobsOutput), so an interface and the
// contract implementing it, bound in one package, declare the same struct twice. Declarations
// that share a name but differ are left for the compiler to refuse (prefixOutputs renamed
// the output structs among them).
func dedupeTypes(src string) string {
	seen := map[string]bool{}
	return typeDecl.ReplaceAllStringFunc(src, func(decl string) string {
		if seen[decl] {
			return ""
		}
		seen[decl] = true
		return decl
	})
}

// stripHeader drops abigen's own "Code generated" line so the file carries exactly one.
func stripHeader(src string) string {
	lines := strings.SplitN(src, "\n", 3)
	if len(lines) == 3 && strings.HasPrefix(lines[0], "// Code generated") {
		if strings.TrimSpace(lines[1]) == "// This file is a generated binding and any manual changes will be lost." {
			return lines[2]
		}
		return lines[1] + "\n" + lines[2]
	}
	return src
}
