package registry

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// verifiedCards remembers what the DHT's validator needs of the cards this node checked and
// stored lately, by the hash of their bytes: the DHT put that spreads a card registered here
// validates it again, locally, before it sends it (go-libp2p-kad-dht's PutValue), and would
// check its signature a second time. The same bytes verify the same way whenever they are
// checked (a card's time can only be too far ahead, never too old), so a hit skips the
// signature, not the checks that can change (stake). Peers check every card they receive
// themselves. It holds at most verifiedCardsKept entries, the oldest going first.
type verifiedCards struct {
	mu   sync.Mutex
	by   map[[sha256.Size]byte]verifiedCard
	ring [][sha256.Size]byte // keys in the order they came, to forget the oldest
	next int
}

// verifiedCard is what the DHT's validator reads of a card: who, under which wallet, and
// what decides between two cards of one agent (newer).
type verifiedCard struct {
	did     string
	wallet  common.Address
	seq     uint64
	content [sha256.Size]byte // signedContent of its JWS
}

func newVerifiedCards() *verifiedCards {
	return &verifiedCards{by: make(map[[sha256.Size]byte]verifiedCard, verifiedCardsKept), ring: make([][sha256.Size]byte, 0, verifiedCardsKept)}
}

// add remembers sc, which Parse accepted.
func (v *verifiedCards) add(sc *SignedCard) {
	key := sha256.Sum256([]byte(sc.JWS))
	c := verifiedCard{did: sc.DID, wallet: sc.Wallet, seq: sc.Seq, content: signedContent(sc.JWS)}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.by[key]; ok {
		return
	}
	if len(v.ring) < verifiedCardsKept {
		v.ring = append(v.ring, key)
	} else {
		delete(v.by, v.ring[v.next])
		v.ring[v.next] = key
		v.next = (v.next + 1) % verifiedCardsKept
	}
	v.by[key] = c
}

// check is Parse for the DHT's validator: a card remembered is not verified again.
func (v *verifiedCards) check(raw []byte, now time.Time) (verifiedCard, error) {
	key := sha256.Sum256(raw)
	v.mu.Lock()
	c, ok := v.by[key]
	v.mu.Unlock()
	if ok {
		return c, nil
	}
	sc, err := Parse(raw, now)
	if err != nil {
		return verifiedCard{}, err
	}
	return verifiedCard{did: sc.DID, wallet: sc.Wallet, seq: sc.Seq, content: signedContent(sc.JWS)}, nil
}
