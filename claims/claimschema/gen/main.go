// Command gen writes the claims file schema (go generate in claimschema):
// gen FILE, run in claims/claimschema.
package main

import (
	"fmt"
	"os"

	"github.com/kubeproof/kubeproof/claims/claimschema"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen FILE")
		os.Exit(2)
	}
	// go generate runs in the package's directory, two below the root.
	data, err := claimschema.Generate("../..")
	if err == nil {
		err = os.WriteFile(os.Args[1], data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
