package controllers

import (
	"github.com/kubeproof/kubeproof/kube/audit"
)

func firstOf(es []audit.Event, verb, resource, subresource string, also func(audit.Event) bool) *audit.Event {
	for i, e := range es {
		if matches(e, verb, resource, subresource, "") && also(e) {
			return &es[i]
		}
	}
	return nil
}

func first(es []audit.Event, verb, resource, subresource, user string) *audit.Event {
	for i, e := range es {
		if matches(e, verb, resource, subresource, user) {
			return &es[i]
		}
	}
	return nil
}

func count(es []audit.Event, verb, resource, subresource, user string) int {
	n := 0
	for _, e := range es {
		if matches(e, verb, resource, subresource, user) {
			n++
		}
	}
	return n
}

// matches selects audit events: resource "" and subresource "*" match any,
// user "" matches anyone.
func matches(e audit.Event, verb, resource, subresource, user string) bool {
	return e.Verb == verb && (resource == "" || e.ObjectRef.Resource == resource) &&
		(subresource == "*" || e.ObjectRef.Subresource == subresource) && (user == "" || e.User.Username == user)
}

func usersOf(es []audit.Event, verb, resource, subresource string) []string {
	seen := map[string]bool{}
	for _, e := range es {
		if matches(e, verb, resource, subresource, "") {
			seen[e.User.Username] = true
		}
	}
	return keys(seen)
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}
