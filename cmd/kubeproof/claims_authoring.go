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

// lintClaimsFile checks a user's claims file without a cluster: its schema
// and expectations (as the catalog's), that its specs exist, and that every
// evidence path it names is one those specs record, of a type its
// expectation can hold. It returns every problem found.
func lintClaimsFile(path string) (int, []string) {
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		return 0, []string{"the built-in catalog: " + err.Error()}
	}
	before := len(cat.Claims)
	if err := cat.AddFile(path); err != nil {
		return 0, strings.Split(err.Error(), "\n")
	}
	own := &claims.Catalog{Documents: cat.Documents[len(cat.Documents)-1:], Claims: cat.Claims[before:]}
	var problems []string
	specs := map[string]bool{}
	for _, sp := range framework.ListSpecs() {
		specs[sp.ID] = true
	}
	for _, c := range own.Claims {
		for _, id := range c.Specs {
			if !specs[id] {
				problems = append(problems, fmt.Sprintf("claim %s names spec %s, which does not exist (see `kubeproof claims specs`)", c.ID, id))
			}
		}
	}
	for _, err := range claims.CheckEvidence(own, framework.DeclaredEvidence()) {
		problems = append(problems, err.Error())
	}
	return len(own.Claims), problems
}

func newClaimsLintCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a claims file without a cluster: schema, spec IDs, evidence paths and the types expectations hold them to",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, problems := lintClaimsFile(args[0])
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

// claimsTemplate is what `claims new` writes: a document and one claim to
// edit, with where to look for the rest.
const claimsTemplate = `# Claims of %[1]s. Schema: docs/claims.md. Check with
# kubeproof claims lint %[2]s; run with kubeproof run --claims-file %[2]s.
# kubeproof claims specs --evidence lists every spec and the evidence paths
# it records (with values from a run's report, --report-dir).
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
			content := fmt.Sprintf(claimsTemplate, document, args[0], title, prefix)
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

// evidencePaths lists, per spec, the evidence paths it records, with an
// example value from the specs of a report's claims.json when one is given.
func evidencePaths(reportDir string) (map[string][]string, map[string]any, error) {
	examples := map[string]any{}
	if reportDir != "" {
		data, err := os.ReadFile(filepath.Join(reportDir, "claims.json"))
		if err != nil {
			return nil, nil, exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
		}
		var rep struct {
			Specs []claims.SpecResult `json:"specs"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, nil, exitcode.Errorf(exitcode.Usage, "--report-dir: claims.json: %v", err)
		}
		for _, s := range rep.Specs {
			for name, v := range s.Evidence {
				flatten(s.ID+"/"+name, v, examples)
			}
		}
	}
	out := map[string][]string{}
	for _, d := range framework.DeclaredEvidence() {
		out[d.Spec] = append(out[d.Spec], claims.Paths(d.Name, d.Type)...)
	}
	for s := range out {
		slices.Sort(out[s])
	}
	return out, examples, nil
}

// flatten records the leaves of a decoded JSON value under dot-separated
// paths (list elements by index).
func flatten(path string, v any, into map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(path+"."+k, e, into)
		}
	case []any:
		if len(x) == 0 {
			into[path] = x
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s.%d", path, i), e, into)
		}
	default:
		into[path] = x
	}
}

// printEvidence writes the evidence table of `claims specs --evidence`.
func printEvidence(w *tabwriter.Writer, reportDir string) error {
	paths, examples, err := evidencePaths(reportDir)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "SPEC\tEVIDENCE PATH\tEXAMPLE")
	for _, s := range framework.ListSpecs() {
		for _, p := range paths[s.ID] {
			ex := ""
			if v, ok := examples[s.ID+"/"+p]; ok {
				b, _ := json.Marshal(v)
				ex = string(b)
				if len(ex) > 60 {
					ex = ex[:57] + "..."
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", s.ID, p, ex)
		}
	}
	return w.Flush()
}
