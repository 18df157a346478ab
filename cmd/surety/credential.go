package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/stake"
)

func runCredentialCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"verify": runCredentialVerify}
	return runSubcommand(ctx, e, "credential", "verify", sub, args)
}

// credentialFetchTimeout bounds fetching a status list.
const credentialFetchTimeout = 10 * time.Second

// runCredentialVerify checks a credential a Surety node issued, offline as far as it can: the
// signature by the issuer's did:key needs nothing but the credential; the status bit needs the
// status list (from the URL the credential names, or from --node); the stake facts need a
// chain (--rpc-url).
func runCredentialVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "credential verify", "[--issuer DID | --node URL] [--rpc-url URL] [--offline] [--json] FILE|-", strings.TrimSpace(`
Check a Verifiable Credential a Surety node issued (GET /v1/credentials/{did}/registration or
/stake, or 'surety did register'): a W3C VC 2.0 credential secured with JOSE (application/vc+jwt)
or the VC 1.1 VC-JWT form. Reads FILE, or stdin with - or no FILE.

Checks, one line each:
  signature  the JWS verifies with the issuer's did:key (kid must be the issuer's key), typ is
             vc+jwt; with --issuer (or --node: the node's DID from /v1/info) it must be that DID
  window     now is within validFrom .. validUntil (30 s of clock skew allowed)
  status     the credential's bit in its revocation status list (BitstringStatusListCredential,
             fetched from the URL the credential names, else from --node; signed by the same
             issuer) is clear: a DID the chain revoked or rotated away reads revoked
  stake      with --rpc-url, for a stake credential: the chain's id, the block's hash at its
             number, and StakeRegistry.recordOf(agentId, wallet) at that block (bound, the
             amount stated, the token)
Every problem is a line "problem: ..." naming what failed and what to do; the exit status is 1
if there is any. --offline skips the status check (said in the output).

Examples:
  curl -s $NODE/v1/credentials/did:key:z6Mk.../stake | surety credential verify --node $NODE --rpc-url http://127.0.0.1:8545 -
  surety credential verify --issuer did:key:z6Mk... --offline cred.jwt`))
	issuer := fs.String("issuer", "", "the DID that must have issued the credential (default: --node's DID, else any did:key)")
	nodeURL := fs.String("node", "", "a node to take the issuer DID from (/v1/info) and to fetch the status list from when its URL does not answer")
	rpcURL := fs.rpcURL("the chain's JSON-RPC URL, to check a stake credential's facts at its block")
	offline := fs.Bool("offline", false, "do not fetch the status list (the status is then not checked)")
	asJSON := fs.Bool("json", false, `print {"valid": bool, "checks": [lines], "problems": [lines], "credential": {...}}`)
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("give one FILE, or - for stdin (see 'surety credential verify -h')")
	}
	raw, err := readInput(e, pos)
	if err != nil {
		return err
	}
	jwt := strings.TrimSpace(string(raw))
	var c *client.Client
	if *nodeURL != "" {
		var info api.Info
		if c, info, err = dialNode(ctx, *nodeURL); err != nil {
			return err
		}
		if *issuer == "" {
			*issuer = info.NodeDID
		}
	}
	if *issuer != "" {
		if _, err := identity.ParseDID(*issuer); err != nil {
			return usagef("--issuer: %v", err)
		}
	}

	var checks, problems []string
	ok := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if checks = append(checks, line); !*asJSON {
			fmt.Fprintln(e.stdout, line)
		}
	}
	problem := func(format string, args ...any) {
		line := "problem: " + fmt.Sprintf(format, args...)
		if problems = append(problems, line); !*asJSON {
			fmt.Fprintln(e.stdout, line)
		}
	}
	finish := func(cred any) error {
		if *asJSON {
			if err := printJSON(e, map[string]any{"valid": len(problems) == 0, "checks": checks, "problems": problems, "credential": cred}); err != nil {
				return err
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("the credential is not valid (%d problem%s)", len(problems), map[bool]string{true: "s"}[len(problems) > 1])
		}
		return nil
	}

	if isVC11(jwt) {
		vc, err := identity.VerifyCredential(jwt)
		if err != nil {
			problem("signature: the VC 1.1 VC-JWT does not verify (aries-framework-go: %v)", err)
			return finish(nil)
		}
		if *issuer != "" && vc.Issuer.ID != *issuer {
			problem("signature: issued by %s, not %s", vc.Issuer.ID, *issuer)
			return finish(nil)
		}
		ok("signature: ok, a VC Data Model 1.1 VC-JWT by %s (checked with aries-framework-go); it has no validUntil or status: fetch the VC 2.0 form for those", vc.Issuer.ID)
		return finish(vc)
	}

	// Signature first: nothing else a credential says is worth reading until it verifies.
	v, err := identity.VerifyCredentialJWT(jwt, identity.CredentialCheck{Issuer: *issuer, SkipWindow: true})
	if err != nil {
		var ce *identity.CredentialError
		switch {
		case errors.As(err, &ce) && errors.Is(err, identity.ErrCredentialWrongIssuer):
			problem("signature: %s; this is not the credential of the issuer you named (--issuer / --node)", ce.Detail)
		case errors.As(err, &ce) && errors.Is(err, identity.ErrCredentialBadSignature):
			problem("signature: %s: the credential was changed or forged; fetch it again from the node", ce.Detail)
		case errors.As(err, &ce):
			problem("signature: not a credential this verifier reads: %s", ce.Detail)
		default:
			problem("signature: %v", err)
		}
		return finish(nil)
	}
	ok("signature: ok, %s by %s (kid %s)", strings.Join(v.Credential.Type, ", "), v.Issuer, v.Issuer.KeyID())

	now := time.Now()
	if _, err := identity.VerifyCredentialJWT(jwt, identity.CredentialCheck{Now: now}); err != nil {
		switch {
		case errors.Is(err, identity.ErrCredentialExpired):
			problem("window: expired at %s (now %s): fetch a fresh credential from the node", v.Credential.ValidUntil, now.UTC().Format(time.RFC3339))
		case errors.Is(err, identity.ErrCredentialNotYetValid):
			problem("window: valid only from %s (now %s): check this machine's clock", v.Credential.ValidFrom, now.UTC().Format(time.RFC3339))
		default:
			problem("window: %v", err)
		}
	} else {
		ok("window: ok, valid from %s until %s", v.Credential.ValidFrom, orNone(v.Credential.ValidUntil))
	}

	switch st := v.Credential.CredentialStatus; {
	case st == nil:
		ok("status: none (the credential has no status entry: only its validUntil ends it)")
	case *offline:
		ok("status: not checked (--offline); the credential names %s index %s", st.StatusListCredential, st.StatusListIndex)
	default:
		checkStatusLine(ctx, c, v, ok, problem)
	}

	if v.Credential.HasType(identity.StakeCredentialType) {
		var subj identity.StakeSubject
		if err := v.Subject(&subj); err != nil {
			problem("stake: %v", err)
		} else if *rpcURL == "" {
			ok("stake: not checked against the chain (give --rpc-url for chain %d); it states %s staked for %s by %s at block %d", subj.ChainID, subj.Amount, subj.ID, subj.Wallet, subj.Block)
		} else if err := checkStakeLine(ctx, *rpcURL, subj); err != nil {
			problem("stake: %v", err)
		} else {
			ok("stake: ok, chain %d at block %d (%s): StakeRegistry %s has %s bound with %s staked by %s", subj.ChainID, subj.Block, subj.BlockHash, subj.Registry, subj.ID, subj.Amount, subj.Wallet)
		}
	}
	return finish(v.Credential)
}

// checkStatusLine fetches the credential's status list (its URL, else through c) and reports
// the bit.
func checkStatusLine(ctx context.Context, c *client.Client, v *identity.VerifiedCredential, ok, problem func(string, ...any)) {
	st := v.Credential.CredentialStatus
	ctx, cancel := context.WithTimeout(ctx, credentialFetchTimeout)
	defer cancel()
	listJWT, err := client.FetchCredential(ctx, &http.Client{Timeout: credentialFetchTimeout}, st.StatusListCredential)
	if err != nil && c != nil {
		if _, n, ok := identity.SplitStatusListURL(st.StatusListCredential); ok {
			listJWT, err = c.StatusList(ctx, n)
		}
	}
	if err != nil {
		problem("status: cannot fetch the status list %s (%v): run where it is reachable, give --node, or --offline to skip", st.StatusListCredential, err)
		return
	}
	list, err := identity.VerifyCredentialJWT(listJWT, identity.CredentialCheck{Issuer: v.Credential.Issuer})
	if err != nil {
		problem("status: the status list at %s does not verify (%v): it is not the issuer's current list", st.StatusListCredential, err)
		return
	}
	switch err := identity.CheckCredentialStatus(v, list); {
	case errors.Is(err, identity.ErrCredentialRevoked):
		problem("status: revoked (bit %s of %s is set: the chain revoked the DID or rotated it away); do not accept it", st.StatusListIndex, st.StatusListCredential)
	case err != nil:
		problem("status: %v", err)
	default:
		ok("status: ok, bit %s of %s is clear (list valid until %s)", st.StatusListIndex, st.StatusListCredential, list.Credential.ValidUntil)
	}
}

// checkStakeLine checks a stake credential's facts at its block on the chain at rpcURL.
func checkStakeLine(ctx context.Context, rpcURL string, subj identity.StakeSubject) error {
	cl, err := chain.Dial(ctx, rpcURL, 5*time.Second)
	if err != nil {
		return fmt.Errorf("cannot reach the chain at --rpc-url: %w", err)
	}
	defer cl.Close()
	id, err := cl.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("read the chain id at --rpc-url: %w", err)
	}
	if err := stake.CheckStakeSubject(ctx, cl, id.Uint64(), subj); err != nil {
		if errors.Is(err, stake.ErrStakeFacts) {
			return fmt.Errorf("%w; the credential is not true of this chain", err)
		}
		return fmt.Errorf("%w (the RPC must serve state at block %d: an archive node, or a recent block)", err, subj.Block)
	}
	return nil
}

// isVC11 reports whether jwt is a VC 1.1 VC-JWT (its payload has a "vc" claim) rather than a
// VC 2.0 vc+jwt.
func isVC11(jwt string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 || len(jwt) > identity.MaxCredentialSize {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var p struct {
		VC json.RawMessage `json:"vc"`
	}
	return json.Unmarshal(b, &p) == nil && len(p.VC) > 0
}

func orNone(s string) string {
	if s == "" {
		return "(no validUntil)"
	}
	return s
}
