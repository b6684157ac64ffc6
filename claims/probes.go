package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/probe"
)

// ProbeFiles are the absolute paths of the files the catalog's probes are
// written in, each once.
func (c *Catalog) ProbeFiles() []string {
	var out []string
	for _, p := range c.Probes {
		if p.Path != "" && !slices.Contains(out, p.Path) {
			out = append(out, p.Path)
		}
	}
	return out
}

// Probe returns the probe with id.
func (c *Catalog) Probe(id string) (probe.LoadedProbe, bool) {
	for _, p := range c.Probes {
		if p.ID == id {
			return p, true
		}
	}
	return probe.LoadedProbe{}, false
}

// ProbeEvidence declares the evidence of every probe of the catalog.
func (c *Catalog) ProbeEvidence() []evidence.EvidenceDecl {
	var out []evidence.EvidenceDecl
	for _, p := range c.Probes {
		out = append(out, p.Evidence(evidence.Source{File: p.File})...)
	}
	return out
}

// CheckProbeNeeds reports every claim that reads evidence of a probe's
// observer without requiring what the observer needs (nor the probe
// requiring it).
func CheckProbeNeeds(cat *Catalog) []error {
	var errs []error
	for _, c := range WithReadings(cat.Claims) {
		paths := slices.Clone(c.Context)
		for _, e := range c.Expect {
			paths = append(paths, e.Evidence)
		}
		for _, alt := range c.Conditional {
			for _, e := range alt.Expect {
				paths = append(paths, e.Evidence)
			}
		}
		for _, spec := range c.Specs {
			p, ok := cat.Probe(spec)
			if !ok {
				continue
			}
			for _, o := range p.Observe {
				reads := slices.ContainsFunc(paths, func(path string) bool { return path == o.Name || strings.HasPrefix(path, o.Name+".") })
				for _, need := range o.Needs() {
					if reads && !slices.Contains(c.Requires, need) && !slices.Contains(p.Requires, need) {
						errs = append(errs, fmt.Errorf("claim %s: reads %s, an observer of probe %s that needs capability %s: add it to the claim's requires", c.ID, o.Name, p.ID, need))
					}
				}
			}
		}
	}
	return errs
}
