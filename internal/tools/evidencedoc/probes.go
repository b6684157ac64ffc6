package evidencedoc

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/probe"
)

// ProbeMeanings explains the evidence of a catalog's probes, whose types
// are made from the claims file (an object observer's fields), so that
// their meaning is written from what the file asks for rather than read
// from Go comments. Each path is explained as Expand names it.
func ProbeMeanings(cat *claims.Catalog) Meanings {
	out := Meanings{}
	for _, p := range cat.Probes {
		m := map[string]Meaning{}
		put := func(path, text string, args ...any) {
			m[path] = Meaning{Text: fmt.Sprintf(text, args...), From: "probe " + p.ID}
		}
		put(probe.StepsEvidence, "What each step of the probe did, by step name.")
		for i, name := range p.StepNames() {
			base := probe.StepsEvidence + "." + name
			put(base, "Step %s (%s).", name, stepAction(p.Steps[i]))
			put(base+".at", "When step %s began (ms after the probe's first step began).", name)
			put(base+".took", "How long step %s took (ms).", name)
			put(base+".code", "The HTTP status of step %s's last request (201 for a create, 422 for an invalid object), or the exit code of its kubectl or command; 0 for a wait.", name)
			put(base+".reason", "The API status reason of step %s's failed request (Invalid, Forbidden); empty on success.", name)
			put(base+".message", "Step %s's failure message, or its command's output.", name)
		}
		for _, o := range p.Observe {
			if o.Spec != nil {
				o.Spec.Explain(o.Name, put)
			}
		}
		out[p.ID] = m
	}
	return out
}

func stepAction(s probe.Step) string {
	switch {
	case s.Apply != nil:
		return "apply"
	case s.Patch != nil:
		return "patch " + s.Patch.Object.String()
	case s.Delete != nil:
		return "delete " + s.Delete.Object.String()
	case s.Wait != nil:
		return "wait on " + s.Wait.Observer
	case s.Kubectl != nil:
		return "kubectl " + strings.Join(s.Kubectl, " ")
	case s.Exec != nil:
		return "exec in " + s.Exec.Pod
	case s.StopComponent != "":
		return "stop " + s.StopComponent
	case s.StartComponent != "":
		return "start " + s.StartComponent
	}
	return "?"
}
