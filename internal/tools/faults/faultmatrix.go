// Package faultmatrix is kubeproof's check of itself: a list of ways to
// break a cluster (a component flag, a component left out, a fault of the
// harness's own), each with the verdicts its claims must then take, and the
// comparison of a run on each faulty cluster with a run on a healthy one.
//
// A fault is detected when every claim it lists takes the listed verdict
// (the claims about the broken part refuted, those that merely depend on it
// not checkable), no claim ends in error, and at most MaxChanged other
// claims change their verdict. Timing claims are left out of that count:
// their verdict follows the machine's load.
package faults

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

// Matrix is the list of faults.
type Matrix struct {
	Faults []Fault `json:"faults"`
}

// Fault is one way to break a local cluster, and what it must do.
type Fault struct {
	ID          string `json:"id"`
	Component   string `json:"component"`
	Description string `json:"description"`

	// ComponentArgs are extra component flags (COMPONENT=--flag=value);
	// {untrusted-ca.crt} and {untrusted-ca.key} stand for a CA the
	// cluster does not trust, made for the run.
	ComponentArgs []string `json:"componentArgs,omitempty"`
	// Without are components left out.
	Without []string `json:"without,omitempty"`
	// Inject is a fault of the harness's own making (the spec runner's
	// --kubeproof.inject-fault).
	Inject string `json:"inject,omitempty"`

	// Refutes, NotCheckable and Confirms are the claims that must take
	// that verdict on the faulty cluster.
	Refutes      []string `json:"refutes,omitempty"`
	NotCheckable []string `json:"notCheckable,omitempty"`
	Confirms     []string `json:"confirms,omitempty"`
	// MaxChanged bounds how many other claims may change their verdict.
	MaxChanged int `json:"maxChanged"`
	// CI marks the faults CI runs on every push (the rest: make faults).
	CI bool `json:"ci,omitempty"`
}

// Expected returns each listed claim with the verdict it must take.
func (f Fault) Expected() map[string]judge.Verdict {
	out := map[string]judge.Verdict{}
	for _, id := range f.Refutes {
		out[id] = judge.Refuted
	}
	for _, id := range f.NotCheckable {
		out[id] = judge.NotCheckable
	}
	for _, id := range f.Confirms {
		out[id] = judge.Confirmed
	}
	return out
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)

// Parse reads a matrix and checks it against the catalog: every fault has
// a way to make it and an expectation, and names claims that exist.
func Parse(data []byte, cat *claims.Catalog) (*Matrix, error) {
	var m Matrix
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return nil, fmt.Errorf("fault matrix: %w", err)
	}
	var errs []string
	seen := map[string]bool{}
	for _, f := range m.Faults {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Sprintf("fault %q: %s", f.ID, fmt.Sprintf(format, args...)))
		}
		if !idRE.MatchString(f.ID) || seen[f.ID] {
			bad("an ID must be unique, lower-case letters, digits and dashes")
		}
		seen[f.ID] = true
		if f.Component == "" || f.Description == "" {
			bad("component and description are required")
		}
		if len(f.ComponentArgs)+len(f.Without) == 0 && f.Inject == "" {
			bad("says neither how to break the cluster (componentArgs, without) nor what to inject")
		}
		if len(f.Expected()) == 0 {
			bad("lists no claim whose verdict it must change")
		}
		for id := range f.Expected() {
			if _, ok := cat.Claim(id); !ok {
				bad("names claim %s, which is not in the catalog", id)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.New("invalid fault matrix:\n  " + strings.Join(errs, "\n  "))
	}
	return &m, nil
}

// Select returns the faults with the given IDs (all when none is given),
// only those marked for CI if ci is set.
func (m *Matrix) Select(ids []string, ci bool) ([]Fault, error) {
	var out []Fault
	for _, id := range ids {
		if !slices.ContainsFunc(m.Faults, func(f Fault) bool { return f.ID == id }) {
			return nil, fmt.Errorf("no fault %q in the matrix", id)
		}
	}
	for _, f := range m.Faults {
		if (len(ids) == 0 || slices.Contains(ids, f.ID)) && (!ci || f.CI) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Outcome is a fault's run held against the healthy run.
type Outcome struct {
	Fault Fault `json:"fault"`
	// Detected: every listed claim took its verdict, none ended in error,
	// and at most MaxChanged others changed.
	Detected bool `json:"detected"`
	// AsListed are the listed claims that took their verdict; Missed
	// those that did not ("ID: verdict, want verdict").
	AsListed []string `json:"asListed"`
	Missed   []string `json:"missed,omitempty"`
	// Errors are the claims in error ("ID: reason").
	Errors []string `json:"errors,omitempty"`
	// Changed are the other claims whose verdict changed ("ID:
	// healthy -> faulty"), timing claims left out.
	Changed []string `json:"changed,omitempty"`
	// Refuted are all refuted claims of the faulty run, by the component
	// the claim is about.
	RefutedByComponent map[string][]string `json:"refutedByComponent,omitempty"`
	// RunError is set when the run itself failed (no report).
	RunError string `json:"runError,omitempty"`
}

// Check holds a faulty run's report against the healthy run's.
func Check(f Fault, healthy, faulty report.Report) Outcome {
	o := Outcome{Fault: f, RefutedByComponent: map[string][]string{}}
	before, after := verdicts(healthy), verdicts(faulty)
	expected := f.Expected()
	for _, id := range slices.Sorted(maps.Keys(expected)) {
		got := after[id].verdict
		if got == expected[id] {
			o.AsListed = append(o.AsListed, id)
		} else {
			o.Missed = append(o.Missed, fmt.Sprintf("%s: %s, want %s (%s)", id, got, expected[id], after[id].reason))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(after)) {
		r := after[id]
		if r.verdict == judge.Error {
			o.Errors = append(o.Errors, id+": "+r.reason)
		}
		if r.verdict == judge.Refuted {
			o.RefutedByComponent[r.component] = append(o.RefutedByComponent[r.component], id)
		}
		if _, listed := expected[id]; listed || r.kind == claims.Timing {
			continue
		}
		if b, ok := before[id]; ok && b.verdict != r.verdict {
			o.Changed = append(o.Changed, fmt.Sprintf("%s: %s -> %s", id, b.verdict, r.verdict))
		}
	}
	o.Detected = len(o.Missed) == 0 && len(o.Errors) == 0 && len(o.Changed) <= f.MaxChanged
	return o
}

type judged struct {
	verdict   judge.Verdict
	reason    string
	kind      claims.Kind
	component string
}

func verdicts(r report.Report) map[string]judged {
	out := map[string]judged{}
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			out[res.Claim.ID] = judged{verdict: res.Verdict, reason: res.Reason, kind: res.Claim.Kind, component: res.Claim.Component}
		}
	}
	return out
}

// Markdown writes the outcomes as a table, then each fault's details.
func Markdown(w io.Writer, outcomes []Outcome) error {
	b := &strings.Builder{}
	b.WriteString("# kubeproof's fault matrix\n\n")
	b.WriteString("Each fault is made on a local cluster; the suites run on it and on a healthy cluster, and the verdicts are compared.\n\n")
	b.WriteString("| fault | broken part | listed claims as expected | other claims changed | errors | detected |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, o := range outcomes {
		mark := "✅"
		if !o.Detected {
			mark = "❌"
		}
		fmt.Fprintf(b, "| `%s` | %s | %d of %d | %d (at most %d) | %d | %s |\n", o.Fault.ID, o.Fault.Component,
			len(o.AsListed), len(o.Fault.Expected()), len(o.Changed), o.Fault.MaxChanged, len(o.Errors), mark)
	}
	for _, o := range outcomes {
		fmt.Fprintf(b, "\n## %s: %s\n\nMade with: %s\n\n", o.Fault.ID, o.Fault.Description, how(o.Fault))
		if o.RunError != "" {
			fmt.Fprintf(b, "The run failed: %s\n", o.RunError)
			continue
		}
		list := func(title string, items []string) {
			if len(items) == 0 {
				return
			}
			fmt.Fprintf(b, "%s:\n", title)
			for _, it := range items {
				fmt.Fprintf(b, "- %s\n", it)
			}
			b.WriteString("\n")
		}
		list("As listed", o.AsListed)
		list("Not as listed", o.Missed)
		list("In error", o.Errors)
		list("Other claims that changed", o.Changed)
		comps := make([]string, 0, len(o.RefutedByComponent))
		for c := range o.RefutedByComponent {
			comps = append(comps, c)
		}
		sort.Strings(comps)
		var refuted []string
		for _, c := range comps {
			refuted = append(refuted, fmt.Sprintf("%s: %s", c, strings.Join(o.RefutedByComponent[c], ", ")))
		}
		list("Refuted claims, by the component they are about", refuted)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// how says how a fault is made.
func how(f Fault) string {
	var parts []string
	for _, a := range f.ComponentArgs {
		parts = append(parts, "`--component-arg "+a+"`")
	}
	for _, c := range f.Without {
		parts = append(parts, "`--without "+c+"`")
	}
	if f.Inject != "" {
		parts = append(parts, "the harness injects `"+f.Inject+"`")
	}
	return strings.Join(parts, ", ")
}
