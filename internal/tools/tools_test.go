package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "foundry.toml")); err != nil {
		t.Errorf("root %s has no foundry.toml", root)
	}
	// A directory outside any checkout has no root.
	if _, err := RepoRoot(t.TempDir()); err == nil {
		t.Error("RepoRoot found a checkout above a temp dir")
	}
	// Another module's go.mod is not ours.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RepoRoot(other); err == nil {
		t.Error("RepoRoot accepted another module")
	}
}

func TestFindMissingTool(t *testing.T) {
	_, err := Find("no-such-tool-surety")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}
