package conformance

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// The node's W3C VC 2.0 credentials (application/vc+jwt) and its Bitstring Status Lists.
//
// credential: input a vc+jwt; context now, node (the DID that must have issued it) and, for a
// credential with a status entry, status_list (the vc+jwt of the list it names). Valid facts:
// issuer, subject, type (the Surety type), validFrom, validUntil, status ("active": the bit is
// clear; "none": no entry), and for a stake credential wallet, amount, chainId, block.
// Refusals: the credential-* problems (a status list that does not verify, by its issuer,
// is credential-status).
//
// status-list: input a BitstringStatusListCredential vc+jwt; context now, node. Valid facts:
// id, statusPurpose, bits (the length), set (the indexes set). Refusals: credential-*.
func init() {
	Register(Kind{Name: "credential", Generate: genCredentials, Check: checkCredential})
	Register(Kind{Name: "status-list", Generate: genStatusLists, Check: checkStatusList})
}

// statusURL is the fixture node's status list 0.
const statusURL = "https://node.example/v1/status/0"

// credentialFixture is a registration credential of alice by issuer, valid from Now-60 for a
// day, with status index 3 of statusURL when withStatus.
func credentialFixture(issuer *identity.Key, withStatus bool) *identity.Credential {
	from := time.Unix(Now-60, 0)
	c, err := identity.NewCredential(issuer.DID.String(), []string{identity.RegistrationCredentialType}, from, from.Add(24*time.Hour),
		identity.RegistrationSubject{ID: alice.DID.String(), RegisteredWith: issuer.DID.String(), Registration: "registered"})
	if err != nil {
		panic(err)
	}
	c.ID = identity.CredentialID(issuer.DID.String(), alice.DID.String(), identity.RegistrationCredentialType, c.ValidFrom)
	if withStatus {
		c.CredentialStatus = identity.NewStatusEntry(statusURL, 3)
	}
	return c
}

func issueFixture(k *identity.Key, c *identity.Credential) string {
	jwt, err := k.IssueCredential(c)
	if err != nil {
		panic(err)
	}
	return jwt
}

// statusListFixture is issuer's list at url, valid from Now-30 for 10 minutes, with set's bits.
func statusListFixture(issuer *identity.Key, url string, set ...int) *identity.Credential {
	bits := identity.NewStatusList()
	for _, i := range set {
		identity.SetStatusBit(bits, i)
	}
	c, err := identity.StatusListCredential(issuer.DID.String(), url, bits, time.Unix(Now-30, 0), identity.StatusListLifetime)
	if err != nil {
		panic(err)
	}
	return c
}

func credentialContext(list string) *Context {
	c := &Context{Now: Now, Node: nodeKey.DID.String()}
	if list != "" {
		c.Extra = map[string]json.RawMessage{"status_list": jsonString(list)}
	}
	return c
}

// editPayload re-encodes a compact JWS's payload through edit, keeping header and signature.
func editPayload(compact string, edit func(map[string]any)) string {
	parts := splitJWS(compact)
	var m map[string]any
	b, _ := decodeSegment(parts[1])
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	edit(m)
	p, _ := marshal(m)
	return replacePayload(compact, p)
}

func genCredentials() ([]Named, error) {
	var out []Named
	add := func(name, desc, jwt string, c *Context, want Expect) {
		out = append(out, Named{name, Vector{Kind: "credential", Description: desc, Input: jsonString(jwt), Context: c, Expect: want}})
	}
	clear := issueFixture(nodeKey, statusListFixture(nodeKey, statusURL))
	revoked := issueFixture(nodeKey, statusListFixture(nodeKey, statusURL, 3))
	regFacts := func(status string) Expect {
		return Valid(map[string]any{"issuer": nodeKey.DID.String(), "subject": alice.DID.String(), "type": identity.RegistrationCredentialType,
			"validFrom": "2025-11-24T15:59:00Z", "validUntil": "2025-11-25T15:59:00Z", "status": status})
	}
	good := issueFixture(nodeKey, credentialFixture(nodeKey, true))
	add("valid-registration", "alice's registration credential with status index 3, whose bit is clear in the node's list", good, credentialContext(clear), regFacts("active"))
	add("valid-registration-no-status", "alice's registration credential without a status entry (an unstaked DID's)", issueFixture(nodeKey, credentialFixture(nodeKey, false)), credentialContext(""), regFacts("none"))

	from := time.Unix(Now-60, 0)
	subj := identity.StakeSubject{ID: alice.DID.String(), AgentID: identity.AgentID(alice.DID.String()).Hex(), Wallet: walletAddr(wallet).Hex(),
		Amount: "1000000000000000000", Token: common.Address{}.Hex(), ChainID: ChainID, Registry: common.HexToAddress(Registry).Hex(), Block: 1234,
		BlockHash: "0x" + fmt.Sprintf("%064x", 0xb10c)}
	sc, err := identity.NewCredential(nodeKey.DID.String(), []string{identity.StakeCredentialType}, from, from.Add(30*24*time.Hour), subj)
	if err != nil {
		return nil, err
	}
	sc.ID = identity.CredentialID(nodeKey.DID.String(), subj.ID, identity.StakeCredentialType, sc.ValidFrom)
	sc.CredentialStatus = identity.NewStatusEntry(statusURL, 3)
	add("valid-stake", "alice's stake credential: 1 ETH staked by the wallet at block 1234 of chain 31337 (checkable on chain with recordOf at that block)",
		issueFixture(nodeKey, sc), credentialContext(clear), Valid(map[string]any{"issuer": nodeKey.DID.String(), "subject": alice.DID.String(),
			"type": identity.StakeCredentialType, "validFrom": "2025-11-24T15:59:00Z", "validUntil": "2025-12-24T15:59:00Z", "status": "active",
			"wallet": subj.Wallet, "amount": subj.Amount, "chainId": ChainID, "block": subj.Block}))

	add("revoked", "the registration credential, whose bit 3 is set in the node's list: the chain revoked alice", good, credentialContext(revoked), Refused("credential-revoked"))
	expired := credentialFixture(nodeKey, false)
	expired.ValidFrom, expired.ValidUntil = "2025-11-22T16:00:00Z", "2025-11-23T16:00:00Z"
	add("expired", "a credential whose validUntil was a day before now", issueFixture(nodeKey, expired), credentialContext(""), Refused("credential-expired"))
	early := credentialFixture(nodeKey, false)
	early.ValidFrom, early.ValidUntil = "2025-11-24T17:00:00Z", "2025-11-25T17:00:00Z"
	add("not-yet-valid", "a credential whose validFrom is an hour after now (30 s of skew allowed)", issueFixture(nodeKey, early), credentialContext(""), Refused("credential-not-yet-valid"))
	add("wrong-issuer", "a credential another node issued and signed, where the verifier trusts the fixture node",
		issueFixture(otherNode, credentialFixture(otherNode, false)), credentialContext(""), Refused("credential-wrong-issuer"))
	add("forged", "the credential with one bit of its signature flipped", flipSignature(good), credentialContext(clear), Refused("credential-bad-signature"))
	add("tampered", "the credential whose subject was changed to bob after signing",
		editPayload(good, func(m map[string]any) {
			m["credentialSubject"].(map[string]any)["id"] = bob.DID.String()
			m["sub"] = bob.DID.String()
		}),
		credentialContext(clear), Refused("credential-bad-signature"))
	plain := credentialFixture(nodeKey, false)
	payload, _ := json.Marshal(plain)
	add("kid-not-issuer", "a credential naming the node as issuer, signed by another node's key under its own kid",
		signRaw(otherNode, "EdDSA", map[string]string{"alg": "EdDSA", "kid": otherNode.DID.KeyID(), "typ": identity.VCJWTType, "cty": identity.VCContentType}, payload),
		credentialContext(""), Refused("credential-malformed"))
	add("wrong-typ", "a VC 2.0 credential signed with typ JWT (the VC 1.1 VC-JWT's)",
		signRaw(nodeKey, "EdDSA", map[string]string{"alg": "EdDSA", "kid": nodeKey.DID.KeyID(), "typ": "JWT"}, payload), credentialContext(""), Refused("credential-malformed"))
	v1 := credentialFixture(nodeKey, false)
	v1.Context = []string{"https://www.w3.org/2018/credentials/v1"}
	add("v1-context", "a credential whose @context is VC 1.1's", issueFixture(nodeKey, v1), credentialContext(""), Refused("credential-malformed"))
	claims := issueFixture(nodeKey, credentialFixture(nodeKey, false))
	parts := splitJWS(claims)
	b, _ := decodeSegment(parts[1])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["exp"] = Now + 7*24*3600
	p, _ := marshal(m)
	add("exp-disagrees", "a credential, signed, whose JWT exp is a week later than its validUntil", signRaw(nodeKey, "EdDSA",
		map[string]string{"alg": "EdDSA", "kid": nodeKey.DID.KeyID(), "typ": identity.VCJWTType, "cty": identity.VCContentType}, p),
		credentialContext(""), Refused("credential-malformed"))
	add("status-list-of-another-issuer", "the credential, with a status list another node signed at the same URL",
		good, credentialContext(issueFixture(otherNode, statusListFixture(otherNode, statusURL))), Refused("credential-status"))
	add("status-list-elsewhere", "the credential, with the node's list published at another URL than the one it names",
		good, credentialContext(issueFixture(nodeKey, statusListFixture(nodeKey, "https://node.example/v1/status/1"))), Refused("credential-status"))
	return out, nil
}

func checkCredential(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c := ctx(v)
	now := time.Unix(c.Now, 0)
	cred, err := identity.VerifyCredentialJWT(s, identity.CredentialCheck{Now: now, Issuer: c.Node})
	if err != nil {
		return refusal(err)
	}
	status := "none"
	if cred.Credential.CredentialStatus != nil {
		var listJWT string
		if err := json.Unmarshal(c.Extra["status_list"], &listJWT); err != nil {
			return Expect{}, fmt.Errorf("context.status_list: %w", err)
		}
		list, err := identity.VerifyCredentialJWT(listJWT, identity.CredentialCheck{Now: now, Issuer: cred.Credential.Issuer})
		if err != nil {
			return refusal(&identity.CredentialError{Reason: identity.ErrCredentialStatus, Detail: err.Error()})
		}
		if err := identity.CheckCredentialStatus(cred, list); err != nil {
			return refusal(err)
		}
		status = "active"
	}
	var subj struct {
		ID string `json:"id"`
	}
	if err := cred.Subject(&subj); err != nil {
		return refusal(err)
	}
	typ := ""
	for _, t := range cred.Credential.Type {
		if t != identity.VerifiableCredentialType {
			typ = t
		}
	}
	facts := map[string]any{"issuer": cred.Credential.Issuer, "subject": subj.ID, "type": typ,
		"validFrom": cred.Credential.ValidFrom, "validUntil": cred.Credential.ValidUntil, "status": status}
	if cred.Credential.HasType(identity.StakeCredentialType) {
		var st identity.StakeSubject
		if err := cred.Subject(&st); err != nil {
			return refusal(err)
		}
		facts["wallet"], facts["amount"], facts["chainId"], facts["block"] = st.Wallet, st.Amount, st.ChainID, st.Block
	}
	return Valid(facts), nil
}

func genStatusLists() ([]Named, error) {
	var out []Named
	add := func(name, desc, jwt string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "status-list", Description: desc, Input: jsonString(jwt), Context: credentialContext(""), Expect: want}})
	}
	facts := func(set ...int) Expect {
		s := make([]any, len(set))
		for i, v := range set {
			s[i] = v
		}
		return Valid(map[string]any{"id": statusURL, "statusPurpose": identity.StatusPurposeRevocation, "bits": identity.StatusListBits, "set": s})
	}
	add("clear", "the node's revocation list 0 with no bit set: 131072 bits, gzip, base64url, multibase u", issueFixture(nodeKey, statusListFixture(nodeKey, statusURL)), facts())
	add("bits-set", "the node's list with bits 0, 3, 8 and 131071 set (bit 0 is the first byte's most significant bit)",
		issueFixture(nodeKey, statusListFixture(nodeKey, statusURL, 0, 3, 8, 131071)), facts(0, 3, 8, 131071))
	expired := statusListFixture(nodeKey, statusURL)
	expired.ValidFrom, expired.ValidUntil = "2025-11-24T15:00:00Z", "2025-11-24T15:10:00Z"
	add("expired", "a list whose validUntil passed 50 minutes ago: fetch it again", issueFixture(nodeKey, expired), Refused("credential-expired"))
	add("wrong-issuer", "another node's list, where the verifier trusts the fixture node", issueFixture(otherNode, statusListFixture(otherNode, statusURL)), Refused("credential-wrong-issuer"))
	add("forged", "the list with one bit of its signature flipped", flipSignature(issueFixture(nodeKey, statusListFixture(nodeKey, statusURL))), Refused("credential-bad-signature"))
	short := statusListFixture(nodeKey, statusURL)
	var sub identity.StatusListSubject
	_ = json.Unmarshal(short.CredentialSubject, &sub)
	sub.EncodedList, _ = identity.EncodeStatusList(make([]byte, 1024))
	short.CredentialSubject, _ = json.Marshal(sub)
	add("too-short", "a signed list of 8192 bits: Bitstring Status List requires at least 131072", issueFixture(nodeKey, short), Refused("credential-status"))
	nogzip := statusListFixture(nodeKey, statusURL)
	sub.EncodedList = "u" + "AAAA"
	nogzip.CredentialSubject, _ = json.Marshal(sub)
	add("not-gzip", "a signed list whose encodedList is not gzip", issueFixture(nodeKey, nogzip), Refused("credential-status"))
	return out, nil
}

func checkStatusList(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c := ctx(v)
	list, err := identity.VerifyCredentialJWT(s, identity.CredentialCheck{Now: time.Unix(c.Now, 0), Issuer: c.Node})
	if err != nil {
		return refusal(err)
	}
	if !list.Credential.HasType(identity.StatusListCredentialType) {
		return refusal(&identity.CredentialError{Reason: identity.ErrCredentialMalformed, Detail: "not a " + identity.StatusListCredentialType})
	}
	var sub identity.StatusListSubject
	if err := list.Subject(&sub); err != nil {
		return refusal(err)
	}
	bits, err := identity.DecodeStatusList(sub.EncodedList)
	if err != nil {
		return refusal(err)
	}
	set := []any{}
	for i := range len(bits) * 8 {
		if identity.StatusBit(bits, i) {
			if len(set) == maxListedBits {
				return Expect{}, errors.New("more bits set than a vector lists")
			}
			set = append(set, i)
		}
	}
	return Valid(map[string]any{"id": list.Credential.ID, "statusPurpose": sub.StatusPurpose, "bits": len(bits) * 8, "set": set}), nil
}

// maxListedBits bounds the set bits a status-list vector lists.
const maxListedBits = 64

// decodeSegment decodes one base64url segment of a compact JWS.
func decodeSegment(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
