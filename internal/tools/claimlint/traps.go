package claimlint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/observer"
	"github.com/kubeproof/kubeproof/claims/probe"
)

// Traps warns where a probe cannot observe what its claim says, though the
// file is well formed: each warning names the claim, the trap and what to
// do instead. They do not stop a run: the claim may mean exactly what it
// reads (a wait's own time), and a reader decides.
//
//   - A wait's took counts from the wait's own start, which is when the
//     step before it ended, not from the step whose effect it waits for:
//     a claim about the time from an action reads a wait with since.
//   - Two times of one object observer are the times the watch delivered
//     two versions: changes that one status update made have one time, and
//     the kubelet writes no status while it kills a Pod's containers, so
//     the order of their exits cannot be seen from the Pod.
//   - A window narrower than the jitter a component documents passes or
//     fails by chance (Jitters).
//   - The first version of a Pod the probe creates is the Pod as created:
//     of its status it has only the phase, so a first.<field> read from
//     anything else in .status (a container's restartCount, a condition)
//     is always null.
func Traps(own []claims.Claim, probes []probe.LoadedProbe) []string {
	var out []string
	for _, c := range own {
		if !c.Checked() {
			continue
		}
		for _, spec := range c.Specs {
			p, ok := probeOf(probes, spec)
			if !ok {
				continue
			}
			for _, e := range expectations(c) {
				if e.Spec != "" && e.Spec != p.ID {
					continue
				}
				for _, w := range trapsOf(c, p, e) {
					out = append(out, fmt.Sprintf("claim %s: %s", c.ID, w))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func probeOf(probes []probe.LoadedProbe, id string) (probe.LoadedProbe, bool) {
	for _, p := range probes {
		if p.ID == id {
			return p, true
		}
	}
	return probe.LoadedProbe{}, false
}

// expectations are a claim's expectations and its alternatives'.
func expectations(c claims.Claim) []expect.Expectation {
	out := slices.Clone(c.Expect)
	for _, alt := range c.Conditional {
		out = append(out, alt.Expect...)
	}
	return out
}

func trapsOf(c claims.Claim, p probe.LoadedProbe, e expect.Expectation) []string {
	var out []string
	for _, path := range []string{e.Evidence, e.Minus, e.Other()} {
		if w := waitTook(p, path); w != "" {
			out = append(out, w)
		}
	}
	for _, path := range []string{e.Evidence, e.Minus, e.Other()} {
		if w := statusAtCreation(p, path); w != "" {
			out = append(out, w)
		}
	}
	if w := unseenOrder(p, e); w != "" {
		out = append(out, w)
	}
	if w := jitterWindow(c, p, e); w != "" {
		out = append(out, w)
	}
	return out
}

// waitTook warns about a wait's took read without since.
func waitTook(p probe.LoadedProbe, path string) string {
	parts := strings.Split(path, ".")
	if len(parts) != 3 || parts[0] != probe.StepsEvidence || parts[2] != "took" {
		return ""
	}
	names := p.StepNames()
	i := slices.Index(names, parts[1])
	if i < 0 || p.Steps[i].Wait == nil || p.Steps[i].Wait.Since != "" {
		return ""
	}
	from := "the probe's start"
	if i > 0 {
		from = "when step " + names[i-1] + " ended"
	}
	return fmt.Sprintf("%s counts from the wait's own start (%s), not from the step whose effect it waits for: give the wait since: STEP to count from that step's start (since: %s, its own name, if its own start is meant)", path, from, parts[1])
}

// statusAtCreation warns about first.<field> of a Pod observer where the
// field reads the status beyond its phase: the API server sets only the
// phase (Pending) when it creates a Pod; the kubelet reports containers,
// conditions and IPs in later versions.
func statusAtCreation(p probe.LoadedProbe, path string) string {
	parts := strings.Split(path, ".")
	if len(parts) != 3 || parts[1] != "first" {
		return ""
	}
	o := observerNamed(p, parts[0])
	if o == nil {
		return ""
	}
	obj, ok := o.Spec.(*observer.Object)
	if !ok || obj.Kind != "Pod" {
		return ""
	}
	jp := obj.Fields[parts[2]]
	if !strings.HasPrefix(jp, "{.status.") || strings.HasPrefix(jp, "{.status.phase}") {
		return ""
	}
	return fmt.Sprintf("%s is %s in the first version the watch delivered, the Pod as created, whose status has only its phase: it is null there; read values.%s.1 (the first value reported), last.%s, or changes", path, jp, parts[2], parts[2])
}

// unseenOrder warns about an order of two times of one object observer.
func unseenOrder(p probe.LoadedProbe, e expect.Expectation) string {
	if e.Before == "" && e.After == "" && e.Minus == "" && (e.SameAs == "" || e.Tolerance == nil) {
		return ""
	}
	a, b := e.Evidence, cmp.Or(e.Minus, e.Other())
	oa, okA := objectTime(p, a)
	ob, okB := objectTime(p, b)
	if !okA || !okB || oa != ob {
		return ""
	}
	o := observerNamed(p, oa).Spec.(*observer.Object)
	w := fmt.Sprintf("%s and %s are times the watch delivered versions of %s: changes one status update made have one time, so an order between them may not show", a, b, o.Ref)
	if o.Kind == "Pod" {
		w += "; and the kubelet writes no status while it kills a Pod's containers, so the order of their exits cannot be seen from the Pod: read each container's own record (its termination message: the test app's lines carry their times)"
	}
	return w
}

// objectTime says whether path is a time of an object observer (a
// version's or a change's at), and which.
func objectTime(p probe.LoadedProbe, path string) (string, bool) {
	parts := strings.Split(path, ".")
	if len(parts) < 4 || parts[len(parts)-1] != "at" {
		return "", false
	}
	o := observerNamed(p, parts[0])
	if o == nil {
		return "", false
	}
	_, ok := o.Spec.(*observer.Object)
	return parts[0], ok && (parts[1] == "versions" || parts[1] == "changes")
}

func observerNamed(p probe.LoadedProbe, name string) *probe.Observer {
	for i := range p.Observe {
		if p.Observe[i].Name == name {
			return &p.Observe[i]
		}
	}
	return nil
}

// Jitter is a component's documented randomness in a delay: a window
// around that delay narrower than it passes or fails by chance.
type Jitter struct {
	// Field matches the JSONPath of an object observer's field whose
	// changes the delay separates.
	Field string
	// Factor is the largest delay over the smallest it documents (1.5: up
	// to 50% more).
	Factor float64
	// Why names the delay and where it is documented.
	Why string
}

// Jitters are the jitters kubeproof knows of.
var Jitters = []Jitter{
	{Field: "restartCount", Factor: 1.5, Why: "the kubelet restarts a container in back-off at the next sync of its Pod, which its pod workers queue after the back-off with up to 50% jitter (pod_workers.go: wait.Jitter(backOffPeriod, 0.5))"},
}

// jitterWindow warns about a range narrower than the jitter of the delay
// the evidence measures.
func jitterWindow(c claims.Claim, p probe.LoadedProbe, e expect.Expectation) string {
	lo, hi, ok := window(c, e)
	if !ok || lo <= 0 {
		return ""
	}
	parts := strings.Split(e.Evidence, ".")
	if len(parts) < 3 || (parts[1] != "intervals" && parts[1] != "changes") {
		return ""
	}
	o := observerNamed(p, parts[0])
	if o == nil {
		return ""
	}
	obj, isObject := o.Spec.(*observer.Object)
	if !isObject {
		return ""
	}
	for _, j := range Jitters {
		if strings.Contains(obj.Fields[parts[2]], j.Field) && hi < lo*j.Factor {
			return fmt.Sprintf("%s is held to %g-%g ms, a window narrower than the delay's own jitter (%g×): %s; widen it to at least %g-%g, or read the delay's lower bound only", e.Evidence, lo, hi, j.Factor, j.Why, lo, lo*j.Factor)
		}
	}
	return ""
}

// window is an expectation's range: atLeast/atMost, or withinClaimed's.
func window(c claims.Claim, e expect.Expectation) (lo, hi float64, ok bool) {
	if e.WithinClaimed {
		r, err := expect.ParseClaimed(c.Claimed)
		if err != nil || r.AtLeast == nil || r.AtMost == nil {
			return 0, 0, false
		}
		return *r.AtLeast, *r.AtMost, true
	}
	if e.AtLeast == nil || e.AtMost == nil {
		return 0, 0, false
	}
	return *e.AtLeast, *e.AtMost, true
}
