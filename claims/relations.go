package claims

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Difference is a claim's reviewed reason to read a failure of some of the
// same evidence otherwise than another claim does.
type Difference struct {
	// Claim is the other claim's ID.
	Claim string `json:"claim"`
	// Reason says why the two sentences, read at their own strength, take
	// different verdicts on the same observation (what one asserts that the
	// other does not).
	Reason string `json:"reason"`
}

// FlipVerdict is the verdict a claim takes under a fault's setting.
type FlipVerdict string

const (
	// FlipsToConfirmed: the sentence holds as written under the setting.
	FlipsToConfirmed FlipVerdict = "confirmed"
	// FlipsToRefuted: the cluster contradicts the sentence under the setting.
	FlipsToRefuted FlipVerdict = "refuted"
)

// Flip is a setting under which a claim takes another verdict than on a
// default cluster.
type Flip struct {
	// Fault is the ID of the fault of fixtures/faults.yaml that makes the
	// setting (`kubeproof faults --fault <fault>`); it must list the claim
	// with Verdict.
	Fault string `json:"fault"`
	// Verdict is the claim's verdict under the setting.
	Verdict FlipVerdict `json:"verdict"`
	// Setting is the setting in words, as a reader would make it (the
	// component and its flag: "kube-apiserver --watch-cache=false").
	Setting string `json:"setting"`
}

// faultRE is the form of a fault's ID (as fixtures/faults.yaml's).
var faultRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)

// relates reports whether the claim names other claims or faults.
func (c Claim) relates() bool { return len(c.DiffersFrom) > 0 || len(c.FlipsUnder) > 0 }

// validateRelations checks the claim's differsFrom and flipsUnder on their
// own; that the claims they name exist is checkDifferences's, that the
// faults do is the fault matrix's test.
func (c Claim) validateRelations() []error {
	var errs []error
	for _, d := range c.DiffersFrom {
		switch {
		case d.Claim == "" || strings.TrimSpace(d.Reason) == "":
			errs = append(errs, errors.New("a differsFrom entry names a claim and the reason"))
		case d.Claim == c.ID:
			errs = append(errs, errors.New("differsFrom names the claim itself"))
		}
	}
	for _, f := range c.FlipsUnder {
		switch {
		case !faultRE.MatchString(f.Fault):
			errs = append(errs, fmt.Errorf("flipsUnder: fault %q is not a fault ID (lower-case letters, digits and dashes)", f.Fault))
		case f.Verdict != FlipsToConfirmed && f.Verdict != FlipsToRefuted:
			errs = append(errs, fmt.Errorf("flipsUnder %s: verdict %q is not %s or %s", f.Fault, f.Verdict, FlipsToConfirmed, FlipsToRefuted))
		case strings.TrimSpace(f.Setting) == "":
			errs = append(errs, fmt.Errorf("flipsUnder %s: the setting is required, in words", f.Fault))
		}
	}
	return errs
}

// checkDifferences reports differsFrom entries that name no claim of the
// catalog.
func (c *Catalog) checkDifferences() []string {
	ids := map[string]bool{}
	for _, cl := range c.Claims {
		ids[cl.ID] = true
	}
	var errs []string
	for _, cl := range c.Claims {
		for _, d := range cl.DiffersFrom {
			if d.Claim != "" && !ids[d.Claim] {
				errs = append(errs, at(cl.Source)+fmt.Sprintf("claim %s (%s): differsFrom names claim %s, which is not in the catalog", cl.ID, cl.Document, d.Claim))
			}
		}
	}
	return errs
}

// Differs reports whether claim a or claim b names the other in its
// differsFrom.
func Differs(a, b Claim) bool {
	names := func(x, y Claim) bool {
		return slices.ContainsFunc(x.DiffersFrom, func(d Difference) bool { return d.Claim == y.ID })
	}
	return names(a, b) || names(b, a)
}
