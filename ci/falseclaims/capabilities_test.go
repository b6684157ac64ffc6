package falseclaims

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// newCapabilities are the capabilities of the probe language that issue 43
// added, as "observer:KIND", "step:KEY" (a step's kind, or its as, env,
// stdin), "scope:cluster" and "operator:KEY".
var newCapabilities = []string{
	"observer:featureGates", "observer:nodeFile", "observer:runtime", "observer:container",
	"observer:cniCalls", "observer:host", "observer:endpointSlices", "observer:nodeConditions",
	"step:restartComponent", "step:restoreComponent", "step:addComponent", "step:signal",
	"step:as", "step:env", "step:stdin", "scope:cluster",
	"operator:sameAs", "operator:tolerance", "operator:notSameAs", "operator:before", "operator:after",
	"operator:minus", "operator:notMatches", "operator:noneMatches", "operator:absent",
}

// seenFalse is, per example, the claim written to be false that shows each
// new capability its claims use going the other way (the READMEs' "Seen
// both ways" tables).
var seenFalse = map[string]map[string]string{
	"pod-lifecycle": {
		"observer:featureGates":   "PL-BACKOFF-CAP-FALSE",
		"step:restartComponent":   "PL-PODGC-FALSE",
		"scope:cluster":           "PL-AGENTS-RESTART-FALSE",
		"step:restoreComponent":   "PL-GATE-DROPPED-FALSE",
		"step:addComponent":       "PL-SCHEDULER-NAME-FALSE",
		"operator:noneMatches":    "PL-SCHEDULER-NAME-FALSE",
		"step:signal":             "PL-NODE-LOST-SANDBOX-FALSE",
		"observer:runtime":        "PL-NODE-SANDBOX-FALSE",
		"observer:container":      "PL-NODE-PID1-FALSE",
		"observer:cniCalls":       "PL-NODE-CNI-CALLS-FALSE",
		"observer:host":           "PL-NODE-APPARMOR-FALSE",
		"observer:nodeFile":       "PL-NODE-POD-DIR-FALSE",
		"observer:endpointSlices": "PL-READINESS-RECOVERS-FALSE",
		"step:stdin":              "PL-IMAGE-CREDENTIALS-FALSE",
		"operator:before":         "PL-IMAGE-PULLED-FALSE",
		"operator:after":          "PL-PROBE-GRPC-FALSE",
	},
	"deployment-rollout": {
		"step:env":             "DR-EDIT-FALSE",
		"step:stdin":           "DR-OVERLAP-ALLOWED-FALSE",
		"operator:sameAs":      "DR-HASH-NO-OVERLAP-FALSE",
		"operator:notSameAs":   "DR-ADOPT-FALSE",
		"operator:after":       "DR-ROLLING-ORDER-FALSE",
		"operator:minus":       "DR-MINREADY-FALSE",
		"operator:noneMatches": "DR-PROGRESSING-COND-FALSE",
		"operator:absent":      "DR-NOT-PAUSED-DEFAULT-FALSE",
	},
}

// effects are, for a step or scope capability, the evidence through which
// its false claim turns it the other way: a step's own result (steps.NAME)
// or what the step did, as an observer saw it (PL-PODGC's restarted
// controller manager deletes the old Pod: older.deleted). A step is in the
// claim's probe whatever the claim reads, so the probe alone shows nothing;
// the flipped expectation must read this evidence.
var effects = map[string]map[string]string{
	"pod-lifecycle": {
		"step:restartComponent": "older.deleted",
		"scope:cluster":         "steadyProc.",
		"step:restoreComponent": "apiGates.",
		"step:addComponent":     "otherEvents.",
		"step:signal":           "lostRuntime.",
		"step:stdin":            "withCreds.",
	},
	"deployment-rollout": {
		"step:env":   "rs.objects.2.first.args",
		"step:stdin": "steps.overlap.",
	},
}

// readsEffect says whether one of es reads evidence under prefix.
func readsEffect(es []expect.Expectation, prefix string) bool {
	return slices.ContainsFunc(es, func(e expect.Expectation) bool {
		return slices.ContainsFunc([]string{e.Evidence, e.Other(), e.Minus}, func(p string) bool {
			return p != "" && strings.HasPrefix(p, prefix)
		})
	})
}

// TestEveryCapabilitySeenFalse: each new capability an example's claims use
// has a claim written to be false that uses it in what it turned the other
// way (an operator, an observer it reads) or in its probe (a step, the
// scope), and the table names no capability the example does not use.
func TestEveryCapabilitySeenFalse(t *testing.T) {
	for example, table := range seenFalse {
		t.Run(example, func(t *testing.T) {
			dir := filepath.Join("..", "..", "docs", "examples", example)
			trueCat, trueOwn := load(t, filepath.Join(dir, "claims.yaml"))
			falseCat, falseOwn := load(t, filepath.Join(dir, "false.yaml"))
			used := map[string]bool{}
			for _, c := range trueOwn {
				for _, capability := range uses(t, trueCat, c, c.Expect, conditionalExpect(c)...) {
					used[capability] = true
				}
			}
			originals := pairs(t, trueOwn, falseOwn)
			for _, capability := range newCapabilities {
				id, listed := table[capability]
				switch {
				case used[capability] && !listed:
					t.Errorf("the claims use %s, and no claim written to be false shows it refuted", capability)
				case !used[capability] && listed:
					t.Errorf("the table names %s for %s, which no claim of claims.yaml uses", id, capability)
				case listed:
					i := slices.IndexFunc(falseOwn, func(c claims.Claim) bool { return c.ID == id })
					if i < 0 {
						t.Errorf("%s: no claim %s in false.yaml", capability, id)
						continue
					}
					turned := flipped(falseOwn[i], originals[id])
					if !slices.Contains(uses(t, falseCat, falseOwn[i], turned), capability) {
						t.Errorf("%s does not turn %s the other way", id, capability)
					}
					if strings.HasPrefix(capability, "step:") || strings.HasPrefix(capability, "scope:") {
						effect, ok := effects[example][capability]
						if !ok || !readsEffect(turned, effect) {
							t.Errorf("%s: %s turns nothing the other way that the step did (effects names %q)", capability, id, effect)
						}
					}
				}
			}
		})
	}
}

// conditionalExpect are the expectations of c's conditions, and its
// context as evidence read: a claim uses the observer its context shows
// (PL-NODE-APPARMOR reads host facts through its probe's wait, and shows
// them as context).
func conditionalExpect(c claims.Claim) []expect.Expectation {
	var out []expect.Expectation
	for _, a := range c.Conditional {
		out = append(out, a.Expect...)
	}
	for _, path := range c.Context {
		out = append(out, expect.Expectation{Evidence: path})
	}
	return out
}

// uses are the new capabilities of claim c in its expectations es (and
// more): the operators they use, the observers' kinds they read, and the
// steps and scope of c's probes.
func uses(t *testing.T, cat *claims.Catalog, c claims.Claim, es []expect.Expectation, more ...expect.Expectation) []string {
	t.Helper()
	set := map[string]bool{}
	for _, id := range c.Specs {
		for _, p := range cat.Probes {
			if p.ID != id {
				continue
			}
			probe, _ := asJSON(t, p.Probe).(map[string]any)
			if probe["scope"] == "cluster" {
				set["scope:cluster"] = true
			}
			steps, _ := probe["steps"].([]any)
			for _, s := range steps {
				for key := range s.(map[string]any) {
					set["step:"+strings.TrimSuffix(key, "File")] = true // stdinFile is stdin
				}
			}
			observers, _ := probe["observe"].([]any)
			for _, e := range append(es, more...) {
				ex, _ := asJSON(t, e).(map[string]any)
				for key := range ex {
					set["operator:"+key] = true
				}
				for _, path := range []any{ex["evidence"], ex["sameAs"], ex["notSameAs"], ex["before"], ex["after"], ex["minus"]} {
					root, _, _ := strings.Cut(str(path), ".")
					for _, o := range observers {
						o := o.(map[string]any)
						if o["name"] != root {
							continue
						}
						for key := range o {
							set["observer:"+key] = true
						}
					}
				}
			}
		}
	}
	var out []string
	for capability := range set {
		if slices.Contains(newCapabilities, capability) {
			out = append(out, capability)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
