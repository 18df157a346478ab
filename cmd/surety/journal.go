package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// journalEnv names the directory of the write journal; without it the journal is in the
// user's config directory ($XDG_CONFIG_HOME/surety/journal, else ~/.config/surety/journal).
const journalEnv = "SURETY_JOURNAL"

// journal keeps each write the CLI sends until the node answers it: its Idempotency-Key and
// its body. A command run again after a crash (or a lost connection) finds its entry and
// sends the same request under the same key, so the node answers with the first one's
// result instead of acting twice.
type journal struct{ dir string }

// journalEntry is one unanswered write.
type journalEntry struct {
	Key     string          `json:"idempotencyKey"`
	Path    string          `json:"path"`
	Body    json.RawMessage `json:"body"`
	Command []string        `json:"command"`
	Created time.Time       `json:"created"`
}

// openJournal finds the journal directory; nil when there is none (no HOME): the CLI then
// sends without one, as before.
func openJournal(e *env) *journal {
	dir := e.getenv(journalEnv)
	if dir == "" {
		base := e.getenv("XDG_CONFIG_HOME")
		if base == "" {
			if home := e.getenv("HOME"); home != "" {
				base = filepath.Join(home, ".config")
			}
		}
		if base == "" {
			return nil
		}
		dir = filepath.Join(base, "surety", "journal")
	}
	return &journal{dir: dir}
}

// journalName names the entry of a write: by its explicit Idempotency-Key when the user gave
// one, else by the command line and the node, so the same command run again finds it.
func journalName(explicitKey, node string, command []string) string {
	h := sha256.New()
	if explicitKey != "" {
		fmt.Fprintf(h, "key\x00%s", explicitKey)
	} else {
		fmt.Fprintf(h, "cmd\x00%s\x00%s", node, strings.Join(command, "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)[:16]) + ".json"
}

// load returns the entry called name, or nil.
func (j *journal) load(name string) (*journalEntry, error) {
	b, err := os.ReadFile(filepath.Join(j.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the write journal: %w", err)
	}
	var e journalEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("the write journal's %s is damaged (delete it to send anew): %w", filepath.Join(j.dir, name), err)
	}
	return &e, nil
}

// save writes the entry before the request goes out: written in full or not at all.
func (j *journal) save(name string, e *journalEntry) error {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(j.dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write journal: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(j.dir, name)); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

// done forgets an answered write.
func (j *journal) done(name string) {
	_ = os.Remove(filepath.Join(j.dir, name))
}
