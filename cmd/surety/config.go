package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/surety-ioa/surety/node"
)

// Settings come from, in order: the command line, the environment, the config file, and the
// built-in default. The config file holds the same names as the environment, one NAME=value
// per line ('#' starts a comment), so that what a user exports in a shell can be kept:
//
//	SURETY_NODE=http://127.0.0.1:7746
//	ETH_RPC_URL=http://127.0.0.1:8545
//	ETH_KEYSTORE=/home/me/.foundry/keystores/market
//
// It is $SURETY_CONFIG, or config in the Surety config directory ($XDG_CONFIG_HOME/surety,
// else ~/.config/surety).
const (
	configEnv = "SURETY_CONFIG"
	nodeEnv   = "SURETY_NODE"
	rpcURLEnv = "ETH_RPC_URL" // Foundry's name
)

// configDir is the Surety config directory; "" when there is no home to put it in.
func configDir(e *env) string {
	base := e.getenv("XDG_CONFIG_HOME")
	if base == "" {
		home := e.getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "surety")
}

// setting is name's value from the environment, else from the config file ("" when neither
// has it). A config file that cannot be read is reported once on stderr and ignored.
func (e *env) setting(name string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	if e.config == nil {
		e.config = e.loadConfig()
	}
	return e.config[name]
}

// loadConfig reads the config file; a missing one is an empty config.
func (e *env) loadConfig() map[string]string {
	out := map[string]string{}
	path := e.getenv(configEnv)
	explicit := path != ""
	if !explicit {
		dir := configDir(e)
		if dir == "" {
			return out
		}
		path = filepath.Join(dir, "config")
	}
	f, err := os.Open(path)
	if err != nil {
		if explicit || !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.stderr, "surety: ignoring the config file: %v\n", err)
		}
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || strings.TrimSpace(name) == "" {
			fmt.Fprintf(e.stderr, "surety: %s:%d: not NAME=value; ignored\n", path, n)
			continue
		}
		value = strings.TrimSpace(value)
		if i := strings.Index(value, " #"); i >= 0 && !strings.HasPrefix(value, `"`) && !strings.HasPrefix(value, "'") {
			value = strings.TrimSpace(value[:i]) // a comment after the value
		}
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1] // one matched pair of quotes
		}
		out[strings.TrimSpace(name)] = value
	}
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 && out[privateKeyEnv] != "" {
		fmt.Fprintf(e.stderr, "surety: %s holds %s but others can read it (chmod 600 %s)\n", path, privateKeyEnv, path)
	}
	return out
}

// nodeURL defines --node: the node's URL, by default $SURETY_NODE (or the config file's),
// else the local node.
func (f *flags) nodeURL() *string {
	def := f.e.setting(nodeEnv)
	if def == "" {
		def = "http://" + node.DefaultListen
	}
	return f.String("node", def, "the node's URL (env "+nodeEnv+")")
}

// jsonAlways defines --json on a command whose output is JSON anyway, so that scripts can
// pass --json to every command.
func (f *flags) jsonAlways() {
	f.Bool("json", true, "print JSON (always: this command's output is JSON)")
}

// rpcURL defines --rpc-url, Foundry's name for a chain's JSON-RPC URL, by default
// $ETH_RPC_URL (or the config file's); --rpc is kept as an alias.
func (f *flags) rpcURL(usage string) *string {
	p := new(string)
	f.StringVar(p, "rpc-url", "", usage+" (default: $"+rpcURLEnv+")")
	f.StringVar(p, "rpc", "", "alias of --rpc-url")
	f.orSetting(p, rpcURLEnv) // not shown as a default: a provider's URL often holds its key
	return p
}

// orSetting fills *p, when the command line leaves it empty, with name's setting (from the
// environment or the config file) once the command line is parsed. Unlike a flag default, the
// value never shows in help text.
func (f *flags) orSetting(p *string, name string) {
	f.afterParse = append(f.afterParse, func() {
		if *p == "" {
			*p = f.e.setting(name)
		}
	})
}
