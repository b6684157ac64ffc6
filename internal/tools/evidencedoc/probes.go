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
			s := p.Steps[i]
			if s.Wait != nil && s.Wait.Since != "" {
				put(base+".took", "The time from the start of step %s to the end of the wait %s (ms).", s.Wait.Since, name)
			} else {
				put(base+".took", "How long step %s took (ms).", name)
			}
			command := s.Kubectl != nil || s.Exec != nil
			switch {
			case command:
				put(base+".code", "The exit code of step %s's kubectl (for exec, the command's own: kubectl exec exits with it); not an HTTP status.", name)
				put(base+".message", "What step %s's command wrote: its standard output, then its standard error.", name)
			case s.Wait != nil || s.StopComponent != "" || s.StartComponent != "":
				put(base+".code", "0: step %s makes no request whose status it records.", name)
				put(base+".message", "Why step %s failed; empty if it did not.", name)
			default:
				put(base+".code", "The HTTP status of step %s's last request (201 for a create, 200 for a patch or delete, 422 for an invalid object, 403 for a refusal).", name)
				put(base+".message", "The message of step %s's failed request; empty on success.", name)
			}
			put(base+".reason", "The API status reason of step %s's failed request (Invalid, Forbidden); empty on success.", name)
			put(base+".stdout", "Step %s's standard output (kubectl and exec steps; empty for others).", name)
			put(base+".stderr", "Step %s's standard error (kubectl and exec steps; empty for others).", name)
			put(base+".dropped", "The fields of step %s's manifest the created objects lack: dropped by the API server, not refused, as a field behind a disabled feature gate is (apply steps; empty for others).", name)
			put(base+".dropped.0", "One dropped field: the object, then its path.")
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
