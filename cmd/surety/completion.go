package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// completionScripts are the shell hooks 'surety completion SHELL' prints; each asks the
// binary itself ('surety __complete WORDS... -- CURRENT') for the candidates.
var completionScripts = map[string]string{
	"bash": `# bash completion for surety: eval "$(surety completion bash)"
_surety() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  COMPREPLY=($(compgen -W "$(surety __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" -- "$cur" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _surety surety
`,
	"zsh": `# zsh completion for surety: eval "$(surety completion zsh)"
autoload -U +X bashcompinit && bashcompinit
_surety() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  COMPREPLY=($(compgen -W "$(surety __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" -- "$cur" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _surety surety
`,
	"fish": `# fish completion for surety: surety completion fish | source
complete -c surety -f -a '(surety __complete (commandline -opc)[2..-1] -- (commandline -ct))'
`,
}

func runCompletionCmd(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "completion", "bash|zsh|fish", strings.TrimSpace(`
Print the shell completion script for bash, zsh or fish: commands, subcommands and flags
complete with TAB. Load it with eval "$(surety completion bash)" (or zsh), or
'surety completion fish | source', e.g. from your shell's start-up file.`))
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name the shell: bash, zsh or fish")
	}
	script, ok := completionScripts[pos[0]]
	if !ok {
		return usagef("no completion for %q: bash, zsh or fish%s", pos[0], didYouMean(pos[0], commandNames(completionScripts), func(s string) string { return s }))
	}
	fmt.Fprint(e.stdout, script)
	return nil
}

// flagLine finds flag names in a command's help (its PrintDefaults lines).
var flagLine = regexp.MustCompile(`(?m)^\s+-(\S+)`)

// runComplete prints the completion candidates, one per line, for the words typed so far
// (before "--") and the word being typed (after it).
func runComplete(ctx context.Context, e *env, args []string) error {
	words, cur := args, ""
	for i, a := range args {
		if a == "--" {
			words = args[:i]
			if i+1 < len(args) {
				cur = args[i+1]
			}
			break
		}
	}
	var out []string
	switch {
	case len(words) == 0:
		out = append(commandNames(commands), "help")
	case strings.HasPrefix(cur, "-"):
		// The command's flags, read from its own help.
		cmd := []string{words[0]}
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
			cmd = append(cmd, words[1])
		}
		var help bytes.Buffer
		run(ctx, &env{stdin: strings.NewReader(""), stdout: &help, stderr: io.Discard, getenv: e.getenv}, append(cmd, "-h"))
		for _, m := range flagLine.FindAllStringSubmatch(help.String(), -1) {
			out = append(out, "--"+m[1])
		}
	case len(words) == 1:
		// A group's subcommands (runSubcommand lists them).
		var list bytes.Buffer
		run(ctx, &env{stdin: strings.NewReader(""), stdout: &list, stderr: io.Discard, getenv: e.getenv}, []string{words[0], listSubcommands})
		out = strings.Fields(list.String())
	}
	for _, c := range out {
		if strings.HasPrefix(c, cur) {
			fmt.Fprintln(e.stdout, c)
		}
	}
	return nil
}

// listSubcommands makes runSubcommand print its subcommands' names (for completion).
const listSubcommands = "__subcommands"
