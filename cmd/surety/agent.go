package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/registry"
)

func runAgentCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"register": runAgentRegister,
		"show":     runAgentShow,
		"search":   runAgentSearch,
		"status":   runAgentStatus,
	}
	return runSubcommand(ctx, e, "agent", "register | show DID | search [TEXT] | status DID", sub, args)
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runAgentRegister(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent register", "--key KEYFILE --name NAME --capability TAG... [flags]", strings.TrimSpace(`
Sign an Agent Card with your DID key and register it with a node. Its sequence number is one
above the card the node has (or 1), so the new card replaces the old. With --a2a the card is
an A2A v1.0 Agent Card signed as A2A says (docs/a2a.md); otherwise Surety's JWS card.`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "your DID's private key file")
	name := fs.String("name", "", "the agent's name")
	desc := fs.String("description", "", "what the agent does")
	wallet := fs.String("wallet", "", "the agent's wallet (its stake counts for ranking)")
	var caps, endpoints listFlag
	fs.Var(&caps, "capability", "a capability tag, e.g. summarize (repeat)")
	fs.Var(&endpoints, "endpoint", "KIND=URL with KIND a2a, mcp or http (repeat)")
	asA2A := fs.Bool("a2a", false, "sign and send the card as an A2A Agent Card")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *keyFile == "" || *name == "" {
		return usagef("--key and --name are required")
	}
	if *wallet != "" && !common.IsHexAddress(*wallet) {
		return usagef("--wallet %q is not an address", *wallet)
	}
	card := registry.Card{Name: *name, Description: *desc, Capabilities: caps, Wallet: common.HexToAddress(*wallet), Updated: time.Now().Unix()}
	if card.Capabilities == nil {
		card.Capabilities = []string{}
	}
	for _, ep := range endpoints {
		kind, u, ok := strings.Cut(ep, "=")
		if !ok {
			return usagef("--endpoint %q: want KIND=URL", ep)
		}
		card.Endpoints = append(card.Endpoints, registry.Endpoint{Kind: kind, URL: u})
	}
	k, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	card.DID = k.DID.String()
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	current, err := c.Agent(ctx, card.DID)
	var ne *client.Error
	switch {
	case err == nil:
		card.Seq = current.Seq + 1
	case errors.As(err, &ne) && ne.Status == 404:
		card.Seq = 1
	default:
		return err
	}
	var a *wire.Agent
	if *asA2A {
		_, raw, err := registry.SignA2A(card, k)
		if err != nil {
			return err
		}
		if a, err = c.RegisterA2ACard(ctx, raw); err != nil {
			return err
		}
	} else {
		sc, err := registry.Sign(card, k)
		if err != nil {
			return err
		}
		if a, err = c.RegisterCard(ctx, sc.JWS); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e, a)
	}
	fmt.Fprintf(e.stdout, "registered %s (%s), card %d, stake %s ETH\n", a.DID, a.Name, a.Seq, formatAmount(a.Stake))
	return nil
}

func runAgentShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent show", "DID", "Show an agent's card from the node's registry; with --a2a, as the A2A Agent Card the node serves (signed by the node, with the agent's stake and reputation).")
	node := fs.nodeURL()
	asA2A := fs.Bool("a2a", false, "show the A2A Agent Card")
	fs.jsonAlways()
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the agent's DID")
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	if *asA2A {
		card, err := c.AgentA2ACard(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(e, card)
	}
	a, err := c.Agent(ctx, pos[0])
	if err != nil {
		return err
	}
	return printJSON(e, a)
}

func runAgentSearch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent search", "[--capability TAG] [TEXT...]", "Find agents by words or a sentence (\"phrases\", prefix*), ranked by relevance × stake × reputation. By capability, the node answers from its index at once and, when it has fewer than --limit, looks the capability's providers up in the network for a few seconds: the agents they add are printed as they arrive (with --json, only the final answer).")
	node := fs.nodeURL()
	capability := fs.String("capability", "", "only agents with this capability")
	limit := fs.Int("limit", 20, "at most this many")
	mode := fs.String("mode", "hybrid", "how TEXT ranks: hybrid (words and meaning) or keyword (words only)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *mode != "hybrid" && *mode != "keyword" {
		return usagef("--mode %q: give hybrid (words and meaning, the default) or keyword (words only)", *mode)
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	q := url.Values{}
	q.Set("q", strings.Join(pos, " "))
	q.Set("capability", *capability)
	q.Set("limit", fmt.Sprint(*limit))
	q.Set("mode", *mode)
	var out struct {
		Agents []*wire.Agent `json:"agents"`
	}
	if *capability == "" { // a text search never asks the network
		if out.Agents, err = c.SearchAgents(ctx, q); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e, out)
		}
		printAgents(e, out.Agents, nil)
		return nil
	}
	// By capability: the node answers from its index at once and may look the capability up
	// in the network; then the answer comes again, merged, each time the lookup finds cards.
	shown, first := map[string]bool{}, map[string]bool{}
	answers, discovering := 0, false
	err = c.SearchAgentsStream(ctx, q, func(l *wire.AgentList) error {
		answers++
		out.Agents = l.Agents
		if answers == 1 {
			for _, a := range l.Agents {
				first[a.DID] = true
			}
			if discovering = l.Discovering; discovering {
				fmt.Fprintln(e.stderr, "looking for more providers in the network…")
			}
		}
		if !*asJSON {
			printAgents(e, l.Agents, shown)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if *asJSON {
		if out.Agents == nil {
			out.Agents = []*wire.Agent{}
		}
		return printJSON(e, out)
	}
	if discovering {
		more := 0
		for _, a := range out.Agents {
			if !first[a.DID] {
				more++
			}
		}
		fmt.Fprintf(e.stderr, "found %d more in the network\n", more)
	}
	if len(out.Agents) == 0 {
		fmt.Fprintln(e.stdout, "no agents found")
	}
	return nil
}

// printAgents prints the agents of list not in shown, one a line, and adds them to shown;
// "no agents found" when shown is nil and list empty.
func printAgents(e *env, list []*wire.Agent, shown map[string]bool) {
	if shown == nil && len(list) == 0 {
		fmt.Fprintln(e.stdout, "no agents found")
	}
	for _, a := range list {
		if shown != nil {
			if shown[a.DID] {
				continue
			}
			shown[a.DID] = true
		}
		staked := "unstaked"
		if a.Staked {
			staked = "stake " + formatAmount(a.Stake) + " ETH"
		}
		fmt.Fprintf(e.stdout, "%-24s %-60s %s  [%s]\n", a.Name, a.DID, staked, strings.Join(a.Capabilities, " "))
	}
}

func runAgentStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent status", "DID",
		"Show an agent's key status as the node's index of the chain has it: active, or revoked or rotated (with the successor) by a controller the DID bound on chain. Nodes follow the chain by themselves and drop a closed DID's card, or re-rank an active one's after a stake change; this also brings the card the node holds in line now.")
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the agent's DID")
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	res, err := c.CheckAgentStatus(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "%s: %s", res.DID, res.Status)
	if res.Successor != "" {
		fmt.Fprintf(e.stdout, " (successor %s)", res.Successor)
	}
	if res.Dropped {
		fmt.Fprint(e.stdout, "; card dropped here")
	}
	if res.Stake != "" {
		fmt.Fprintf(e.stdout, "; its card here counts stake %s", formatAmount(res.Stake))
		if res.Wallet != (common.Address{}) {
			fmt.Fprintf(e.stdout, " under %s", res.Wallet.Hex())
		}
		if res.Restaked {
			fmt.Fprint(e.stdout, " (updated just now)")
		}
	}
	fmt.Fprintln(e.stdout)
	return nil
}
