package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// addOutputFlag is kubectl's -o/--output: table (for people, the default)
// or json (for tools).
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "table", "output format: table or json")
}

// checkOutput refuses an output format the command does not print.
func checkOutput(output string) error {
	if output != "table" && output != "json" {
		return exitcode.Errorf(exitcode.Usage, "--output %q: want table or json", output)
	}
	return nil
}

// writeJSON prints v as indented JSON, as kubectl's -o json does. Every
// document printed so is one of jsonout.Outputs: versioned, with its JSON
// Schema in schemas/output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
