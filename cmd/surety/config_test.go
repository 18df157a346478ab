package main

import (
	"bytes"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/node"
)

// TestSettingsComeFromFlagEnvThenConfigFile: --node and --rpc-url take the command line
// first, then the environment (SURETY_NODE, ETH_RPC_URL), then the config file, then the
// built-in default; --rpc is an alias of --rpc-url.
func TestSettingsComeFromFlagEnvThenConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte("# mine\nSURETY_NODE=http://file:1   # the local node\nexport ETH_RPC_URL=\"http://file-rpc:2\"\nnot a setting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		vars          map[string]string
		args          []string
		wantNode, rpc string
		wantStderr    string
	}{
		{"defaults", map[string]string{"HOME": dir}, nil, "http://" + node.DefaultListen, "", ""},
		{"config file", map[string]string{"SURETY_CONFIG": cfgFile}, nil, "http://file:1", "http://file-rpc:2", "not NAME=value"},
		{"env over file", map[string]string{"SURETY_CONFIG": cfgFile, "SURETY_NODE": "http://env:3", "ETH_RPC_URL": "http://env-rpc:4"}, nil,
			"http://env:3", "http://env-rpc:4", ""},
		{"flags over env", map[string]string{"SURETY_NODE": "http://env:3", "ETH_RPC_URL": "http://env-rpc:4"},
			[]string{"--node", "http://flag:5", "--rpc-url", "http://flag-rpc:6"}, "http://flag:5", "http://flag-rpc:6", ""},
		{"--rpc alias", nil, []string{"--rpc", "http://alias:7"}, "http://" + node.DefaultListen, "http://alias:7", ""},
		{"XDG config dir", map[string]string{"XDG_CONFIG_HOME": dir}, nil, "http://" + node.DefaultListen, "", ""},
		{"missing named file", map[string]string{"SURETY_CONFIG": filepath.Join(dir, "nope")}, nil, "http://" + node.DefaultListen, "", "ignoring the config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			e := &env{stderr: &stderr, getenv: func(k string) string { return tt.vars[k] }}
			fs := newFlags(e, "x", "", "")
			node, rpc := fs.nodeURL(), fs.rpcURL("the chain")
			if err := fs.parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if *node != tt.wantNode || *rpc != tt.rpc {
				t.Errorf("node %q, rpc %q; want %q, %q", *node, *rpc, tt.wantNode, tt.rpc)
			}
			if tt.wantStderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestWalletSettingsNeverShowAndYieldToTheCommandLine: a key or an RPC URL from the
// environment never appears in a help text (it is not a flag default), and a wallet named on
// the command line wins over one the environment names: --wallet (node-held) ignores
// $ETH_PRIVATE_KEY, --private-key ignores $ETH_KEYSTORE.
func TestWalletSettingsNeverShowAndYieldToTheCommandLine(t *testing.T) {
	secret := "0x" + strings.Repeat("5e", 32)
	vars := map[string]string{"ETH_PRIVATE_KEY": secret, "ETH_RPC_URL": "https://rpc.example/v3/SECRETAPIKEY", "ETH_KEYSTORE": "/ks/market"}
	r := startWithEnv(t, "", vars, "stake", "add", "-h")
	r.wait(t)
	if help := r.stdout.String(); strings.Contains(help, "5e5e5e") || strings.Contains(help, "SECRETAPIKEY") || strings.Contains(help, "/ks/market") {
		t.Errorf("stake add -h shows a setting from the environment:\n%s", help)
	}
	parse := func(args ...string) *ownWalletFlags {
		t.Helper()
		e := &env{stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
		fs := newFlags(e, "x", "", "")
		fs.String("wallet", "", "")
		w := fs.ownWallet()
		if err := fs.parse(args); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := parse("--wallet", "0x0000000000000000000000000000000000000001"); w.given() {
		t.Error("with --wallet typed, $ETH_PRIVATE_KEY still names an own wallet")
	}
	if w := parse("--private-key", "0x01"); *w.keystore != "" || *w.privateKey != "0x01" {
		t.Errorf("--private-key typed: keystore %q, key %q; want the typed key alone", *w.keystore, *w.privateKey)
	}
	if w := parse(); *w.keystore != "/ks/market" || *w.privateKey != secret {
		t.Errorf("nothing typed: keystore %q, key set %v; want both from the environment", *w.keystore, *w.privateKey != "")
	}
}

// TestAmountsAsCastWritesThem: amounts take cast's units (ether, gwei, wei), with or without
// a space, and plain base units; anything else is refused, never rounded.
func TestAmountsAsCastWritesThem(t *testing.T) {
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	tests := []struct {
		in   string
		want *big.Int // nil: refused
	}{
		{"1ether", e18},
		{"1 ether", e18},
		{"1.5ether", new(big.Int).Mul(big.NewInt(15), new(big.Int).Div(e18, big.NewInt(10)))},
		{"2ETH", new(big.Int).Mul(big.NewInt(2), e18)},
		{"20gwei", big.NewInt(20e9)},
		{"0.5 gwei", big.NewInt(5e8)},
		{"1000wei", big.NewInt(1000)},
		{"1000", big.NewInt(1000)},
		{"0", big.NewInt(0)},
		{"0.1wei", nil},
		{"1.5", nil},
		{"-1ether", nil},
		{"1/2ether", nil},
		{"1e18", nil},
		{"ether", nil},
		{"1 btc", nil},
		{"", nil},
		{strings.Repeat("9", 101), nil},
	}
	for _, tt := range tests {
		got, err := parseAmount(tt.in)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("parseAmount(%q) = %v, want an error", tt.in, got)
		case tt.want != nil && (err != nil || got.Cmp(tt.want) != 0):
			t.Errorf("parseAmount(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestProgressIsOneLiveLineOnATerminal: on a terminal the steps of a wait rewrite one line,
// ended by the last step (or before an error); piped, each step is a plain line.
func TestProgressIsOneLiveLineOnATerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		e := &env{stderr: &out, tty: &tty}
		e.progressf("post: sent %s", "0xab")
		e.progressf("post: mined in block %d", 7)
		e.progressDone("post: block %d indexed", 7)
		e.progressf("next: sent")
		e.endLine()
		want := "post: sent 0xab\npost: mined in block 7\npost: block 7 indexed\nnext: sent\n"
		if tty {
			want = "\r\033[Kpost: sent 0xab\r\033[Kpost: mined in block 7\r\033[Kpost: block 7 indexed\n\r\033[Knext: sent\n"
		}
		if out.String() != want {
			t.Errorf("terminal %v: %q, want %q", tty, out.String(), want)
		}
	}
}
