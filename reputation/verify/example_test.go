package verify_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surety-ioa/surety/reputation/verify"
)

// An auditor's program: it imports the verifier and the standard library only. It trusts the
// node's DID and the deployment (chain id and RootAnchor, read from the chain or the
// deployment file, not from the node); everything else comes from the node, which it does not
// trust. Here the node's answers are files in testdata/auditor; a real auditor GETs them:
//
//	/v1/log/checkpoint                       checkpoint.txt
//	/v1/log/head (now, and earlier)          head-11.json, head-4.json
//	/v1/log/proof/inclusion?leaf=<hex>       inclusion.json
//	/v1/log/proof/consistency?from=4&to=11   consistency.json
//
// and the audit as it was filed (audit.jws).
func Example_auditor() {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "auditor", name))
		if err != nil {
			panic(err)
		}
		return b
	}
	decode := func(name string, v any) {
		if err := json.Unmarshal(read(name), v); err != nil {
			panic(err)
		}
	}
	node := strings.TrimSpace(string(read("node.txt")))
	origin := verify.Origin(31337, "0x5FbDB2315678afecb367f032d93F642f64180aa3", node)

	// 1. The checkpoint: signed by the node's key, for this chain, deployment and node.
	cp, err := verify.OpenCheckpoint(read("checkpoint.txt"), origin, node)
	if err != nil {
		fmt.Println("checkpoint NOT verified:", err)
		return
	}
	fmt.Printf("checkpoint: %d audits, root %s\n", cp.Size, cp.Root)

	// 2. The audit is in the log the checkpoint commits to.
	var proof verify.InclusionProof
	decode("inclusion.json", &proof)
	if err := verify.Inclusion(verify.EnvelopeLeaf(read("audit.jws")), proof, cp.Size, cp.Root); err != nil {
		fmt.Println("audit NOT in the log:", err)
		return
	}
	fmt.Printf("audit: entry %d of %d\n", proof.Index, cp.Size)

	// 3. The log only grew since the head the auditor kept from an earlier visit.
	var served struct{ Signed string }
	open := func(name string) verify.Head {
		decode(name, &served)
		h, err := verify.OpenHead(served.Signed, node)
		if err != nil {
			panic(err)
		}
		return h
	}
	older, newer := open("head-4.json"), open("head-11.json")
	var cons verify.ConsistencyProof
	decode("consistency.json", &cons)
	if err := verify.Consistency(older, newer, cons); err != nil || newer.Root != cp.Root {
		fmt.Println("the log was rewritten:", err)
		return
	}
	fmt.Printf("log: size %d extends size %d\n", newer.Size, older.Size)

	// Output:
	// checkpoint: 11 audits, root d1013de2aa76c93c91d24b6d3d8e1612ec61ff9c774c0d3682bb9831443fa522
	// audit: entry 6 of 11
	// log: size 11 extends size 4
}
