package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
)

func runDIDCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"new":      runDIDNew,
		"resolve":  runDIDResolve,
		"register": runDIDRegister,
		"bind":     runDIDBind,
		"rotate":   runDIDRotate,
		"revoke":   runDIDRevoke,
	}
	return runSubcommand(ctx, e, "did", "new | resolve DID | register | bind | rotate --to NEWKEY | revoke", sub, args)
}

// runSubcommand dispatches `surety <group> <sub> ...`.
func runSubcommand(ctx context.Context, e *env, group, synopsis string, sub map[string]func(context.Context, *env, []string) error, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(e.stdout, "Usage: surety %s %s\n\nRun 'surety %s <command> -h' for a command's flags.\n", group, synopsis, group)
		if len(args) == 0 {
			return usagef("which %s command? (%s)", group, synopsis)
		}
		return flagErrHelp
	}
	if args[0] == listSubcommands {
		fmt.Fprintln(e.stdout, strings.Join(commandNames(sub), "\n"))
		return nil
	}
	run, ok := sub[args[0]]
	if !ok {
		return usagef("unknown command %q%s (surety %s %s)", args[0], didYouMean(args[0], commandNames(sub), strconv.Quote), group, synopsis)
	}
	return run(ctx, e, args[1:])
}

func runDIDNew(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "did new", "[--type ed25519|secp256k1] [--out KEYFILE]", strings.TrimSpace(`
Make a new agent key and print its did:key. The private key is written to --out as a JSON Web
Key (mode 0600); keep it secret. An existing file is never overwritten.`))
	typ := fs.String("type", "ed25519", "key type: ed25519 or secp256k1")
	out := fs.String("out", "agent.key.json", "where to write the private key")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	t := identity.KeyType(*typ)
	if t != identity.Ed25519 && t != identity.Secp256k1 {
		return usagef("--type %q: want ed25519 or secp256k1", *typ)
	}
	k, err := identity.GenerateKey(t)
	if err != nil {
		return err
	}
	b, err := k.MarshalKeyFile()
	if err != nil {
		return err
	}
	if err := writeSecretFile(*out, b); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]string{"did": k.DID.String(), "keyFile": *out})
	}
	fmt.Fprintln(e.stdout, k.DID.String())
	fmt.Fprintf(e.stderr, "private key written to %s (keep it secret)\n", *out)
	return nil
}

// writeSecretFile creates path with mode 0600 and refuses to replace an existing file.
func writeSecretFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: not overwriting a key (choose another --out)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func printJSON(e *env, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, string(b))
	return err
}

func runDIDResolve(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "did resolve", "[--node URL] [--format multikey|jwk|legacy] DID", strings.TrimSpace(`
Print the DID document of a did:key or did:pkh. Without --node it is derived locally (these
methods need no registry); with --node the node resolves it, and also says whether the DID was
deactivated.`))
	node := fs.String("node", "", "resolve through this node's /1.0/identifiers endpoint")
	format := fs.String("format", "multikey", "verification method format: multikey, jwk or legacy")
	fs.jsonAlways()
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give exactly one DID (see 'surety did resolve -h')")
	}
	did := pos[0]
	formats := map[string]identity.DocFormat{"multikey": identity.FormatMultikey, "jwk": identity.FormatJWK, "legacy": identity.FormatLegacy}
	f, ok := formats[*format]
	if !ok {
		return usagef("--format %q: want multikey, jwk or legacy", *format)
	}
	if *node == "" {
		d, err := identity.ParseDID(did)
		if err != nil {
			return err
		}
		doc, err := d.Document(f)
		if err != nil {
			return err
		}
		return printJSON(e, doc)
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	res, err := c.ResolveDID(ctx, did, *format)
	var ne *client.Error
	if errors.As(err, &ne) && ne.Status == 410 {
		return fmt.Errorf("%s is deactivated", did)
	}
	if err != nil {
		return err
	}
	var pretty any
	if err := json.Unmarshal(res, &pretty); err != nil {
		return err
	}
	return printJSON(e, pretty)
}

func runDIDRegister(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "did register", "--key KEYFILE [--node URL]", strings.TrimSpace(`
Register the DID of KEYFILE with a node: get a challenge, sign it with the key (an envelope
addressed to the node), and print the registration credential the node issues.`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "the agent's private key file (from 'surety did new')")
	asJSON := fs.Bool("json", false, "print the whole answer as JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *keyFile == "" {
		return usagef("--key is required")
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	issued, err := registerDID(ctx, c, k)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, issued)
	}
	fmt.Fprintf(e.stdout, "registered %s\ncredential: %s\n", issued.DID, issued.Credential)
	return nil
}

func readKeyFile(path string) (*identity.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	k, err := identity.ParseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// registerDID registers k's DID with the node at c: it signs a fresh challenge from the node
// with k (proof of possession) and returns what the node issued.
func registerDID(ctx context.Context, c *client.Client, k *identity.Key) (*wire.Issued, error) {
	ch, err := c.Challenge(ctx)
	if err != nil {
		return nil, err
	}
	payload, _ := json.Marshal(map[string]any{"to": []string{ch.Audience}, "body": map[string]string{"challenge": ch.Challenge}})
	filled, err := identity.FillEnvelope(payload, k, time.Now(), 2*time.Minute)
	if err != nil {
		return nil, err
	}
	proof, err := k.SignCompact(filled)
	if err != nil {
		return nil, err
	}
	return c.RegisterDID(ctx, proof)
}
