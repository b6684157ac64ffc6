package evidencedoc

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
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
		put(claims.StepsEvidence, "What each step of the probe did, by step name.")
		for i, name := range p.StepNames() {
			base := claims.StepsEvidence + "." + name
			put(base, "Step %s (%s).", name, stepAction(p.Steps[i]))
			put(base+".at", "When step %s began (ms after the probe's first step began).", name)
			put(base+".took", "How long step %s took (ms).", name)
			put(base+".code", "The HTTP status of step %s's last request (201 for a create, 422 for an invalid object), or the exit code of its kubectl or command; 0 for a wait.", name)
			put(base+".reason", "The API status reason of step %s's failed request (Invalid, Forbidden); empty on success.", name)
			put(base+".message", "Step %s's failure message, or its command's output.", name)
		}
		for _, o := range p.Observe {
			describeObserver(o, put)
		}
		out[p.ID] = m
	}
	return out
}

func stepAction(s claims.Step) string {
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

func describeObserver(o claims.Observer, put func(path, text string, args ...any)) {
	n := o.Name
	switch {
	case o.Object != nil:
		obj := o.Object.Object.String()
		put(n, "The history of %s from a watch, from the probe's start.", obj)
		put(n+".versions", "Every version of %s the watch delivered, in order.", obj)
		put(n+".versions.0.at", "When the watch delivered the version (ms).")
		put(n+".versions.0.type", "The watch event: ADDED, MODIFIED or DELETED.")
		put(n+".first", "The fields of the first version seen.")
		put(n+".last", "The fields of the last version seen.")
		put(n+".values", "Each field's distinct successive values.")
		put(n+".changes", "When each of a field's values began.")
		put(n+".intervals", "The time between successive changes of a field (ms).")
		for f, jp := range o.Object.Fields {
			put(n+".versions.0."+f, "%s in that version (%s).", f, jp)
			put(n+".first."+f, "%s in the first version seen (%s).", f, jp)
			put(n+".last."+f, "%s in the last version seen (%s).", f, jp)
			put(n+".values."+f, "The distinct successive values of %s (%s), in order.", f, jp)
			put(n+".values."+f+".0", "One value of %s, in the order they came.", f)
			put(n+".changes."+f, "When each value of %s began.", f)
			put(n+".changes."+f+".0.at", "When the value began (ms).")
			put(n+".changes."+f+".0.value", "The value of %s from then on.", f)
			put(n+".intervals."+f, "The time between successive changes of %s (ms).", f)
			put(n+".intervals."+f+".0", "One interval between changes of %s (ms).", f)
		}
		put(n+".deleted", "Whether %s was deleted while the probe ran.", obj)
		put(n+".deletedAt", "When the watch saw %s deleted (ms); null if it was not.", obj)
		put(n+".count", "How many versions of %s the watch delivered.", obj)
	case o.Events != nil:
		obj := o.Events.String()
		put(n, "The Events about %s.", obj)
		put(n+".events", "Every Event about %s, in the order seen.", obj)
		for f, text := range map[string]string{"reason": "Its reason (Scheduled, Pulled, BackOff, Killing).", "type": "Normal or Warning.",
			"message": "Its message.", "count": "How many times it was reported.", "source": "The component that reported it.", "at": "When the watch first saw it (ms)."} {
			put(n+".events.0."+f, "%s", text)
		}
		put(n+".reasons", "The distinct reasons of the Events about %s, in the order first seen.", obj)
		put(n+".reasons.0", "One reason.")
		put(n+".count", "How many distinct Events about %s were seen.", obj)
	case o.Audit != nil:
		put(n, "The API server's audit entries of the probe's namespace that match the observer's filter.")
		put(n+".entries", "The matching audit entries, in the order received.")
		for f, text := range map[string]string{"user": "The requesting user.", "verb": "The request's verb.", "resource": "The resource.",
			"subresource": "The subresource, if any.", "name": "The object's name.", "code": "The response's HTTP status.", "at": "When the request was received (ms)."} {
			put(n+".entries.0."+f, "%s", text)
		}
		put(n+".codes", "The response codes of the matching entries, in order.")
		put(n+".codes.0", "One response code.")
		put(n+".count", "How many audit entries matched.")
	case o.EndpointSlices != nil:
		svc := o.EndpointSlices.Service
		put(n, "The endpoints of Service %s over time, from its EndpointSlices.", svc)
		put(n+".versions", "Service %s's endpoints after each change, in order.", svc)
		put(n+".last", "Service %s's endpoints when the probe ended.", svc)
		put(n+".everReady", "Every Pod that was a ready endpoint of %s at some time.", svc)
		put(n+".everReady.0", "One Pod's name.")
		for _, base := range []string{n + ".versions.0", n + ".last"} {
			put(base+".at", "When the change was seen (ms).")
			put(base+".ready", "The Pods whose endpoint was ready.")
			put(base+".serving", "The Pods whose endpoint was serving.")
			put(base+".terminating", "The Pods whose endpoint was terminating.")
			put(base+".all", "Every Pod with an endpoint.")
			for _, l := range []string{"ready", "serving", "terminating", "all"} {
				put(base+"."+l+".0", "One Pod's name.")
			}
		}
	case o.Etcd != nil:
		obj := o.Etcd.String()
		put(n, "%s as etcd held it after each step.", obj)
		put(n+".found", "Whether etcd held %s after some step.", obj)
		put(n+".foundAfter", "The steps after which etcd held %s.", obj)
		put(n+".foundAfter.0", "One step's name.")
		put(n+".key", "The key %s was last stored under, the probe's namespace as {namespace}.", obj)
		put(n+".encoding", "How it was last stored: protobuf, json or other.")
	case o.Metric != nil:
		put(n, "The %s metric %s when the probe started and when it ended.", o.Metric.Component, o.Metric.Name)
		put(n+".before", "Its value when the probe started.")
		put(n+".after", "Its value when the probe ended.")
		put(n+".change", "after - before.")
	}
}
