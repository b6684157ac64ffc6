package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// completeWith gives a flag's completions: the candidates that start with
// what was typed so far (after the last comma, for a comma-separated list).
func completeWith(candidates func() []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		prefix, last := "", typed
		if i := strings.LastIndex(typed, ","); i >= 0 {
			prefix, last = typed[:i+1], typed[i+1:]
		}
		var out []string
		for _, c := range candidates() {
			if strings.HasPrefix(c, last) {
				out = append(out, prefix+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// catalog is the built-in claims catalog, for completions (nil if it does
// not load, which its tests rule out).
func catalog() *claims.Catalog {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return &claims.Catalog{}
	}
	return cat
}

func claimIDs() []string {
	var out []string
	for _, c := range catalog().Claims {
		out = append(out, c.ID)
	}
	return out
}

func documentNames() []string {
	var out []string
	for _, d := range catalog().Documents {
		out = append(out, d.File)
	}
	return out
}

// specLabels are the label filters that select one spec or one claim.
func specLabels() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range catalog().Claims {
		out = append(out, speclink.ClaimLabelPrefix+c.ID)
		for _, s := range c.Specs {
			if !seen[s] {
				seen[s] = true
				out = append(out, speclink.SpecLabelPrefix+s)
			}
		}
	}
	return out
}

func providerNames() []string { return provision.Names() }

// registerCompletions completes claim IDs, documents, label filters,
// providers and the values of --junit-refuted-as and -o wherever a command
// has those flags.
func registerCompletions(root *cobra.Command) {
	flags := map[string]func() []string{
		"claims": claimIDs, "document": documentNames, "label-filter": specLabels, clusterflags.Provider.Name: providerNames,
		"junit-refuted-as": func() []string { return []string{"failure", "passed"} },
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for name, candidates := range flags {
			if c.Flags().Lookup(name) != nil || (c == root && c.PersistentFlags().Lookup(name) != nil) {
				_ = c.RegisterFlagCompletionFunc(name, completeWith(candidates))
			}
		}
		// kubectl's -o: an output format, on every command that has it.
		if f := c.Flags().Lookup("output"); f != nil && f.Shorthand == "o" {
			_ = c.RegisterFlagCompletionFunc("output", completeWith(func() []string { return []string{"table", "json"} }))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
