package claims

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

var (
	idRE   = regexp.MustCompile(`^[A-Z0-9][A-Z0-9-]*[A-Z0-9]$`)
	specRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)
)

// Validate checks the catalog's shape: unique IDs, every field a verdict
// needs, and expectations the judge can evaluate. Whether the named specs
// exist is checked against the suites (see suites' catalog test).
func (c *Catalog) Validate() error {
	var errs []string
	seen := map[string]int{}
	for i, cl := range c.Claims {
		bad := func(format string, args ...any) {
			errs = append(errs, at(cl.Source)+fmt.Sprintf("claim %s (%s): %s", cl.ID, cl.Document, fmt.Sprintf(format, args...)))
		}
		if !idRE.MatchString(cl.ID) {
			bad("ID must be upper-case letters, digits and dashes")
		}
		if first, ok := seen[cl.ID]; ok {
			bad("%s", c.clash(first, i))
		} else {
			seen[cl.ID] = i
		}
		if cl.Section == "" || cl.Quote == "" || cl.Statement == "" || cl.Component == "" {
			bad("section, quote, statement and component are all required")
		}
		if !slices.Contains(kinds, cl.Kind) {
			bad("kind %q is not one of %v", cl.Kind, kinds)
		}
		if cl.Open != "" {
			if cl.NotTestable != "" {
				bad("open and notTestable exclude each other: a sentence is testable with no check yet (open) or no cluster can test it (notTestable)")
			}
			if len(cl.Specs) > 0 || len(cl.Expect) > 0 || len(cl.Conditional) > 0 || cl.relates() {
				bad("an open claim names no specs, expectations, differsFrom or flipsUnder: open says what check is missing")
			}
			continue
		}
		if !cl.Testable() {
			if len(cl.Specs) > 0 || len(cl.Expect) > 0 || cl.relates() {
				bad("a claim marked not testable names no specs, expectations, differsFrom or flipsUnder")
			}
			continue
		}
		if len(cl.Specs) == 0 {
			bad("names no spec (mark it notTestable with the reason if no cluster can test it)")
		}
		for _, r := range cl.Requires {
			if !slices.Contains(cluster.Capabilities, r) {
				bad("requires %q, which is not a capability (%v)", r, cluster.Capabilities)
			}
		}
		for _, s := range cl.Specs {
			if !specRE.MatchString(s) {
				bad("spec ID %q must be lower-case letters, digits and dashes", s)
			}
		}
		if len(cl.Expect) == 0 {
			bad("has no expectations: the judge could only confirm it in advance")
		}
		for _, e := range cl.Expect {
			if err := e.Validate(); err != nil {
				bad("%v", err)
			}
		}
		if cl.Kind == Timing && (cl.Claimed == "" || !slices.ContainsFunc(cl.Expect, expect.Expectation.Ranged)) {
			bad("a timing claim gives the document's number (claimed) and the range it is taken as (an expectation with atLeast/atMost, or withinClaimed); a claim about an order or the slowest step is a behaviour claim")
		}
		if cl.usesClaimed() {
			if _, err := expect.ParseClaimed(cl.Claimed); err != nil {
				bad("withinClaimed: %v", err)
			}
		}
		for _, err := range cl.validateRelations() {
			bad("%v", err)
		}
		for _, b := range cl.validateReadings() {
			bad("%s", b)
		}
		for _, alt := range cl.Conditional {
			if alt.Condition == "" || len(alt.Expect) == 0 {
				bad("a conditional alternative needs a condition and expectations")
			}
			for _, e := range alt.Expect {
				if err := e.Validate(); err != nil {
					bad("%v", err)
				}
			}
		}
	}
	errs = append(errs, c.checkDifferences()...)
	probes := map[string]bool{}
	for _, p := range c.Probes {
		if probes[p.ID] {
			errs = append(errs, fmt.Sprintf("probe %s (%s): the ID is used twice", p.ID, p.Document))
		}
		probes[p.ID] = true
		if !specRE.MatchString(p.ID) {
			errs = append(errs, fmt.Sprintf("probe %s: ID must be lower-case letters, digits and dashes", p.ID))
		}
		errs = append(errs, p.Validate()...)
		errs = append(errs, p.ValidateCluster()...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid claims catalog:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// clash says why claim i's ID, already claim first's, cannot be used: a
// claim of the built-in catalog, or another claim, and where that one is.
func (c *Catalog) clash(first, i int) string {
	other := c.Claims[first]
	where := other.Document
	if other.Source != nil {
		where += ", " + other.Source.File + ":" + strconv.Itoa(other.Source.Line)
	}
	if first < c.builtin && i >= c.builtin {
		return fmt.Sprintf("the ID is already a claim of the built-in catalog (%s): choose another", where)
	}
	return fmt.Sprintf("duplicate ID: also the ID of the claim at %s", where)
}

// at prefixes a message with a place in a claims file ("f.yaml:12: "),
// when the place is known.
func at(src *evidence.Source) string {
	if src == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", src.File, src.Line)
}
