package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

func newClaimsShowCommand() *cobra.Command {
	sel := &selection{}
	var output string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one claim: the sentence, what it says, how it is checked, and where each of these is written",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			cat, err := sel.load()
			if err != nil {
				return err
			}
			c, ok := cat.Claim(args[0])
			if !ok {
				return exitcode.Errorf(exitcode.Usage, "unknown claim %q (see `kubeproof claims list`)", args[0])
			}
			specs, evidence := speclink.Locate(c, framework.ListSpecs(), framework.DeclaredEvidence())
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), jsonout.ClaimShow{SchemaVersion: jsonout.ClaimShowSchema, Claim: c, Specs: specs, Evidence: evidence})
			}
			showClaim(cmd.OutOrStdout(), c, specs, evidence)
			return nil
		},
	}
	sel.addFlags(cmd, false)
	addOutputFlag(cmd, &output)
	return cmd
}

// showClaim prints a claim for a reader, with file:line of its YAML, of
// the specs that check it and of the evidence declarations it reads.
func showClaim(w io.Writer, c claims.Claim, specs []speclink.SpecPlace, evidence []speclink.EvidencePlace) {
	fmt.Fprintf(w, "%s  (%s, %s)\n", c.ID, c.Kind, c.Component)
	if c.Source != nil {
		fmt.Fprintf(w, "written:   %s\n", where(*c.Source))
	}
	fmt.Fprintf(w, "document:  %s, section %q\n", c.Document, c.Section)
	fmt.Fprintf(w, "quote:     %s\n", c.Quote)
	fmt.Fprintf(w, "statement: %s\n", c.Statement)
	if !c.Testable() {
		fmt.Fprintf(w, "not testable: %s\n", c.NotTestable)
		return
	}
	if c.Open != "" {
		fmt.Fprintf(w, "open:      %s\n", c.Open)
		return
	}
	fmt.Fprintf(w, "specs:     %s\n", strings.Join(c.Specs, ", "))
	if len(c.Requires) > 0 {
		fmt.Fprintf(w, "requires:  %v\n", c.Requires)
	}
	if c.Claimed != "" {
		fmt.Fprintf(w, "claimed:   %s\n", c.Claimed)
	}
	fmt.Fprintln(w, "confirmed when:")
	for _, e := range c.Expect {
		fmt.Fprintf(w, "  %s %s%s\n", e.Evidence, e.Want(), says(e))
	}
	for _, alt := range c.Conditional {
		fmt.Fprintf(w, "conditional %s when:\n", alt.Condition)
		for _, e := range alt.Expect {
			fmt.Fprintf(w, "  %s %s%s\n", e.Evidence, e.Want(), says(e))
		}
	}
	for _, r := range c.Readings {
		needs := "the API alone"
		if len(r.Requires) > 0 {
			needs = fmt.Sprint(r.Requires)
		}
		fmt.Fprintf(w, "or, where the cluster lacks %v, confirmed by reading %s (needs %s; it sees %s) when:\n", c.Requires, r.Name, needs, r.Sees)
		for _, e := range r.Expect {
			fmt.Fprintf(w, "  %s %s%s\n", e.Evidence, e.Want(), says(e))
		}
	}
	fmt.Fprintln(w, "checked by:")
	for _, s := range specs {
		at := "not in this binary"
		if s.Source != nil {
			at = where(*s.Source)
		}
		fmt.Fprintf(w, "  %s  %s\n", s.ID, at)
	}
	if len(evidence) > 0 {
		fmt.Fprintln(w, "evidence declared at:")
		for _, e := range evidence {
			fmt.Fprintf(w, "  %s  %s  (%s)\n", e.Name, where(e.Source), strings.Join(e.Specs, ", "))
		}
	}
}

func where(s evidence.Source) string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

func says(e expect.Expectation) string {
	if e.Says == "" {
		return ""
	}
	return "   (" + e.Says + ")"
}
