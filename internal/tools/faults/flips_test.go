package faults

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
)

// CheckFlips holds the catalog's flipsUnder against the fault matrix: a
// setting that makes a claim hold as written (a fault's confirms) is part
// of the claim's reading, so the claim names it; a claim names only faults
// that list it with that verdict; and the setting in words names the
// fault's flags (or the components it leaves out).
func CheckFlips(m *Matrix, cat *claims.Catalog) []error {
	faults := map[string]Fault{}
	for _, f := range m.Faults {
		faults[f.ID] = f
	}
	var errs []error
	for _, f := range m.Faults {
		for _, id := range f.Confirms {
			c, _ := cat.Claim(id)
			if flip, ok := flipOf(c, f.ID); !ok || flip.Verdict != claims.FlipsToConfirmed {
				errs = append(errs, fmt.Errorf("fault %s confirms %s, which does not name it in flipsUnder with verdict confirmed", f.ID, id))
			}
		}
	}
	for _, c := range cat.Claims {
		for _, flip := range c.FlipsUnder {
			f, ok := faults[flip.Fault]
			if !ok {
				errs = append(errs, fmt.Errorf("claim %s: flipsUnder names fault %s, which fixtures/faults.yaml does not have", c.ID, flip.Fault))
				continue
			}
			if got := f.Expected()[c.ID]; string(got) != string(flip.Verdict) {
				errs = append(errs, fmt.Errorf("claim %s: flips to %s under fault %s, which lists it as %q", c.ID, flip.Verdict, f.ID, got))
			}
			for _, arg := range f.ComponentArgs {
				_, flag, _ := strings.Cut(arg, "=")
				if !strings.Contains(flip.Setting, flag) {
					errs = append(errs, fmt.Errorf("claim %s: the setting %q of fault %s does not name its flag %s", c.ID, flip.Setting, f.ID, flag))
				}
			}
			for _, w := range f.Without {
				if !strings.Contains(flip.Setting, w) {
					errs = append(errs, fmt.Errorf("claim %s: the setting %q of fault %s does not name %s, which it leaves out", c.ID, flip.Setting, f.ID, w))
				}
			}
		}
	}
	return errs
}

func flipOf(c claims.Claim, fault string) (claims.Flip, bool) {
	for _, f := range c.FlipsUnder {
		if f.Fault == fault {
			return f, true
		}
	}
	return claims.Flip{}, false
}

// The catalog's flipsUnder and the fault matrix agree.
func TestFlipsUnderMatchTheFaults(t *testing.T) {
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(fixtures.MustRead("faults.yaml"), cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckFlips(m, cat) {
		t.Error(err)
	}
}

// The check finds a confirmed claim that does not name the fault, a flip
// no fault lists, and a setting that names another flag.
func TestCheckFlipsFindsMismatches(t *testing.T) {
	cat := catalog(t)
	m := &Matrix{Faults: []Fault{{ID: "cache-off", ComponentArgs: []string{"kube-apiserver=--watch-cache=false"}, Confirms: []string{"A-OTHER"}}}}
	for i := range cat.Claims {
		switch cat.Claims[i].ID {
		case "A-SCHED":
			cat.Claims[i].FlipsUnder = []claims.Flip{{Fault: "cache-off", Verdict: claims.FlipsToConfirmed, Setting: "kube-apiserver --watch-cache=false"}}
		case "A-KUBELET":
			cat.Claims[i].FlipsUnder = []claims.Flip{{Fault: "no-such-fault", Verdict: claims.FlipsToRefuted, Setting: "x"}}
		}
	}
	var got []string
	for _, err := range CheckFlips(m, cat) {
		got = append(got, err.Error())
	}
	want := []string{"fault cache-off confirms A-OTHER", "claim A-SCHED: flips to confirmed under fault cache-off, which lists it as", "claim A-KUBELET: flipsUnder names fault no-such-fault"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("%d: %q, want %q...", i, got[i], want[i])
		}
	}
	m.Faults[0].Confirms = []string{"A-SCHED"}
	cat.Claims[0].FlipsUnder[0].Setting = "kube-apiserver --watch-cache=true"
	if errs := CheckFlips(m, cat); len(errs) == 0 || !strings.Contains(errs[0].Error(), "does not name its flag --watch-cache=false") {
		t.Errorf("a setting naming another flag: %v", errs)
	}
}
