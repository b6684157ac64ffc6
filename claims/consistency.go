package claims

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// One fact, one verdict. Two claims that hold the same evidence to the same
// expectation read the same fact; when it fails, both must read the failure
// alike: both refuted, or both conditional (an alternative that takes the
// observed value as its condition). Otherwise a reader sees the cluster do
// one thing and kubeproof call it two ways. A claim that means something
// else by the same observation says so, with the reason, in differsFrom.

// Facts names the fact each expectation of a claim asserts, from the Go
// types the specs declare their evidence with.
type Facts struct {
	bySpec map[string]map[string]reflect.Type
}

// NewFacts indexes the declared evidence (framework.DeclaredEvidence, and a
// claims file's probes' evidence).
func NewFacts(decls []evidence.EvidenceDecl) *Facts {
	f := &Facts{bySpec: map[string]map[string]reflect.Type{}}
	for _, d := range decls {
		if f.bySpec[d.Spec] == nil {
			f.bySpec[d.Spec] = map[string]reflect.Type{}
		}
		f.bySpec[d.Spec][d.Name] = d.Type
	}
	return f
}

// Of names the fact expectation e of claim c asserts: the kind of evidence
// (the named Go struct the evidence is declared with, so that the same
// record of two specs or two components is one kind; otherwise the spec and
// the evidence's name), the path below it, and the expectation.
// schedulerInformer.initialState and relist.initialState, both an
// informerEvidence held to = "list", are one fact.
func (f *Facts) Of(c Claim, e expect.Expectation) string {
	k := f.kind(c, e)
	if e.Minus != "" {
		k += " − " + e.Minus
	}
	return k + " " + e.Want()
}

// kind is Of without the expectation: the evidence's kind and path.
func (f *Facts) kind(c Claim, e expect.Expectation) string {
	name, rest, _ := strings.Cut(e.Evidence, ".")
	specs := c.Specs
	if e.Spec != "" {
		specs = []string{e.Spec}
	}
	for _, s := range specs {
		t, ok := f.bySpec[s][name]
		if !ok {
			continue
		}
		t = evidence.Deref(t)
		if t.Kind() == reflect.Struct && t.Name() != "" {
			return t.PkgPath() + "." + t.Name() + "." + rest
		}
		return s + ":" + e.Evidence
	}
	return strings.Join(specs, ",") + ":" + e.Evidence
}

// Stance is how a claim reads a failure of one of its expectations: the
// values its conditional alternatives take instead (each alternative's
// expectations on the same evidence, or "any" for an alternative that does
// not read it), sorted; empty when a failure refutes the claim.
func Stance(c Claim, e expect.Expectation) []string {
	// contains and anyMatches say that a list has one element: another
	// element of the same list is another fact, not another value of it.
	membership := e.Contains != nil || e.AnyMatches != nil || e.NotContains != nil || e.NoneMatches != nil
	var out []string
	for _, alt := range c.Conditional {
		var wants []string
		requires := false
		for _, a := range alt.Expect {
			switch {
			case a.Evidence != e.Evidence:
			case a.Want() == e.Want():
				requires = true // the alternative needs the fact to hold too
			case !membership:
				wants = append(wants, a.Want())
			}
		}
		switch {
		case requires:
		case len(wants) > 0:
			sort.Strings(wants)
			out = append(out, strings.Join(wants, " and "))
		default:
			out = append(out, "any")
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// stanceText says a stance in words.
func stanceText(st []string) string {
	if len(st) == 0 {
		return "refuted when it fails"
	}
	return "conditional when it fails (its alternatives take " + strings.Join(st, "; ") + ")"
}

// CheckConsistency reports every pair of the catalog's checked claims
// (timing claims aside: theirs is a measurement) that hold the same fact
// (Facts.Of) to the same expectation but read its failure otherwise, and
// name no differsFrom for each other.
func CheckConsistency(cat *Catalog, decls []evidence.EvidenceDecl) []error {
	facts := NewFacts(decls)
	type reading struct {
		claim  Claim
		path   string
		want   string
		stance []string
	}
	byFact := map[string][]reading{}
	var order []string
	for _, c := range cat.Claims {
		if !c.Checked() || c.Kind == Timing {
			continue
		}
		seen := map[string]bool{}
		for _, e := range c.Expect {
			k := facts.Of(c, e)
			if seen[k] {
				continue
			}
			seen[k] = true
			if _, ok := byFact[k]; !ok {
				order = append(order, k)
			}
			byFact[k] = append(byFact[k], reading{c, e.Evidence, e.Want(), Stance(c, e)})
		}
	}
	var errs []error
	reported := map[[2]string]bool{}
	for _, k := range order {
		rs := byFact[k]
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				a, b := rs[i], rs[j]
				if a.claim.ID == b.claim.ID || slices.Equal(a.stance, b.stance) || Differs(a.claim, b.claim) {
					continue
				}
				pair := [2]string{a.claim.ID, b.claim.ID}
				if reported[pair] {
					continue
				}
				reported[pair] = true
				errs = append(errs, fmt.Errorf("claims %s and %s hold the same fact (%s's %s, %s's %s) to the same expectation (%s), but %s is %s and %s is %s: one fact, one verdict - give them one reading, or say in differsFrom why the sentences differ",
					a.claim.ID, b.claim.ID, a.claim.ID, a.path, b.claim.ID, b.path, a.want, a.claim.ID, stanceText(a.stance), b.claim.ID, stanceText(b.stance)))
			}
		}
	}
	return errs
}
