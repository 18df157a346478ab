package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistypedCommandsAndFlagsSuggestTheRightOne: an unknown command, subcommand or flag
// says which one was probably meant (never a deprecated spelling), and nothing when none is
// close.
func TestMistypedCommandsAndFlagsSuggestTheRightOne(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" : no suggestion
	}{
		{[]string{"stak"}, `did you mean "stake"?`},
		{[]string{"bountty", "list"}, `did you mean "bounty"?`},
		{[]string{"zzz"}, ""},
		{[]string{"stake", "ad"}, `did you mean "add"?`},
		{[]string{"bounty", "clam", "1"}, `did you mean "claim"?`},
		{[]string{"stake", "add", "--ammount", "1"}, "did you mean --amount?"},
		{[]string{"bounty", "post", "--arbitr", "x"}, "did you mean --arbiter?"},
		{[]string{"node", "--confirm", "2"}, "did you mean --confirmations?"},
		{[]string{"did", "bind", "--dev-acount", "1"}, "did you mean --dev-account?"},
		{[]string{"deploy", "--dev-ky", "1"}, ""}, // only the deprecated --dev-key is close
		{[]string{"completion", "bsh"}, "did you mean bash?"},
	}
	for _, tt := range tests {
		r := start(t, tt.args...)
		code := r.wait(t)
		msg := r.stderr.String()
		if code != exitUsage || strings.Count(msg, "\n") != 1 {
			t.Errorf("%v: exit %d, want a one-line usage error:\n%s", tt.args, code, msg)
		}
		if tt.want == "" && strings.Contains(msg, "did you mean") || !strings.Contains(msg, tt.want) {
			t.Errorf("%v: %q, want it to say %q", tt.args, msg, tt.want)
		}
	}
}

// TestShellCompletion: the bash script completes commands, subcommands and flags by asking
// the binary itself; run in a real bash.
func TestShellCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := surety.Path(t)
	complete := func(words ...string) string {
		t.Helper()
		script := `eval "$(surety completion bash)"; COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _surety; echo "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "-c", script)
		cmd.Env = append(cmd.Environ(), "PATH="+filepath.Dir(bin)+":/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"surety", "sta"}, "stake"},
		{[]string{"surety", "stake", "un"}, "unbond"},
		{[]string{"surety", "bounty", "post", "--arb"}, "--arbiter"},
		{[]string{"surety", "node", "--rpc-u"}, "--rpc-url"},
	} {
		if got := complete(tt.words...); got != tt.want {
			t.Errorf("%v<TAB> = %q, want %q", tt.words, got, tt.want)
		}
	}
	if got := complete("surety", "stake", "add", "--"); !strings.Contains(got, "--keystore") || !strings.Contains(got, "--amount") {
		t.Errorf("surety stake add --<TAB> = %q, want every flag", got)
	}
}

// TestEveryCommandSpeaksJSON: every command that prints a result takes --json, so scripts
// never parse prose. The exceptions run until stopped (node, devnet: their logs take
// --log-format json), play a show (demo), or print a shell script (completion).
func TestEveryCommandSpeaksJSON(t *testing.T) {
	exempt := map[string]bool{"node": true, "devnet": true, "demo": true, "completion": true, "mcp": true} // mcp speaks JSON-RPC on stdout
	for _, name := range commandNames(commands) {
		if exempt[name] {
			continue
		}
		r := start(t, name, listSubcommands)
		r.wait(t)
		subs := strings.Fields(r.stdout.String())
		if len(subs) == 0 || strings.Contains(r.stderr.String(), "flag provided") || strings.HasPrefix(r.stdout.String(), "Usage") {
			subs = []string{""}
		}
		for _, sub := range subs {
			args := []string{name}
			if sub != "" {
				args = append(args, sub)
			}
			h := start(t, append(args, "-h")...)
			h.wait(t)
			if !strings.Contains(h.stdout.String(), "-json") {
				t.Errorf("surety %s has no --json:\n%s", strings.Join(args, " "), h.stdout)
			}
		}
	}
}
