package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/testnet"
)

// TestNodesRankAlike is discovery's "every node gives the same answer" (issue 30): three node
// processes on one Anvil each take three cards through their API (translators, auditors and
// tax advisers, near-misses among them); once gossip has brought all nine to every node, each
// node answers the same sentences, keyword queries and capability searches with the same
// agents in the same order and the same scores, to the last digit, in both search modes.
func TestNodesRankAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three nodes and Anvil")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	nw := startNetwork(t, 3, testnet.Config{}, func(int) []string { return []string{"--log-level", "warn"} })
	var bases []string
	for _, n := range nw.Nodes {
		bases = append(bases, n.URL())
	}
	waitMeshes(t, bases...)

	cards := [][3]string{ // name, description, capability; three a node (each node takes
		// at most six unstaked cards a minute from one peer)
		{"Paris Legal Translations", "Sworn translator of French contracts, court rulings and notarial deeds into English.", "translation/fr-en"},
		{"Anglo-French Desk", "We translate English marketing copy and websites into French.", "translation/en-fr"},
		{"Localisation Lab", "Localization of apps and websites into German, French and Spanish.", "localization"},
		{"Sentinel Audits", "Smart contract security audits for Solidity: reentrancy, access control, oracle manipulation.", "audit/solidity"},
		{"Solidity Forge Studio", "Solidity development shop: we build vaults, staking and governance contracts.", "dev/solidity"},
		{"Warehouse Navigator", "Localization and mapping for warehouse robots (SLAM, ROS).", "robotics/navigation"},
		{"Berlin Tax Bot", "Prepares German VAT returns (Umsatzsteuer) and income tax filings for freelancers.", "tax/de-vat"},
		{"Vienna VAT Desk", "Austrian VAT registration and returns for e-commerce sellers.", "tax/at-vat"},
		{"Ledger Keeper", "Bookkeeping and monthly reconciliation for small businesses.", "accounting"},
	}
	dids := map[string]string{}
	for i, c := range cards {
		k, err := identity.GenerateKey(identity.Ed25519)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := registry.Sign(registry.Card{DID: k.DID.String(), Name: c[0], Description: c[1], Capabilities: []string{c[2]},
			Wallet: common.HexToAddress("0x01"), Seq: 1, Updated: time.Now().Unix()}, k)
		if err != nil {
			t.Fatal(err)
		}
		bc := &apitest.Client{T: t, Base: bases[i%len(bases)]}
		if code, body := bc.Request("POST", "/v1/agents", []byte(sc.JWS), nil); code != http.StatusCreated {
			t.Fatalf("register %s on node %d: %d %s", c[0], i%len(bases), code, body)
		}
		dids[k.DID.String()] = c[0]
	}
	for _, base := range bases {
		testutil.Eventually(t, "all nine cards on "+base, 60*time.Second, func() bool {
			var l wire.AgentList
			return getJSON(base+"/v1/agents?limit=100", &l) && len(l.Agents) == len(cards)
		})
	}

	type ranked struct {
		DID   string  `json:"did"`
		Score float64 `json:"score"`
	}
	answer := func(base string, q url.Values) (out []ranked, raw string) {
		t.Helper()
		var l struct {
			Agents []json.RawMessage `json:"agents"`
		}
		mustGetJSON(t, base+"/v1/agents?"+q.Encode(), &l)
		for _, a := range l.Agents {
			var r ranked
			if err := json.Unmarshal(a, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
			raw += dids[r.DID] + " " + string(mustScore(t, a)) + "; "
		}
		return out, raw
	}
	queries := []url.Values{
		{"q": {"someone who can turn French contracts into English"}},
		{"q": {"I need my Solidity vault checked for reentrancy before launch"}},
		{"q": {"who can do my German VAT return"}},
		{"q": {"localisation"}},
		{"q": {"solidity audit"}, "mode": {"keyword"}},
		{"q": {"tax*"}},
		{"capability": {"translation"}},
		{},
	}
	firsts := map[string]string{
		queries[0].Encode(): "Paris Legal Translations",
		queries[1].Encode(): "Sentinel Audits",
		queries[2].Encode(): "Berlin Tax Bot",
	}
	for _, q := range queries {
		want, wantRaw := answer(bases[0], q)
		if len(want) == 0 {
			t.Errorf("%s: node 0 found nothing", q.Encode())
			continue
		}
		if first, ok := firsts[q.Encode()]; ok && dids[want[0].DID] != first {
			t.Errorf("%s: %s first on node 0, want %s (%s)", q.Encode(), dids[want[0].DID], first, wantRaw)
		}
		for i, base := range bases[1:] {
			if _, raw := answer(base, q); raw != wantRaw {
				t.Errorf("%s:\n node 0: %s\n node %d: %s", q.Encode(), wantRaw, i+1, raw)
			}
		}
	}
}

// mustScore is an agent's score as the node wrote it in JSON, digit for digit.
func mustScore(t *testing.T, agent json.RawMessage) json.RawMessage {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(agent, &fields); err != nil {
		t.Fatal(err)
	}
	return fields["score"]
}
