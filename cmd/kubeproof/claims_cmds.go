package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/tools/claimlint"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

// selection says which claims a command works on.
type selection struct {
	claimsFile string
	claimIDs   []string
	documents  []string
	// lint: the claims file must pass claims lint's checks before the
	// command goes on (run, report), so that a wrong evidence path is a
	// usage error now, not an error verdict after a cluster run.
	lint bool
	// own are the claims of claimsFile, once loaded.
	own []claims.Claim
}

func (s *selection) addFlags(cmd *cobra.Command, withIDs bool) {
	f := cmd.Flags()
	f.StringVar(&s.claimsFile, "claims-file", "", "your claims file (same schema as fixtures/claims; its claims name existing specs): its claims are the selection instead of the built-in catalog's")
	f.StringSliceVar(&s.documents, "document", nil, "only the claims of this document (file name or its prefix, e.g. 000; with --claims-file, the path of your document, whose text its quotes are checked against)")
	if withIDs {
		f.StringSliceVar(&s.claimIDs, "claims", nil, "only these claims (IDs, comma-separated)")
	}
}

// load reads the catalog (and the user's file) and checks that every claim
// names specs this binary has; with lint, that the user's file passes
// claims lint.
func (s *selection) load() (*claims.Catalog, error) {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return nil, exitcode.With(exitcode.Internal, err)
	}
	if s.claimsFile == "" {
		return cat, nil
	}
	if _, err := os.Stat(s.claimsFile); err != nil {
		return nil, exitcode.Errorf(exitcode.Usage, "--claims-file: %v", err)
	}
	// A file that is there but wrong is a finding of claims lint (its own
	// exit code), not a misused command.
	before := len(cat.Claims)
	if err := cat.AddFile(s.claimsFile); err != nil {
		return nil, exitcode.With(exitcode.LintFindings, fmt.Errorf("--claims-file: %s", strings.Join(claimlint.ProblemsOf(err), "\n  ")))
	}
	s.own = cat.Claims[before:]
	for _, h := range cat.Hints {
		fmt.Fprintln(os.Stderr, "hint: "+h)
	}
	problems := claimlint.UnknownSpecs(s.own, cat.Probes)
	if s.lint {
		problems = claimlint.Own(s.own, cat.Probes, s.documentText())
		for _, w := range claimlint.Traps(s.own, cat.Probes) {
			fmt.Fprintln(os.Stderr, "warning: "+w)
		}
	}
	switch len(problems) {
	case 0:
		return cat, nil
	case 1:
		return nil, exitcode.Errorf(exitcode.LintFindings, "--claims-file %s: %s", s.claimsFile, problems[0])
	}
	return nil, exitcode.Errorf(exitcode.LintFindings, "--claims-file %s: %s:\n  %s", s.claimsFile, count(len(problems), "problem"), strings.Join(problems, "\n  "))
}

// documentText is the first --document that names a file, read: the
// user's document, whose text the claims' quotes must stand in.
func (s *selection) documentText() *claimlint.Document {
	for _, d := range s.documents {
		if data, err := os.ReadFile(d); err == nil {
			return &claimlint.Document{Name: d, Text: string(data)}
		}
	}
	return nil
}

// count is "1 problem", "2 problems".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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

// restricted says whether the selection is less than the whole built-in
// catalog: a run then runs only the specs the selected claims name.
func (s *selection) restricted() bool { return s.narrowed() || s.claimsFile != "" }

// pick returns the selected claims: with --claims-file its claims, else the
// catalog's; all of them, or those --claims and --document name. Given
// both, each narrows the other (the claims named, of the documents named):
// --document with the path of a user's document is there for its quotes
// too, and must not widen a selection of a few claims to all of them.
func (s *selection) pick(cat *claims.Catalog) ([]claims.Claim, error) {
	pool, from := cat.Claims, "the catalog"
	if s.claimsFile != "" {
		pool, from = s.own, "--claims-file "+s.claimsFile
	}
	if !s.narrowed() {
		return pool, nil
	}
	if len(s.documents) > 0 {
		var docs []claims.Claim
		for _, d := range s.documents {
			cs := ofDocument(pool, d)
			if len(cs) == 0 {
				return nil, exitcode.Errorf(exitcode.Usage, "--document: no document %q in %s", d, from)
			}
			for _, c := range cs {
				if !slices.ContainsFunc(docs, func(o claims.Claim) bool { return o.ID == c.ID }) {
					docs = append(docs, c)
				}
			}
		}
		if len(s.claimIDs) == 0 {
			return docs, nil
		}
		pool, from = docs, from+" of --document "+strings.Join(s.documents, ", ")
	}
	var out []claims.Claim
	for _, id := range s.claimIDs {
		i := slices.IndexFunc(pool, func(c claims.Claim) bool { return c.ID == id })
		if i < 0 {
			return nil, exitcode.Errorf(exitcode.Usage, "--claims: %q is not a claim of %s (see `kubeproof claims list`)", id, from)
		}
		out = append(out, pool[i])
	}
	return out, nil
}

// ofDocument returns the claims of the document whose file name starts
// with name, or, when name is the path of a file (a user's document), is
// that file's name.
func ofDocument(cs []claims.Claim, name string) []claims.Claim {
	var out []claims.Claim
	base := filepath.Base(name)
	_, err := os.Stat(name)
	for _, c := range cs {
		if strings.HasPrefix(c.Document, name) || (err == nil && c.Document == base) {
			out = append(out, c)
		}
	}
	return out
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
				return writeJSON(cmd.OutOrStdout(), jsonout.NewClaimList(cs))
			case "table", "":
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tDOCUMENT\tKIND\tCOMPONENT\tSPECS")
				for _, c := range cs {
					specs := strings.Join(c.Specs, ",")
					switch {
					case !c.Testable():
						specs = "(not testable)"
					case c.Open != "":
						specs = "(open)"
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
			cat, err := ev.catalog()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SPEC\tCLAIMS\tDESCRIPTION")
			for _, s := range framework.ListSpecs() {
				fmt.Fprintf(w, "%s\t%d\t%s\n", s.ID, len(s.Claims), s.Name)
			}
			for _, p := range cat.Probes {
				fmt.Fprintf(w, "%s\t%d\t%s (probe of %s)\n", p.ID, len(cat.ClaimsOf(p.ID)), p.Description, p.File)
			}
			return w.Flush()
		},
	}
	ev.addFlags(cmd)
	return cmd
}

func newClaimsLintCommand() *cobra.Command {
	var documentPath string
	cmd := &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a claims file without a cluster: schema, spec IDs, evidence paths and the types expectations hold them to, and with --document its quotes",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(args[0]); err != nil {
				return exitcode.With(exitcode.Usage, err)
			}
			var doc *claimlint.Document
			if documentPath != "" {
				data, err := os.ReadFile(documentPath)
				if err != nil {
					return exitcode.Errorf(exitcode.Usage, "--document: %v", err)
				}
				doc = &claimlint.Document{Name: documentPath, Text: string(data)}
			}
			n, problems, hints, warnings := claimlint.File(args[0], doc)
			for _, h := range hints {
				fmt.Fprintln(cmd.ErrOrStderr(), "hint: "+h)
			}
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
			}
			if len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), "  "+p)
				}
				return exitcode.Errorf(exitcode.LintFindings, "%s: %s", args[0], count(len(problems), "problem"))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, no problems\n", args[0], count(n, "claim"))
			return nil
		},
	}
	cmd.Flags().StringVar(&documentPath, "document", "", "the document's text (a file): every quote must stand in it, white space aside (condensed quotes fragment by fragment)")
	return cmd
}

// claimsSchemaURL is where editors find the claims schema for a file
// outside this repository (the catalog's files name it by relative path).
const claimsSchemaURL = "https://raw.githubusercontent.com/kubeproof/kubeproof/main/schemas/claims-v1alpha1.json"

// claimsTemplate is what `claims new` writes: a document and one claim to
// edit, with where to look for the rest.
const claimsTemplate = `# yaml-language-server: $schema=%[5]s
# Claims of %[1]s. Schema: docs/claims.md. Check with
# kubeproof claims lint %[2]s --document %[1]s; run with
# kubeproof run --claims-file %[2]s --document %[1]s.
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
  quote: "%[8]s"
  statement: A created Pod reaches phase Running.
  component: kubelet
  kind: behaviour
  specs: [podflow-create]
  expect:
  - {evidence: running.phase, equals: Running}
`

func newClaimsNewCommand() *cobra.Command {
	var document, title, quote string
	cmd := &cobra.Command{
		Use:   "new FILE",
		Short: "Write a claims file to start from, for a document",
		Long: `new writes a claims file with the document's header and one claim to edit: that a created
Pod reaches phase Running, checked by the built-in spec podflow-create. --quote puts your
document's sentence in it as written (else a placeholder that claims lint refuses until
you replace it). Then edit and add claims (docs/claims.md), check the file without a
cluster with claims lint, and run it with run --claims-file.`,
		Args: usageArgs(cobra.ExactArgs(1)),
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
			if quote == "" {
				quote = claimlint.ScaffoldQuote
			}
			if strings.ContainsAny(quote, "\"\\\n") {
				return exitcode.Errorf(exitcode.Usage, "--quote: one line without \" or \\ (write the rest in the file)")
			}
			content := fmt.Sprintf(claimsTemplate, document, args[0], title, prefix, claimsSchemaURL, claims.APIVersion, claims.FileKind, quote)
			if err := os.WriteFile(args[0], []byte(content), 0o644); err != nil {
				return exitcode.Errorf(exitcode.Usage, "write %s: %v", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: edit its claims (quote your document's sentences), then kubeproof claims lint %s --document %s\n", args[0], args[0], document)
			return nil
		},
	}
	cmd.Flags().StringVar(&document, "document", "", "the document's file name (default: FILE's name with .md)")
	cmd.Flags().StringVar(&title, "title", "", "the document's title")
	cmd.Flags().StringVar(&quote, "quote", "", "the sentence of the document the first claim quotes, as written (default: a placeholder to replace)")
	return cmd
}
