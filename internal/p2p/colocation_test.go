package p2p

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// hostAddress is an IPv4 address of this host other than loopback, or "".
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// TestOneAddressCannotFieldManyPeers: peer ids cost nothing, so gossip scores count peers per
// IP address: beyond colocationThreshold peers from one address each of them loses score,
// and six of them are graylisted (at 409c49a IP colocation weighed 0: any number of peer ids
// from one host scored as separate peers). Gossipsub leaves loopback out of the count, so the
// nodes of a devnet on one host keep gossiping.
func TestOneAddressCannotFieldManyPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	const topic = "/surety/test/colocation"
	tests := []struct {
		name       string
		ip         string
		graylisted bool
	}{
		{"six peers from one address", hostAddress(), true},
		{"six peers on loopback", "127.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ip == "" {
				t.Skip("this host has no address but loopback")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := func(boot ...peer.AddrInfo) *Node {
				t.Helper()
				n, err := Start(ctx, Config{Listen: []string{"/ip4/" + tt.ip + "/tcp/0"}, Bootstrap: boot, Topics: []string{topic}, InspectPeriod: 50 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { n.Close() })
				if _, err := n.Join(topic, 0, func(context.Context, peer.ID, []byte) pubsub.ValidationResult { return pubsub.ValidationAccept }); err != nil {
					t.Fatal(err)
				}
				return n
			}
			a := start()
			var peers []*Node
			for range 6 {
				peers = append(peers, start(a.Info()))
			}
			scores := func() (string, bool) {
				all := true
				var out []float64
				for _, p := range peers {
					s, ok := a.Score(p.Host.ID())
					out = append(out, s)
					all = all && ok && (s <= -graylist) == tt.graylisted
				}
				return fmt.Sprint(out), all
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				got, ok := scores()
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("A's scores of the six peers on %s: %s, want graylisted (≤ -%d): %v", tt.ip, got, graylist, tt.graylisted)
				}
			}
		})
	}
}
