package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// selection says which claims a command works on.
type selection struct {
	claimsFile string
	claimIDs   []string
	documents  []string
}

func (s *selection) addFlags(cmd *cobra.Command, withIDs bool) {
	f := cmd.Flags()
	f.StringVar(&s.claimsFile, "claims-file", "", "also load this claims file (same schema as fixtures/claims; its claims name existing specs)")
	f.StringSliceVar(&s.documents, "document", nil, "only the claims of this document (file name or its prefix, e.g. 000)")
	if withIDs {
		f.StringSliceVar(&s.claimIDs, "claims", nil, "only these claims (IDs, comma-separated)")
	}
}

// load reads the catalog (and the user's file) and checks that every claim
// names specs this binary has.
func (s *selection) load() (*claims.Catalog, error) {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return nil, exitcode.With(exitcode.Internal, err)
	}
	if s.claimsFile != "" {
		if err := cat.AddFile(s.claimsFile); err != nil {
			return nil, exitcode.With(exitcode.Usage, fmt.Errorf("--claims-file: %w", err))
		}
		for _, h := range cat.Hints {
			fmt.Fprintln(os.Stderr, "hint: "+h)
		}
		if unknown := unknownSpecs(cat.Claims); len(unknown) > 0 {
			return nil, exitcode.Errorf(exitcode.Usage, "--claims-file: %s", unknown[0])
		}
	}
	return cat, nil
}

// unknownSpecs says, for each spec a claim names that this binary does not
// have, which claim names it.
func unknownSpecs(cs []claims.Claim) []string {
	specs := map[string]bool{}
	for _, sp := range framework.ListSpecs() {
		specs[sp.ID] = true
	}
	var out []string
	for _, c := range cs {
		for _, id := range c.Specs {
			if !specs[id] {
				out = append(out, fmt.Sprintf("claim %s names spec %s, which does not exist (see `kubeproof claims specs`)", c.ID, id))
			}
		}
	}
	return out
}

// selected loads the catalog and returns it with the selected claims.
func (s *selection) selected() (*claims.Catalog, []claims.Claim, error) {
	cat, err := s.load()
	if err != nil {
		return nil, nil, err
	}
	cs, err := s.pick(cat)
	if err != nil {
		return nil, nil, err
	}
	return cat, cs, nil
}

// narrowed says whether --claims or --document chose part of the catalog.
func (s *selection) narrowed() bool { return len(s.claimIDs) > 0 || len(s.documents) > 0 }

// pick returns the selected claims; all of them without a selection.
func (s *selection) pick(cat *claims.Catalog) ([]claims.Claim, error) {
	if !s.narrowed() {
		return cat.Claims, nil
	}
	var out []claims.Claim
	for _, id := range s.claimIDs {
		c, ok := cat.Claim(id)
		if !ok {
			return nil, exitcode.Errorf(exitcode.Usage, "--claims: unknown claim %q (see `kubeproof claims list`)", id)
		}
		out = append(out, c)
	}
	for _, d := range s.documents {
		cs := cat.OfDocument(d)
		if len(cs) == 0 {
			return nil, exitcode.Errorf(exitcode.Usage, "--document: no document %q in the catalog", d)
		}
		for _, c := range cs {
			if !slices.ContainsFunc(out, func(o claims.Claim) bool { return o.ID == c.ID }) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func newClaimsCommand() *cobra.Command {
	cmd := groupCommand("claims", "List and show the documented claims kubeproof checks", "")
	cmd.AddCommand(newClaimsListCommand(), newClaimsShowCommand(), newClaimsSpecsCommand(), newClaimsLintCommand(), newClaimsNewCommand())
	return cmd
}

func newClaimsListCommand() *cobra.Command {
	sel := &selection{}
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the claims: ID, document, kind, component and the specs that check each",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, cs, err := sel.selected()
			if err != nil {
				return err
			}
			switch output {
			case "json":
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(cs)
			case "table", "":
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tDOCUMENT\tKIND\tCOMPONENT\tSPECS")
				for _, c := range cs {
					specs := strings.Join(c.Specs, ",")
					if !c.Testable() {
						specs = "(not testable)"
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Document, c.Kind, c.Component, specs)
				}
				return w.Flush()
			default:
				return exitcode.Errorf(exitcode.Usage, "--output %q: want table or json", output)
			}
		},
	}
	sel.addFlags(cmd, false)
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

func newClaimsSpecsCommand() *cobra.Command {
	var ev evidenceFlags
	cmd := &cobra.Command{
		Use:   "specs",
		Short: "List the specs (their IDs for claims files) and the claims each checks; with --evidence, the evidence each records, explained",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ev.on || ev.output != "table" {
				return ev.print(cmd.OutOrStdout())
			}
			if ev.reportDir != "" {
				return exitcode.Errorf(exitcode.Usage, "--report-dir is for --evidence")
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SPEC\tCLAIMS\tDESCRIPTION")
			for _, s := range framework.ListSpecs() {
				fmt.Fprintf(w, "%s\t%d\t%s\n", s.ID, len(s.Claims), s.Name)
			}
			return w.Flush()
		},
	}
	ev.addFlags(cmd)
	return cmd
}

// lintClaimsFile checks a user's claims file without a cluster: its schema
// and expectations (as the catalog's), that its specs exist, and that every
// evidence path it names is one those specs record, of a type its
// expectation can hold. It returns every problem found.
// Advice that does not make the file wrong (a missing header) is returned
// as hints.
func lintClaimsFile(path string) (n int, problems, hints []string) {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return 0, []string{"the built-in catalog: " + err.Error()}, nil
	}
	before, hintsBefore := len(cat.Claims), len(cat.Hints)
	if err := cat.AddFile(path); err != nil {
		return 0, strings.Split(err.Error(), "\n"), nil
	}
	own := &claims.Catalog{Documents: cat.Documents[len(cat.Documents)-1:], Claims: cat.Claims[before:]}
	problems = unknownSpecs(own.Claims)
	for _, err := range claims.CheckEvidence(own, framework.DeclaredEvidence()) {
		problems = append(problems, err.Error())
	}
	return len(own.Claims), problems, cat.Hints[hintsBefore:]
}

func newClaimsLintCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a claims file without a cluster: schema, spec IDs, evidence paths and the types expectations hold them to",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, problems, hints := lintClaimsFile(args[0])
			for _, h := range hints {
				fmt.Fprintln(cmd.ErrOrStderr(), "hint: "+h)
			}
			if len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), "  "+p)
				}
				return exitcode.Errorf(exitcode.Usage, "%s: %d problem(s)", args[0], len(problems))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d claims, no problems\n", args[0], n)
			return nil
		},
	}
}

// claimsSchemaURL is where editors find the claims schema for a file
// outside this repository (the catalog's files name it by relative path).
const claimsSchemaURL = "https://raw.githubusercontent.com/kubeproof/kubeproof/main/schemas/claims-v1alpha1.json"

// claimsTemplate is what `claims new` writes: a document and one claim to
// edit, with where to look for the rest.
const claimsTemplate = `# yaml-language-server: $schema=%[5]s
# Claims of %[1]s. Schema: docs/claims.md. Check with
# kubeproof claims lint %[2]s; run with kubeproof run --claims-file %[2]s.
# kubeproof claims specs --evidence lists every spec and the evidence paths
# it records (with values from a run's report, --report-dir).
apiVersion: %[6]s
kind: %[7]s
document:
  file: %[1]s
  title: %[3]q
  url: ""
claims:
- id: %[4]s-POD-RUNNING
  section: "the heading the sentence is under"
  quote: "the sentence of the document, as written"
  statement: A created Pod reaches phase Running.
  component: kubelet
  kind: behaviour
  specs: [podflow-create]
  expect:
  - {evidence: running.phase, equals: Running}
`

func newClaimsNewCommand() *cobra.Command {
	var document, title string
	cmd := &cobra.Command{
		Use:   "new FILE",
		Short: "Write a claims file to start from, for a document",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(args[0]); err == nil {
				return exitcode.Errorf(exitcode.Usage, "%s exists: not overwritten", args[0])
			}
			if document == "" {
				document = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0])) + ".md"
			}
			if title == "" {
				title = document
			}
			prefix := strings.ToUpper(strings.Map(func(r rune) rune {
				if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
					return r
				}
				return '-'
			}, strings.TrimSuffix(filepath.Base(document), filepath.Ext(document))))
			prefix = strings.Trim(prefix, "-")
			if prefix == "" {
				prefix = "DOC"
			}
			content := fmt.Sprintf(claimsTemplate, document, args[0], title, prefix, claimsSchemaURL, claims.APIVersion, claims.FileKind)
			if err := os.WriteFile(args[0], []byte(content), 0o644); err != nil {
				return exitcode.Errorf(exitcode.Usage, "write %s: %v", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: edit its claims, then kubeproof claims lint %s\n", args[0], args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&document, "document", "", "the document's file name (default: FILE's name with .md)")
	cmd.Flags().StringVar(&title, "title", "", "the document's title")
	return cmd
}
