// Package speclink ties specs to claims: the Ginkgo labels a spec carries
// (its ID, the claims that name it, the capabilities it declares), the
// spec as its labels say (SpecInfo), the check that the catalog and the
// specs name each other (CheckLinks), and where a claim's specs and
// evidence are written (Locate).
package speclink

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// SpecInfo is a spec as the suites declare it: its ID, and the claims the
// catalog says it checks.
type SpecInfo struct {
	ID   string
	Name string
	// Claims are the IDs of the catalog's claims that name the spec (the
	// catalog is the one place the link is written).
	Claims []string
	// ClaimLabels are the claim:<id> labels the spec carries:
	// framework.Checks derives them from the catalog, and CheckLinks
	// refuses any other (a link written a second time, by hand).
	ClaimLabels []string
	// Source is where the spec (its It) is in the Go source.
	Source evidence.Source
	// Requires are the capabilities the spec declares it cannot do
	// without (its claims are not checkable without them); Uses those it
	// declares it records less without.
	Requires, Uses []cluster.Capability
}

// SpecsFromLabels builds a SpecInfo from a spec's text and labels; its
// Claims come from a catalog (claims.Catalog.ClaimsOf).
func SpecsFromLabels(name string, labels []string) SpecInfo {
	s := SpecInfo{Name: name}
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, SpecLabelPrefix); ok {
			s.ID = v
		}
		if v, ok := strings.CutPrefix(l, ClaimLabelPrefix); ok {
			s.ClaimLabels = append(s.ClaimLabels, v)
		}
		if v, ok := strings.CutPrefix(l, RequiresLabelPrefix); ok && !slices.Contains(s.Requires, cluster.Capability(v)) {
			s.Requires = append(s.Requires, cluster.Capability(v))
		}
		if v, ok := strings.CutPrefix(l, UsesLabelPrefix); ok {
			s.Uses = append(s.Uses, cluster.Capability(v))
		}
	}
	return s
}

// CheckLinks reports every broken tie between the catalog and the specs:
// a testable claim naming no existing spec, a spec without an ID, a spec
// no claim names, and a spec whose claim:<id> labels are not exactly the
// claims the catalog names it for (the catalog is the one place they are
// written; the labels follow from it).
func CheckLinks(cat *claims.Catalog, specs []SpecInfo) []error {
	var errs []error
	byID := map[string]SpecInfo{}
	for _, s := range specs {
		if s.ID == "" {
			errs = append(errs, fmt.Errorf("spec %q has no %s<id> label", s.Name, SpecLabelPrefix))
			continue
		}
		if _, dup := byID[s.ID]; dup {
			errs = append(errs, fmt.Errorf("spec ID %s is used twice", s.ID))
		}
		byID[s.ID] = s
		if len(cat.ClaimsOf(s.ID)) == 0 {
			errs = append(errs, fmt.Errorf("spec %s (%q) is named by no claim of the catalog", s.ID, s.Name))
		}
		named := cat.ClaimsOf(s.ID)
		for _, id := range s.ClaimLabels {
			if !slices.Contains(named, id) {
				errs = append(errs, fmt.Errorf("spec %s carries label %s%s, which the catalog does not name it for: a spec's claims are named once, in the catalog (the claim's specs:), and framework.Checks labels the spec from it", s.ID, ClaimLabelPrefix, id))
			}
		}
		for _, id := range named {
			if !slices.Contains(s.ClaimLabels, id) {
				errs = append(errs, fmt.Errorf("spec %s lacks label %s%s: a label filter on that claim would not select it (framework.Checks labels a spec with its claims)", s.ID, ClaimLabelPrefix, id))
			}
		}
	}
	for _, c := range cat.Claims {
		for _, id := range c.Specs {
			if _, ok := byID[id]; !ok {
				errs = append(errs, fmt.Errorf("claim %s names spec %s, which does not exist", c.ID, id))
			}
		}
	}
	return errs
}

// SpecPlace is where a spec that checks a claim is in the Go source
// (Source is nil when this binary has no spec of that ID).
type SpecPlace struct {
	ID     string           `json:"id"`
	Source *evidence.Source `json:"source,omitempty"`
}

// EvidencePlace is where a piece of evidence a claim reads is declared,
// and which of the claim's specs record it there.
type EvidencePlace struct {
	Name   string          `json:"name"`
	Specs  []string        `json:"specs"`
	Source evidence.Source `json:"source"`
}

// Locate finds the code behind a claim: the specs that check it and the
// declarations of the evidence its expectations, conditions and context
// read, in the order the claim reads them.
func Locate(c claims.Claim, specs []SpecInfo, decls []evidence.EvidenceDecl) ([]SpecPlace, []EvidencePlace) {
	var sp []SpecPlace
	for _, id := range c.Specs {
		p := SpecPlace{ID: id}
		for _, s := range specs {
			if s.ID == id {
				src := s.Source
				p.Source = &src
				break
			}
		}
		sp = append(sp, p)
	}
	type read struct{ name, spec string }
	var reads []read
	for _, e := range c.Expect {
		reads = append(reads, read{e.Evidence, e.Spec})
	}
	for _, alt := range c.Conditional {
		for _, e := range alt.Expect {
			reads = append(reads, read{e.Evidence, e.Spec})
		}
	}
	for _, r := range c.Readings {
		for _, e := range r.Expect {
			reads = append(reads, read{e.Evidence, e.Spec})
		}
	}
	for _, p := range c.Context {
		reads = append(reads, read{p, ""})
	}
	var ev []EvidencePlace
	for _, r := range reads {
		name, _, _ := strings.Cut(r.name, ".")
		for _, d := range decls {
			if d.Name != name || !slices.Contains(c.Specs, d.Spec) || (r.spec != "" && d.Spec != r.spec) {
				continue
			}
			i := slices.IndexFunc(ev, func(p EvidencePlace) bool { return p.Name == name && p.Source == d.Source })
			if i < 0 {
				ev = append(ev, EvidencePlace{Name: name, Source: d.Source})
				i = len(ev) - 1
			}
			if !slices.Contains(ev[i].Specs, d.Spec) {
				ev[i].Specs = append(ev[i].Specs, d.Spec)
			}
		}
	}
	return sp, ev
}
