package contracts_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
)

// erc8004Signature is one function or event of ERC-8004 (Trustless Agents) as its specification
// writes it, with "indexed" after the event inputs that are topics, and its selector (4 bytes)
// or topic (32 bytes). The hashes were checked by hand against the reference implementation's
// published ABIs (erc-8004/erc-8004-contracts, abis/*.json at b9e466c); the test also computes
// them from the signature, so a typo in either is caught.
type erc8004Signature struct {
	kind, sig, hash string
}

// erc8004Signatures lists, per registry, every function and event of the standard (the
// reference's upgrade and ownership plumbing left out: ours are not upgradeable).
var erc8004Signatures = map[string][]erc8004Signature{
	"IdentityRegistry": {
		{"event", "Approval(address indexed,address indexed,uint256 indexed)", "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"},
		{"event", "ApprovalForAll(address indexed,address indexed,bool)", "0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31"},
		{"event", "MetadataSet(uint256 indexed,string indexed,string,bytes)", "0x2c149ed548c6d2993cd73efe187df6eccabe4538091b33adbd25fafdb8a1468b"},
		{"event", "MetadataUpdate(uint256)", "0xf8e1a15aba9398e019f0b49df1a4fde98ee17ae345cb5f6b5e2c27f5033e8ce7"},
		{"event", "Registered(uint256 indexed,string,address indexed)", "0xca52e62c367d81bb2e328eb795f7c7ba24afb478408a26c0e201d155c449bc4a"},
		{"event", "Transfer(address indexed,address indexed,uint256 indexed)", "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"},
		{"event", "URIUpdated(uint256 indexed,string,address indexed)", "0x3a2c7fffc2cba7582c690e3b82c453ea02a308326a98a3ad7576c606336409fb"},
		{"function", "approve(address,uint256)", "0x095ea7b3"},
		{"function", "balanceOf(address)", "0x70a08231"},
		{"function", "eip712Domain()", "0x84b0196e"},
		{"function", "getAgentWallet(uint256)", "0x00339509"},
		{"function", "getApproved(uint256)", "0x081812fc"},
		{"function", "getMetadata(uint256,string)", "0xcb4799f2"},
		{"function", "isApprovedForAll(address,address)", "0xe985e9c5"},
		{"function", "name()", "0x06fdde03"},
		{"function", "ownerOf(uint256)", "0x6352211e"},
		{"function", "register()", "0x1aa3a008"},
		{"function", "register(string,(string,bytes)[])", "0x8ea42286"},
		{"function", "register(string)", "0xf2c298be"},
		{"function", "safeTransferFrom(address,address,uint256)", "0x42842e0e"},
		{"function", "safeTransferFrom(address,address,uint256,bytes)", "0xb88d4fde"},
		{"function", "setAgentURI(uint256,string)", "0x0af28bd3"},
		{"function", "setAgentWallet(uint256,address,uint256,bytes)", "0x2d1ef5ae"},
		{"function", "setApprovalForAll(address,bool)", "0xa22cb465"},
		{"function", "setMetadata(uint256,string,bytes)", "0x466648da"},
		{"function", "supportsInterface(bytes4)", "0x01ffc9a7"},
		{"function", "symbol()", "0x95d89b41"},
		{"function", "tokenURI(uint256)", "0xc87b56dd"},
		{"function", "transferFrom(address,address,uint256)", "0x23b872dd"},
		{"function", "unsetAgentWallet(uint256)", "0x3fddcf19"},
	},
	"ReputationRegistry": {
		{"event", "FeedbackRevoked(uint256 indexed,address indexed,uint64 indexed)", "0x25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d"},
		{"event", "NewFeedback(uint256 indexed,address indexed,uint64,int128,uint8,string indexed,string,string,string,string,bytes32)", "0x6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc"},
		{"event", "ResponseAppended(uint256 indexed,address indexed,uint64,address indexed,string,bytes32)", "0xb1c6be0b5b8aef6539e2fac0fd131a2faa7b49edf8e505b5eb0ad487d56051d4"},
		{"function", "appendResponse(uint256,address,uint64,string,bytes32)", "0xc2349ab2"},
		{"function", "getClients(uint256)", "0x42dd519c"},
		{"function", "getIdentityRegistry()", "0xbc4d861b"},
		{"function", "getLastIndex(uint256,address)", "0xf2d81759"},
		{"function", "getResponseCount(uint256,address,uint64,address[])", "0x6e04cacd"},
		{"function", "getSummary(uint256,address[],string,string)", "0x81bbba58"},
		{"function", "giveFeedback(uint256,int128,uint8,string,string,string,string,bytes32)", "0x3c036a7e"},
		{"function", "readAllFeedback(uint256,address[],string,string,bool)", "0xd9d84224"},
		{"function", "readFeedback(uint256,address,uint64)", "0x232b0810"},
		{"function", "revokeFeedback(uint256,uint64)", "0x4ab3ca99"},
	},
	"ValidationRegistry": {
		{"event", "ValidationRequest(address indexed,uint256 indexed,string,bytes32 indexed)", "0x530436c3634a98e1e626b0898be2f1e9980cc1bd2a78c07a0aba52d0a48a5059"},
		{"event", "ValidationResponse(address indexed,uint256 indexed,bytes32 indexed,uint8,string,bytes32,string)", "0xafddf629e874ccc3963b6a888c477bd464a6c8525024fc88759ea3b2326349ae"},
		{"function", "getAgentValidations(uint256)", "0x8d5d0c2d"},
		{"function", "getIdentityRegistry()", "0xbc4d861b"},
		{"function", "getSummary(uint256,address[],string)", "0x1b7cabd6"},
		{"function", "getValidationStatus(bytes32)", "0xff2febfc"},
		{"function", "getValidatorRequests(address)", "0x4bf3158c"},
		{"function", "validationRequest(address,uint256,string,bytes32)", "0xaaf400c4"},
		{"function", "validationResponse(bytes32,uint8,string,bytes32,string)", "0x3d659a96"},
	},
}

// TestERC8004Signatures fails when a compiled registry lacks a function or event of the
// standard, with the same name, types, and indexed inputs (events), or when a listed hash is
// not the keccak of its signature.
func TestERC8004Signatures(t *testing.T) {
	metas := map[string]*bind.MetaData{
		"IdentityRegistry":   &contracts.IdentityRegistryMetaData,
		"ReputationRegistry": &contracts.ReputationRegistryMetaData,
		"ValidationRegistry": &contracts.ValidationRegistryMetaData,
	}
	for name, sigs := range erc8004Signatures {
		parsed, err := metas[name].ParseABI()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sigs {
			plain := strings.ReplaceAll(s.sig, " indexed", "")
			hash := crypto.Keccak256([]byte(plain))
			want := "0x" + hex.EncodeToString(hash)
			if s.kind == "function" {
				want = want[:10]
			}
			if want != s.hash {
				t.Errorf("%s %s: listed hash %s, keccak says %s", name, s.sig, s.hash, want)
			}
			switch s.kind {
			case "function":
				m, err := parsed.MethodById(hash[:4])
				if err != nil || m.Sig != plain {
					t.Errorf("%s: no function %s (%s) in the compiled ABI", name, plain, s.hash)
				}
			case "event":
				ev, err := parsed.EventByID([32]byte(hash))
				if err != nil || ev.Sig != plain {
					t.Errorf("%s: no event %s (%s) in the compiled ABI", name, plain, s.hash)
					continue
				}
				var got []string
				for _, in := range ev.Inputs {
					got = append(got, in.Type.String()+map[bool]string{true: " indexed"}[in.Indexed])
				}
				if gotSig := ev.RawName + "(" + strings.Join(got, ",") + ")"; gotSig != s.sig {
					t.Errorf("%s: event %s, want %s (indexed inputs differ)", name, gotSig, s.sig)
				}
			}
		}
	}
}
