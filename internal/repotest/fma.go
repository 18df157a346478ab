package repotest

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// FusedTarget is a build whose compiler fuses a multiply and an add into one instruction,
// which rounds once where Go's source rounds twice, and the mnemonics it emits.
type FusedTarget struct {
	Env      []string
	Fused    *regexp.Regexp
	Describe string
}

// FusedTargets are the builds nodes run on that fuse: arm64, and amd64 at level v3. (The
// default amd64 build does not.)
var FusedTargets = []FusedTarget{
	{Env: []string{"GOARCH=arm64"}, Fused: regexp.MustCompile(`\b(FMADDD|FMSUBD|FNMADDD|FNMSUBD)\b`), Describe: "arm64"},
	{Env: []string{"GOARCH=amd64", "GOAMD64=v3"}, Fused: regexp.MustCompile(`\bVFN?M(ADD|SUB)[0-9]*S[DS]\b`), Describe: "amd64 v3"},
}

// FusedInstructions compiles pkg (an import path, from dir) for target and returns each line
// of its own assembly that holds a fused multiply-add, as file:line and the instruction.
func FusedInstructions(dir, pkg string, target FusedTarget) ([]string, error) {
	cmd := exec.Command("go", "build", "-o", os.DevNull, "-gcflags="+pkg+"=-S", pkg)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), target.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go build %s for %s: %v\n%s", pkg, target.Describe, err, out)
	}
	var found []string
	for _, l := range strings.Split(string(out), "\n") {
		if target.Fused.MatchString(l) {
			found = append(found, strings.TrimSpace(l))
		}
	}
	return found, nil
}
