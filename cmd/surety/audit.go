package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
)

func runAuditCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"submit": runAuditSubmit}
	return runSubcommand(ctx, e, "audit", "submit", sub, args)
}

func runReputationCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"show": runReputationShow, "top": runReputationTop}
	return runSubcommand(ctx, e, "reputation", "show DID | top [N]", sub, args)
}

func runAuditSubmit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit submit", "--key KEYFILE --subject DID (--bounty ID | --envelope ID) --score X --evidence-hash 0x… [flags]", strings.TrimSpace(`
Sign an audit of an agent's work with your DID key and file it with a node. An audit of a
finished bounty you posted or arbitrated counts in full; any other counts for a tenth.`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "your DID's private key file")
	subject := fs.String("subject", "", "the audited agent's DID")
	bounty := fs.Uint64("bounty", 0, "the audited bounty's id (on the node's escrow)")
	envelopeID := fs.String("envelope", "", "the id of the audited envelope (instead of a bounty)")
	score := fs.String("score", "", "your judgement, from 0 (bad) to 1 (excellent)")
	evidenceHash := fs.String("evidence-hash", "", "0x and 32 bytes of hex: a hash of what you examined")
	evidenceURI := fs.String("evidence-uri", "", "where the evidence can be read (http or https)")
	out := fs.String("out", "", "also write the signed audit envelope here (for 'surety log verify --envelope FILE' later)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *keyFile == "" || *subject == "" || *score == "" || *evidenceHash == "" {
		return usagef("--key, --subject, --score and --evidence-hash are required")
	}
	if (*bounty == 0) == (*envelopeID == "") {
		return usagef("name what you audited: --bounty ID or --envelope ID")
	}
	x, err := strconv.ParseFloat(*score, 64)
	if err != nil || x < 0 || x > 1 {
		return usagef("--score %q: want a number from 0 to 1", *score)
	}
	if h, err := common.ParseHexOrString(*evidenceHash); err != nil || len(h) != 32 || !strings.HasPrefix(*evidenceHash, "0x") {
		return usagef("--evidence-hash: want 0x and 32 bytes of hex")
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	c, info, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	body := map[string]any{"kind": reputation.AuditKind, "subject": *subject, "score": x,
		"evidence": map[string]any{"hash": *evidenceHash, "uri": *evidenceURI}}
	if *evidenceURI == "" {
		body["evidence"] = map[string]any{"hash": *evidenceHash}
	}
	if *envelopeID != "" {
		body["envelope"] = *envelopeID
	}
	env, err := signForNode(k, info, *bounty, body)
	if err != nil {
		return err
	}
	res, err := c.SubmitAudit(ctx, []byte(env))
	if err != nil {
		return err
	}
	if *out != "" {
		// Written once the node took it: the file is the audit as filed, whose leaf the log holds.
		if err := os.WriteFile(*out, []byte(env+"\n"), 0o644); err != nil {
			return fmt.Errorf("the audit was filed, but writing %s failed: %w", *out, err)
		}
	}
	if *asJSON {
		return printJSON(e, res)
	}
	counted := res.Counted
	fmt.Fprintf(e.stdout, "audit %s of %s filed; leaf %s\n  weight %.3g (standing %.3g, stake %g, backing %g): %s\n",
		res.Audit.Target(), res.Audit.Subject, res.Audit.Leaf, counted.Weight, counted.Standing, counted.Stake, counted.Backing, counted.Why)
	return nil
}

func runReputationShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reputation show", "DID", "Show an agent's reputation: score, confidence, and the audits that fed it.")
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the agent's DID")
	}
	if _, err := identity.ParseDID(pos[0]); err != nil {
		return usagef("%v", err)
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	r, err := c.Reputation(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, r)
	}
	fmt.Fprintf(e.stdout, "%s\n  score %.3f  confidence %.3f  audits %d  standing %.2f (as of %s)\n", r.DID, r.Score, r.Confidence, r.Audits, r.Standing, r.Computed.UTC().Format("2006-01-02 15:04:05"))
	for _, a := range r.Feeding {
		backed := "unbacked"
		if a.Backed {
			backed = "backed"
		}
		fmt.Fprintf(e.stdout, "  %.2f by %s on %s (%s)\n", a.Score, a.Auditor, a.Target(), backed)
	}
	return nil
}

func runReputationTop(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reputation top", "[N]", "List the N best-scored agents (default 20).")
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	n := "20"
	if len(pos) == 1 {
		n = pos[0]
	} else if len(pos) > 1 {
		return usagef("give at most one number")
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	var out struct {
		Agents []*wire.Reputation `json:"agents"`
	}
	if out.Agents, err = c.TopReputation(ctx, n); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, out)
	}
	if len(out.Agents) == 0 {
		fmt.Fprintln(e.stdout, "no audited agents yet")
	}
	for i, r := range out.Agents {
		fmt.Fprintf(e.stdout, "%3d  %.3f (confidence %.3f, %d audits)  %s\n", i+1, r.Score, r.Confidence, r.Audits, r.DID)
	}
	return nil
}
