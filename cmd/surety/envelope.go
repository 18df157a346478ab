package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/surety-ioa/surety/identity"
)

// flagErrHelp is flag.ErrHelp: -h was asked for, which is not a failure.
var flagErrHelp = flag.ErrHelp

// maxInput bounds what the envelope commands read.
const maxInput = identity.MaxEnvelopeSize

func runEnvelopeCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"sign":   runEnvelopeSign,
		"verify": runEnvelopeVerify,
	}
	return runSubcommand(ctx, e, "envelope", "sign --key KEYFILE [FILE] | verify [FILE]", sub, args)
}

// readInput reads FILE, or stdin when no file (or "-") is given.
func readInput(e *env, args []string) ([]byte, error) {
	var r io.Reader = e.stdin
	name := "stdin"
	if len(args) > 1 {
		return nil, usagef("give at most one FILE")
	}
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, args[0]
	}
	if r == nil {
		return nil, usagef("no FILE given and no standard input")
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxInput)
	}
	return b, nil
}

func runEnvelopeSign(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "envelope sign", "--key KEYFILE [--ttl 5m] [FILE]", strings.TrimSpace(`
Sign an envelope. The payload JSON comes from FILE or standard input; sender, iat, exp, nonce
and id are filled in where missing, every other field is kept. Prints the compact JWS.`))
	keyFile := fs.String("key", "", "the sender's private key file (from 'surety did new')")
	ttl := fs.Duration("ttl", 5*time.Minute, "lifetime when exp is missing (nodes accept at most 10m)")
	asJSON := fs.Bool("json", false, `print {"jws": ...}`)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *keyFile == "" {
		return usagef("--key is required")
	}
	if *ttl <= 0 {
		return usagef("--ttl must be positive")
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	payload, err := readInput(e, pos)
	if err != nil {
		return err
	}
	filled, err := identity.FillEnvelope(payload, k, time.Now(), *ttl)
	if err != nil {
		return err
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]string{"jws": jws})
	}
	fmt.Fprintln(e.stdout, jws)
	return nil
}

func runEnvelopeVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "envelope verify", "[--node URL] [FILE]", strings.TrimSpace(`
Verify an envelope (compact or JSON serialization) from FILE or standard input and print its
payload, or why it is refused. Without --node the check is local (signature, kid, times); with
--node the node also checks revocation and whether it already accepted the envelope (checking
spends nothing: the envelope can still be used once).`))
	node := fs.String("node", "", "verify through this node's /v1/envelopes/verify")
	fs.jsonAlways()
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	raw, err := readInput(e, pos)
	if err != nil {
		return err
	}
	raw = []byte(strings.TrimSpace(string(raw)))
	var payload json.RawMessage
	if *node != "" {
		c, err := newNodeClient(*node)
		if err != nil {
			return err
		}
		res, err := c.VerifyEnvelope(ctx, raw)
		if err != nil {
			return err
		}
		payload = res.Payload
	} else {
		// Locally there is no earlier run whose nonces could be replayed: accept any iat.
		v := identity.NewVerifier(identity.VerifierConfig{Started: time.Unix(1, 0)})
		res, err := v.Verify(ctx, raw)
		if err != nil {
			return err
		}
		payload = res.Payload
	}
	var pretty any
	if err := json.Unmarshal(payload, &pretty); err != nil {
		return err
	}
	return printJSON(e, pretty)
}
