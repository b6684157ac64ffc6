package incluster

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/kube/access"
)

// needs are the permissions the run outside needs to start, watch, read
// and remove the run inside: each is asked before anything is made.
func (n names) needs(secret bool) []access.Permission {
	in := func(verb, group, resource, sub string) access.Permission {
		return access.Permission{Verb: verb, Group: group, Resource: resource, Subresource: sub, Namespace: n.namespace}
	}
	cluster := func(verb, group, resource string) access.Permission {
		return access.Permission{Verb: verb, Group: group, Resource: resource}
	}
	const rbac = "rbac.authorization.k8s.io"
	perms := []access.Permission{
		cluster("create", "", "namespaces"), cluster("delete", "", "namespaces"),
		cluster("create", rbac, "clusterroles"), cluster("delete", rbac, "clusterroles"),
		cluster("create", rbac, "clusterrolebindings"), cluster("delete", rbac, "clusterrolebindings"),
		in("create", "", "serviceaccounts", ""), in("create", "", "configmaps", ""),
		in("create", "batch", "jobs", ""), in("delete", "batch", "jobs", ""),
		in("list", "", "pods", ""), in("watch", "", "pods", ""), in("patch", "", "pods", ""), in("delete", "", "pods", ""),
		in("get", "", "pods", "log"), in("create", "", "pods", "exec"),
	}
	if secret {
		perms = append(perms, in("create", "", "secrets", ""))
	}
	return perms
}

// everything is what the run inside's ClusterRole grants: every verb on
// every resource. A user may grant it who has it (a cluster admin), or
// who may escalate and bind ClusterRoles.
var (
	everything = access.Permission{Verb: "*", Group: "*", Resource: "*"}
	escalate   = access.Permission{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}
	bind       = access.Permission{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}
)

// checkAccess asks the API server whether user may do what a run inside
// the cluster takes, and names every permission missing in one line;
// nothing is made before it answers.
func (n names) checkAccess(ctx context.Context, client kubernetes.Interface, user string, secret bool) error {
	perms := append(n.needs(secret), everything, escalate, bind)
	results, err := access.Check(ctx, client, "", perms)
	if err != nil {
		return exitcode.Errorf(exitcode.Forbidden, "could not ask what %s may do: %v", user, err)
	}
	allowed := map[access.Permission]bool{}
	var missing []string
	for _, r := range results {
		allowed[r.Permission] = r.Allowed
		if !r.Allowed && r.Permission != everything && r.Permission != escalate && r.Permission != bind {
			// The namespace is named once, below.
			p := r.Permission
			p.Namespace = ""
			missing = append(missing, p.String())
		}
	}
	if granted := allowed[everything] || (allowed[escalate] && allowed[bind]); !granted {
		missing = append(missing, fmt.Sprintf("grant every permission (%s, or %s and %s)", everything, escalate, bind))
	}
	if len(missing) > 0 {
		return exitcode.Errorf(exitcode.Forbidden, "%s may not %s, which a run inside the cluster needs (in namespace %s and cluster-wide; its ServiceAccount gets every permission, as a cluster admin has); nothing was changed",
			user, strings.Join(missing, ", "), n.namespace)
	}
	return nil
}
