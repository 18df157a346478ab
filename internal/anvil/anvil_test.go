package anvil_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/testutil"
)

func TestStartAndStop(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	ctx := context.Background()
	a, err := anvil.Start(ctx, anvil.Config{Bin: bin, ChainID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	if !strings.HasPrefix(a.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want loopback", a.URL)
	}
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(a.URL, "http://"), time.Second)
	if err != nil {
		t.Fatalf("anvil not listening: %v", err)
	}
	conn.Close()

	a.Stop()
	select {
	case <-a.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("anvil still running after Stop")
	}
	a.Stop() // a second Stop is harmless
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(a.URL, "http://"), time.Second); err == nil {
		t.Error("port still accepting connections after Stop")
	}
}

func TestStartOnBusyPortFails(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = anvil.Start(context.Background(), anvil.Config{Bin: bin, Port: port, StartTimeout: 5 * time.Second})
	if !errors.Is(err, anvil.ErrPortInUse) {
		t.Fatalf("Start on a busy port: %v, want ErrPortInUse", err)
	}
}

// TestStartRefusesAChainAlreadyThere: at 66f817e a devnet started on a port where the user's
// own Anvil listened found it answering, took it for its own, and deployed onto it.
func TestStartRefusesAChainAlreadyThere(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	theirs, err := anvil.Start(context.Background(), anvil.Config{Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Stop()
	if ours, err := anvil.Start(context.Background(), anvil.Config{Bin: bin, Port: theirs.Port, StartTimeout: 5 * time.Second}); !errors.Is(err, anvil.ErrPortInUse) {
		if ours != nil {
			ours.Stop()
		}
		t.Fatalf("Start on a port where a chain answers: %v, want ErrPortInUse", err)
	}
}

func TestStartWithMissingBinary(t *testing.T) {
	_, err := anvil.Start(context.Background(), anvil.Config{Bin: "/nonexistent/anvil"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/anvil") {
		t.Fatalf("err = %v, want it to name the binary", err)
	}
}
