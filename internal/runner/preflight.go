package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/identity"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// preflight asks the API server what the kubeconfig's user may do, before
// any spec runs: without a permission every run needs (access.Essential)
// nothing can run, and the one-line error names each one missing; without
// another permission the specs that need it will be not checkable, which
// it says now. The permissions needed inside the run's namespaces are
// asked again by the canary, in one of them.
func preflight(ctx context.Context, info *cluster.Info, pr *progress.Printer) error {
	cfg, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	if err != nil {
		return err
	}
	return checkPermissions(ctx, client, UserOf(ctx, cfg), pr)
}

// UserOf names the kubeconfig's user for messages, with its name when the
// API server says it (SelfSubjectReview).
func UserOf(ctx context.Context, cfg *rest.Config) string {
	if who, err := identity.WhoAmI(ctx, cfg); err == nil && who.Username != "" {
		return fmt.Sprintf("the kubeconfig's user (%s)", who.Username)
	}
	return "the kubeconfig's user"
}

// checkPermissions is preflight's question and its answer.
func checkPermissions(ctx context.Context, client kubernetes.Interface, user string, pr *progress.Printer) error {
	perms := slices.Clone(access.Essential)
	for _, p := range access.All {
		if !slices.Contains(perms, p) {
			perms = append(perms, p)
		}
	}
	results, err := access.Check(ctx, client, "", perms)
	if err != nil {
		pr.Infof("could not check what %s may do (%v): the specs will find out", user, err)
		return nil
	}
	var missing []string
	for _, r := range results {
		if !r.Allowed && slices.Contains(access.Essential, r.Permission) {
			missing = append(missing, r.Permission.String()+reasonOf(r))
		}
	}
	if len(missing) > 0 {
		return exitcode.Errorf(exitcode.Forbidden, "%s may not %s, which every run needs (each spec runs in a namespace of its own, removed after it); nothing was changed",
			user, strings.Join(missing, ", "))
	}
	for _, r := range results {
		if !r.Allowed {
			pr.Infof("%s may not %s%s: %s will be not checkable", user, r.Permission, reasonOf(r), r.Permission.For)
		}
	}
	return nil
}

func reasonOf(r access.Result) string {
	if r.Reason == "" {
		return ""
	}
	return " (" + r.Reason + ")"
}

// podSecurityPreflight says, before any spec runs, which of the selected
// specs (nil: all) need a Pod Security level the cluster's admission refuses: it asks
// the cluster (a namespace with the level's label, a dry-run Pod of the
// level in it) once per level, restricted included, since every spec's
// Pods need at least that. Each spec that will be not checkable gets one
// line; the specs find out again themselves, from the same answers.
func podSecurityPreflight(ctx context.Context, info *cluster.Info, specs []SelectedSpec, pr *progress.Printer) error {
	_, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	if err != nil {
		return err
	}
	bySpec := map[podsecurity.Level][]framework.PodSecurityNeed{}
	for _, n := range framework.PodSecurityNeeds() {
		if specs == nil || slices.ContainsFunc(specs, func(s SelectedSpec) bool { return s.ID == n.Spec.ID }) {
			bySpec[n.Level] = append(bySpec[n.Level], n)
		}
	}
	if len(bySpec) == 0 {
		return nil
	}
	var admitted []string
	for _, level := range podsecurity.Levels {
		if level != podsecurity.LevelRestricted && len(bySpec[level]) == 0 {
			continue
		}
		v := framework.ObservePodSecurity(ctx, client, level, "preflight")
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case v.Unknown != "":
			pr.Infof("PodSecurity: could not tell whether the cluster admits Pods of level %s (%s): the specs will find out", level, v.Unknown)
		case v.Refused != "" && level == podsecurity.LevelRestricted:
			pr.Infof("%s: every spec that runs a Pod will stop on it (kubeproof's Pods pass restricted: is a stricter policy in place?)", v.Refused)
		case v.Refused != "":
			for _, n := range bySpec[level] {
				pr.Infof("spec %s needs Pod Security level %s, which this cluster refuses; its claims %s will be not checkable: %s",
					n.Spec.ID, level, strings.Join(n.Spec.Claims, ", "), v.Refused)
			}
		case level == podsecurity.LevelRestricted:
			admitted = append(admitted, "restricted (every spec)")
		default:
			ids := make([]string, len(bySpec[level]))
			for i, n := range bySpec[level] {
				ids[i] = n.Spec.ID
			}
			admitted = append(admitted, fmt.Sprintf("%s (%s)", level, strings.Join(ids, ", ")))
		}
	}
	if len(admitted) > 0 {
		pr.Infof("PodSecurity: the cluster admits the Pod Security levels the specs need: %s", strings.Join(admitted, "; "))
	}
	return nil
}
