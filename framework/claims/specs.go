package claims

import (
	"fmt"
	"slices"
	"strings"
)

// SpecInfo is a spec as the suites declare it: its ID and the claims its
// labels say it checks.
type SpecInfo struct {
	ID     string
	Name   string
	Claims []string
	// Source is where the spec (its It) is in the Go source.
	Source Source
}

// SpecsFromLabels builds a SpecInfo from a spec's text and labels.
func SpecsFromLabels(name string, labels []string) SpecInfo {
	s := SpecInfo{Name: name}
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, SpecLabelPrefix); ok {
			s.ID = v
		}
		if v, ok := strings.CutPrefix(l, ClaimLabelPrefix); ok {
			s.Claims = append(s.Claims, v)
		}
	}
	return s
}

// CheckLinks reports every broken tie between the catalog and the specs:
// a testable claim naming no existing spec, a spec without an ID or without a
// claim label, a claim label the catalog does not know, and a claim whose
// spec does not carry its label (or the other way round).
func CheckLinks(cat *Catalog, specs []SpecInfo) []error {
	var errs []error
	byID := map[string]SpecInfo{}
	for _, s := range specs {
		switch {
		case s.ID == "":
			errs = append(errs, fmt.Errorf("spec %q has no %s<id> label", s.Name, SpecLabelPrefix))
			continue
		case len(s.Claims) == 0:
			errs = append(errs, fmt.Errorf("spec %s (%q) carries no %s<id> label", s.ID, s.Name, ClaimLabelPrefix))
		}
		if _, dup := byID[s.ID]; dup {
			errs = append(errs, fmt.Errorf("spec ID %s is used twice", s.ID))
		}
		byID[s.ID] = s
		for _, id := range s.Claims {
			c, ok := cat.Claim(id)
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("spec %s carries label %s%s, which is not in the catalog", s.ID, ClaimLabelPrefix, id))
			case !slices.Contains(c.Specs, s.ID):
				errs = append(errs, fmt.Errorf("spec %s carries label %s%s, but that claim does not name the spec", s.ID, ClaimLabelPrefix, id))
			}
		}
	}
	for _, c := range cat.Claims {
		for _, id := range c.Specs {
			s, ok := byID[id]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("claim %s names spec %s, which does not exist", c.ID, id))
			case !slices.Contains(s.Claims, c.ID):
				errs = append(errs, fmt.Errorf("claim %s names spec %s, which does not carry the label %s%s", c.ID, id, ClaimLabelPrefix, c.ID))
			}
		}
	}
	return errs
}

// SpecPlace is where a spec that checks a claim is in the Go source
// (Source is nil when this binary has no spec of that ID).
type SpecPlace struct {
	ID     string  `json:"id"`
	Source *Source `json:"source,omitempty"`
}

// EvidencePlace is where a piece of evidence a claim reads is declared,
// and which of the claim's specs record it there.
type EvidencePlace struct {
	Name   string   `json:"name"`
	Specs  []string `json:"specs"`
	Source Source   `json:"source"`
}

// Locate finds the code behind a claim: the specs that check it and the
// declarations of the evidence its expectations, conditions and context
// read, in the order the claim reads them.
func Locate(c Claim, specs []SpecInfo, decls []EvidenceDecl) ([]SpecPlace, []EvidencePlace) {
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
