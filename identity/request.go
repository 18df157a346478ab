package identity

import (
	"encoding/json"
	"time"
)

// Audience names the one node and chain a state-changing envelope is for (see
// Envelope.CheckAudience), and the escrow its bounty lives in.
type Audience struct {
	// Node is the node's DID: the envelope's aud and its only recipient.
	Node    string
	ChainID uint64
	// Escrow is the BountyEscrow address an envelope about a bounty names.
	Escrow string
}

// SignRequest signs body as an envelope from k to the node in aud: aud is the node's DID and
// chain_id its chain, so it acts at that node alone, and it names bounty (in aud's escrow)
// when bounty is not zero. It lives for ttl from now. The CLI, the MCP server and the demo
// sign every write this way.
func SignRequest(k *Key, aud Audience, bounty uint64, body any, now time.Time, ttl time.Duration) (string, error) {
	m := map[string]any{"body": body, "to": []string{aud.Node}, "aud": aud.Node, "chain_id": aud.ChainID}
	if bounty != 0 {
		m["bounty"] = BountyRef{ChainID: aud.ChainID, Escrow: aud.Escrow, ID: bounty}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	filled, err := FillEnvelope(raw, k, now, ttl)
	if err != nil {
		return "", err
	}
	return k.SignCompact(filled)
}

// SignGroupEnvelope signs the payload fields as an envelope from k into group's thread (a
// membership list or a post), living for ttl from now.
func SignGroupEnvelope(k *Key, group string, fields map[string]any, now time.Time, ttl time.Duration) ([]byte, error) {
	out := make(map[string]any, len(fields)+1)
	for name, v := range fields {
		out[name] = v
	}
	out["group_id"] = group
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	filled, err := FillEnvelope(raw, k, now, ttl)
	if err != nil {
		return nil, err
	}
	jws, err := k.SignCompact(filled)
	return []byte(jws), err
}
