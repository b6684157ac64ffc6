// Command gen writes the schema of every JSON output into schemas/output
// (go generate in internal/tools/jsonout): gen ROOT.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen ROOT")
		os.Exit(2)
	}
	root := os.Args[1]
	if err := write(root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	dir := filepath.Join(root, jsonout.SchemaDir)
	// Schemas of outputs that are no more go with them.
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, o := range jsonout.Outputs {
		data, err := o.Schema(root)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, o.File()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
