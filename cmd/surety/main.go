// Command surety runs a Surety node and talks to one: `surety node` starts a node, `surety
// deploy` puts the contracts on a chain, `surety devnet` runs Anvil with a node against it.
// `surety help` lists every command.
//
// This is the only package that reads flags, environment variables and files; the packages it
// wires together take config structs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags or a start-up failure: nothing was done
)

// command is one `surety` subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands = map[string]command{
	"node":       {"run a node (embedded chain by default, or --rpc-url URL --deployment FILE)", runNodeCmd},
	"deploy":     {"deploy the contracts to a chain and write the deployment file", runDeployCmd},
	"devnet":     {"start Anvil on loopback, deploy the contracts, and run a node against it", runDevnetCmd},
	"version":    {"print the version", runVersionCmd},
	"did":        {"make, resolve and register DIDs (new, resolve, register)", runDIDCmd},
	"envelope":   {"sign and verify envelopes (sign, verify)", runEnvelopeCmd},
	"bounty":     {"post, follow and settle bounties (post, list, show, claim, submit, accept, ...); competing workers and milestones: surety job", runBountyCmd},
	"job":        {"ERC-8183 jobs from your own wallet (create, budget, fund, submit, complete, reject, refund, show, list)", runJobCmd},
	"wallet":     {"wallets the node holds (new, import, list)", runWalletCmd},
	"agent":      {"register and find Agent Cards (register, show, search, status)", runAgentCmd},
	"stake":      {"bond, unbond and withdraw agents' stake from wallets the node holds (add, unbond, withdraw, show)", runStakeCmd},
	"audit":      {"file signed audits of agents' work (submit)", runAuditCmd},
	"erc8004":    {"ERC-8004 agent ids and feedback (register, publish, import, show)", runERC8004Cmd},
	"reputation": {"agents' reputation scores (show, top)", runReputationCmd},
	"group":      {"group threads of signed envelopes (members, post, show)", runGroupCmd},
	"mcp":        {"serve a node's tools to an LLM agent over MCP on stdio (signs with --key)", runMCPCmd},
	"log":        {"read the audit log's contents (leaves) and check it against the chain (verify)", runLogCmd},
	"credential": {"check a Verifiable Credential a node issued: signature, window, status, stake (verify)", runCredentialCmd},
	"demo":       {"play a marketplace day end to end on a node of its own (embedded chain or --rpc-url)", runDemoCmd},
	"completion": {"print the shell completion script (bash, zsh or fish)", runCompletionCmd},
}

// env is what a command may touch of the outside world, so tests can run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// args is the command line, as run got it (the write journal names entries by it).
	args []string
	// config is the config file's settings, once read (see setting).
	config map[string]string
	// lineOpen says a progress line is on a terminal's stderr, not yet ended (progressf).
	lineOpen bool
	tty      *bool
}

// progressf shows a step of a long wait on stderr: on a terminal one live line, rewritten
// at each step; piped, a plain line per step.
func (e *env) progressf(format string, args ...any) {
	if e.isTerminal() {
		fmt.Fprintf(e.stderr, "\r\033[K"+format, args...)
		e.lineOpen = true
		return
	}
	fmt.Fprintf(e.stderr, format+"\n", args...)
}

// progressDone shows the last step of a wait, ending the live line.
func (e *env) progressDone(format string, args ...any) {
	if e.isTerminal() {
		fmt.Fprintf(e.stderr, "\r\033[K"+format+"\n", args...)
		e.lineOpen = false
		return
	}
	fmt.Fprintf(e.stderr, format+"\n", args...)
}

// endLine ends a live progress line left open (before an error is printed).
func (e *env) endLine() {
	if e.lineOpen {
		fmt.Fprintln(e.stderr)
		e.lineOpen = false
	}
}

// isTerminal says stderr is a terminal.
func (e *env) isTerminal() bool {
	if e.tty == nil {
		f, ok := e.stderr.(*os.File)
		t := ok && term.IsTerminal(int(f.Fd()))
		e.tty = &t
	}
	return *e.tty
}

// usageError marks a mistake in how the command was called: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// startError marks a failure before the command did anything (unreachable RPC, busy port,
// unreadable deployment file): exit code 2, like a usage error.
type startError struct{ err error }

func (e startError) Error() string { return e.err.Error() }
func (e startError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit code. Errors are printed as one
// line prefixed with "surety: ".
func run(ctx context.Context, e *env, args []string) int {
	if e.args == nil {
		e.args = args
	}
	if len(args) == 0 {
		printHelp(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				return run(ctx, e, []string{args[1], "-h"})
			}
		}
		printHelp(e.stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	if name == "__complete" { // the completion scripts' helper: not listed
		_ = runComplete(ctx, e, args[1:])
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "surety: unknown command %q%s (run 'surety help' for the list)\n", name, didYouMean(name, commandNames(commands), strconv.Quote))
		return exitUsage
	}
	err := cmd.run(ctx, e, args[1:])
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	e.endLine()
	fmt.Fprintf(e.stderr, "surety %s: %s\n", name, oneLine(err.Error()))
	var ue usageError
	var se startError
	if errors.As(err, &ue) || errors.As(err, &se) {
		return exitUsage
	}
	return exitFailure
}

// oneLine folds a multi-line message (a child process's output, say) onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "surety %s: the trust-and-settlement node for an Internet of Agents\n\n", version)
	fmt.Fprintln(w, "Usage: surety <command> [flags]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'surety <command> -h' for a command's flags.")
}

// flags is a command's FlagSet with its help text.
type flags struct {
	*flag.FlagSet
	e              *env
	name, synopsis string
	about          string
	// idemKey is --idempotency-key, on commands that write (signerFlags).
	idemKey *string
	// timeout is --timeout, on commands that write through the node (signerFlags).
	timeout *time.Duration
	// afterParse run once the command line is parsed: settings that fall back to the
	// environment or the config file (never shown as flag defaults: they may be secrets).
	afterParse []func()
	// asJSON is --json, where a shared flag set defines it.
	asJSON *bool
	// own and rpc name the user's own wallet and chain, on commands that can send from it.
	own *ownWalletFlags
	rpc *string
}

// newFlags makes a command's FlagSet. The flag package prints nothing itself: -h prints the
// command's help on stdout, and a bad flag becomes one line on stderr (see run).
func newFlags(e *env, name, synopsis, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, e: e, name: name, synopsis: synopsis, about: about}
}

func (f *flags) printUsage() {
	w := f.e.stdout
	fmt.Fprintf(w, "Usage: surety %s %s\n\n%s\n", f.name, f.synopsis, f.about)
	hasFlags := false
	f.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		f.SetOutput(w)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
}

// parseArgs parses flags that may come before, between or after positional arguments
// (`surety did resolve DID --format jwk`), and returns the positional ones.
func (f *flags) parseArgs(args []string) ([]string, error) {
	var positional []string
	for {
		if err := f.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printUsage()
				return nil, err
			}
			return nil, usagef("%v (see 'surety %s -h')", err, f.name)
		}
		rest := f.Args()
		if len(rest) == 0 {
			f.settle()
			return positional, nil
		}
		if rest[0] == "--" {
			f.settle()
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parse parses args and refuses stray positional arguments.
func (f *flags) parse(args []string) error {
	if err := f.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printUsage()
			return err
		}
		return usagef("%v%s (see 'surety %s -h')", err, f.flagSuggestion(err), f.name)
	}
	if f.NArg() > 0 {
		return usagef("unexpected argument %q (see 'surety %s -h')", f.Arg(0), f.name)
	}
	f.settle()
	return nil
}

// settle runs the afterParse hooks.
func (f *flags) settle() {
	for _, h := range f.afterParse {
		h()
	}
}

func runVersionCmd(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "", "Print the version of this build.")
	asJSON := fs.Bool("json", false, `print {"version": ...}`)
	if err := fs.parse(args); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]string{"version": version})
	}
	fmt.Fprintln(e.stdout, "surety", version)
	return nil
}
