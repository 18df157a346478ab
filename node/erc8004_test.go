package node_test

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/txn"
)

// TestNodeIndexesERC8004: a node indexes the ERC-8004 registries it deployed and serves
// their agents and feedback; an agent whose owner is bound to no DID is only a claim.
func TestNodeIndexesERC8004(t *testing.T) {
	cfg := devConfig(t.TempDir())
	cfg.DevAccounts = 3
	n, err := node.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		stop()
		<-done
	}()
	var info api.Info
	if !get(t, n.APIURL()+"/v1/info", &info) {
		t.Fatal("no /v1/info")
	}
	c := n.Chain().(*chain.Embedded)
	svc := erc8004.NewService(erc8004.ServiceConfig{Chain: c, ChainID: info.Chain.ID,
		IdentityRegistry: common.HexToAddress(info.Contracts["IdentityRegistry"]), ReputationRegistry: common.HexToAddress(info.Contracts["ReputationRegistry"])})
	sender := func(i int) *txn.Sender {
		s, err := txn.NewSender(context.Background(), c, txn.NewKeySigner(chain.DevKey(i)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
	reg, err := svc.Run(context.Background(), sender(1), erc8004.Op{Kind: erc8004.OpRegister, AgentURI: erc8004.RegistrationURL(n.APIURL(), did), DID: did})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(context.Background(), sender(2), erc8004.Op{Kind: erc8004.OpFeedback, AgentID: reg.AgentID,
		Feedback: erc8004.FeedbackInput{Value: big.NewInt(87), Tag1: "starred"}}); err != nil {
		t.Fatal(err)
	}
	base := n.APIURL() + "/v1/erc8004/agents/0"
	var fb api.ERC8004Feedback
	testutil.Eventually(t, "the node indexes the feedback", 10*time.Second, func() bool {
		return get(t, base+"/feedback", &fb) && len(fb.Feedback) == 1
	})
	if f := fb.Feedback[0]; f.Value.Int64() != 87 || f.Tag1 != "starred" || f.Client != sender(2).Address() {
		t.Errorf("feedback = %+v", f)
	}
	var a erc8004.Agent
	if !get(t, base, &a) || a.DID != did || a.Owner != sender(1).Address() || a.URI != n.APIURL()+"/v1/erc8004/registration/"+url.PathEscape(did) {
		t.Errorf("agent = %+v", a)
	}
	var d api.ERC8004DID
	if !get(t, n.APIURL()+"/v1/erc8004/dids/"+url.PathEscape(did), &d) || len(d.Claiming) != 1 || len(d.Agents) != 0 {
		t.Errorf("DID's agents = %+v, want one claim and no agent (the owner is bound to no DID)", d)
	}
	for path, want := range map[string]int{
		"/v1/erc8004/agents/7":                            http.StatusNotFound,
		"/v1/erc8004/agents/x":                            http.StatusBadRequest,
		"/v1/erc8004/agents/0/feedback?revoked=maybe":     http.StatusBadRequest,
		"/v1/erc8004/registration/" + url.PathEscape(did): http.StatusNotFound,
		"/v1/erc8004/agents/0/validations":                http.StatusOK,
	} {
		res, err := http.Get(n.APIURL() + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}
