package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
)

func runGroupCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"members": runGroupMembers, "post": runGroupPost, "show": runGroupShow}
	return runSubcommand(ctx, e, "group", "members GROUP DID... | post GROUP | show GROUP", sub, args)
}

// signGroupEnvelope signs an envelope for group by k from the payload fields.
func signGroupEnvelope(k *identity.Key, group string, fields map[string]any) ([]byte, error) {
	return identity.SignGroupEnvelope(k, group, fields, time.Now(), 5*time.Minute)
}

func runGroupMembers(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "group members", "--key KEYFILE GROUP [MEMBER-DID...]", strings.TrimSpace(`
Create a group thread, or set its members: sign the member list with your DID key. The first
list sent for a group makes you its creator; after that only you can change it. You are
always a member.`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "your DID's private key file")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *keyFile == "" || len(pos) < 1 {
		return usagef("--key and a GROUP id are required")
	}
	group, members := pos[0], pos[1:]
	if err := groups.CheckID(group); err != nil {
		return usagef("%v", err)
	}
	for _, m := range members {
		if _, err := identity.ParseDID(m); err != nil {
			return usagef("%v", err)
		}
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	env, err := signGroupEnvelope(k, group, map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": append([]string{}, members...)}})
	if err != nil {
		return err
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	g, err := c.SetGroupMembers(ctx, group, env)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, g)
	}
	fmt.Fprintf(e.stdout, "group %s: %d members, created by %s\n", g.ID, len(g.Members), g.Creator)
	for _, m := range g.Members {
		fmt.Fprintf(e.stdout, "  %s\n", m)
	}
	return nil
}

func runGroupPost(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "group post", "--key KEYFILE [--state S] (--text T | --file FILE) GROUP", strings.TrimSpace(`
Sign an envelope with your DID key and post it into a group thread. --text posts
{"text": T} as the body; otherwise --file FILE (or "-" for stdin) is the payload JSON, whose
fields (body, to, task_desc, bounty, ...) are kept as they are.`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "your DID's private key file")
	state := fs.String("state", "", "the conversation state: "+strings.Join(groups.States, ", "))
	text := fs.String("text", "", "a text message (instead of a payload FILE)")
	file := fs.String("file", "", "the payload JSON file (\"-\" for stdin)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *keyFile == "" || len(pos) != 1 {
		return usagef("--key and one GROUP id are required")
	}
	if (*text == "") == (*file == "") {
		return usagef("give the message: --text T or --file FILE")
	}
	if *state != "" && !slices.Contains(groups.States, *state) {
		return usagef("--state %q: want one of %s", *state, strings.Join(groups.States, ", "))
	}
	fields := map[string]any{"body": map[string]any{"text": *text}}
	if *file != "" {
		raw, err := readInput(e, []string{*file})
		if err != nil {
			return err
		}
		fields = map[string]any{}
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("%s: not a JSON object: %w", *file, err)
		}
	}
	if *state != "" {
		fields["state"] = *state
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	env, err := signGroupEnvelope(k, pos[0], fields)
	if err != nil {
		return err
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	p, err := c.PostToGroup(ctx, pos[0], env)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, p)
	}
	if p.Envelope == nil {
		fmt.Fprintf(e.stdout, "group %s lives on another node: envelope forwarded\n", pos[0])
		return nil
	}
	fmt.Fprintf(e.stdout, "posted #%d in %s (envelope %s)\n", p.Envelope.Seq, pos[0], p.Envelope.ID)
	return nil
}

func runGroupShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "group show", "[--after SEQ] [--follow] GROUP", "Show a group's members and its thread; --follow keeps printing envelopes as they arrive.")
	node := fs.nodeURL()
	from := fs.Int64("after", 0, "start after this seq")
	follow := fs.Bool("follow", false, "keep printing new envelopes until interrupted")
	asJSON := fs.Bool("json", false, "print JSON (one envelope per line with --follow)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one GROUP id")
	}
	if err := groups.CheckID(pos[0]); err != nil {
		return usagef("%v", err)
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	g, err := c.Group(ctx, pos[0])
	if err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintf(e.stdout, "group %s: %d members, %d envelopes, created by %s\n", g.ID, len(g.Members), g.Envelopes, g.Creator)
	}
	show := func(ge *wire.GroupEnvelope) error {
		if *asJSON {
			return printJSON(e, ge)
		}
		state, body := ge.State, describePayload(ge.Envelope)
		if state == "" {
			state = "-"
		}
		fmt.Fprintf(e.stdout, "#%-4d %-15s %s  %s\n", ge.Seq, state, shortDID(ge.Sender), body)
		return nil
	}
	if *follow {
		return c.StreamGroup(ctx, pos[0], *from, show)
	}
	for after := *from; ; {
		page, err := c.GroupEnvelopes(ctx, pos[0], after)
		if err != nil {
			return err
		}
		if len(page.Envelopes) == 0 {
			return nil
		}
		for _, ge := range page.Envelopes {
			if err := show(ge); err != nil {
				return err
			}
		}
		after = page.Next
	}
}

// describePayload is a one-line view of an envelope's body: its text, or its JSON.
func describePayload(envelope string) string {
	var payload []byte
	if strings.HasPrefix(envelope, "{") {
		var js struct {
			Payload string `json:"payload"`
		}
		if json.Unmarshal([]byte(envelope), &js) == nil {
			payload, _ = base64.RawURLEncoding.DecodeString(js.Payload)
		}
	} else if parts := strings.Split(envelope, "."); len(parts) == 3 {
		payload, _ = base64.RawURLEncoding.DecodeString(parts[1])
	}
	var p struct {
		Body json.RawMessage `json:"body"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return "(unreadable payload)"
	}
	var text struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(p.Body, &text) == nil && text.Text != "" {
		return text.Text
	}
	return string(p.Body)
}

// shortDID abbreviates a DID for a column: did:key:z6Mk…last6.
func shortDID(did string) string {
	if len(did) <= 24 {
		return did
	}
	return did[:12] + "…" + did[len(did)-6:]
}
