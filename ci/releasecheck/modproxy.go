package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const modulePath = "github.com/kubeproof/kubeproof"

// modProxy writes a Go module proxy, in GOPROXY's file layout, that serves
// the commit at HEAD of the repository it runs in as kubeproof's module at
// version: what `go install github.com/kubeproof/kubeproof/cmd/kubeproof@V`
// gets from the public proxy once V is tagged.
func modProxy(out, version string) error {
	if out == "" || version == "" {
		return errors.New("--out and --version are required")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("find the repository: %w", err)
	}
	root := strings.TrimSpace(string(top))
	dir := filepath.Join(out, modulePath, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mod := module.Version{Path: modulePath, Version: version}
	// The module as a tag would publish it: HEAD's files (git archive),
	// not what the working tree has beside them. (x/mod's CreateFromVCS
	// knows no git worktree, whose .git is a file.)
	tree, err := os.MkdirTemp("", "kubeproof-module-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	archive := exec.Command("sh", "-c", `git -C "$1" archive HEAD | tar -x -C "$2"`, "sh", root, tree)
	if msg, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive HEAD: %w: %s", err, msg)
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, mod, tree); err != nil {
		return fmt.Errorf("zip HEAD as %s@%s: %w", modulePath, version, err)
	}
	gomod, err := exec.Command("git", "-C", root, "show", "HEAD:go.mod").Output()
	if err != nil {
		return fmt.Errorf("read HEAD's go.mod: %w", err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("releasecheck: GOPROXY=file://%s serves HEAD as %s@%s (%d bytes)\n", out, modulePath, version, zip.Len())
	return nil
}
