package framework

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/kube/namespace"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// PodSecurityLabelPrefix starts the Ginkgo label that says which Pod
// Security level a spec's Pods need (NeedsPodSecurity).
const PodSecurityLabelPrefix = "podsecurity:"

// NeedsPodSecurity declares that the spec's Pods need more than the
// restricted Pod Security Standard (level baseline or privileged): it looks
// at privilege itself (a container without a seccomp profile, say). Its
// namespace then gets the label pod-security.kubernetes.io/enforce=level,
// and only its namespace; every other spec's Pods pass restricted
// (podsecurity.Restrict) and its namespace carries no such label. On a
// cluster whose admission refuses the level (the label is refused or not
// kept, or a Pod of the level is refused), the spec stops before it runs,
// its claims not checkable, naming PodSecurity; `kubeproof run` says so
// before any spec runs.
//
// It is a Ginkgo decorator, next to Checks:
//
//	ginkgo.It("...", framework.Checks(...), framework.NeedsPodSecurity(podsecurity.LevelBaseline), func(ctx ginkgo.SpecContext) {...})
func NeedsPodSecurity(level podsecurity.Level) ginkgo.Labels {
	if level == podsecurity.LevelRestricted {
		panic("NeedsPodSecurity(restricted): every spec's Pods pass restricted; declare only a need for more")
	}
	if _, err := podsecurity.ParseLevel(string(level)); err != nil {
		panic(err)
	}
	return ginkgo.Labels{PodSecurityLabelPrefix + string(level)}
}

// PodSecurityOf is the level a spec with these Ginkgo labels needs:
// restricted unless it declares more.
func PodSecurityOf(labels []string) podsecurity.Level {
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, PodSecurityLabelPrefix); ok {
			if level, err := podsecurity.ParseLevel(v); err == nil {
				return level
			}
		}
	}
	return podsecurity.LevelRestricted
}

// currentPodSecurity is the level the running spec needs.
func currentPodSecurity() podsecurity.Level {
	return PodSecurityOf(ginkgo.CurrentSpecReport().Labels())
}

// PodSecurityNeed is a spec that needs more than restricted.
type PodSecurityNeed struct {
	Spec   speclink.SpecInfo
	Level  podsecurity.Level
	Labels []string
}

// PodSecurityNeeds lists every spec of this binary with the level its Pods
// need (restricted for most), without running any, with its labels and
// text so that a caller can apply a run's filters.
func PodSecurityNeeds() []PodSecurityNeed {
	report := ginkgo.PreviewSpecs("kubeproof")
	var out []PodSecurityNeed
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		labels := sr.Labels()
		out = append(out, PodSecurityNeed{Spec: specInfo(sr.FullText(), labels), Level: PodSecurityOf(labels), Labels: labels})
	}
	return out
}

// podSecurityRefused is the start of the reason a spec stops with when the
// cluster refuses the Pod Security level it needs: its claims are then not
// checkable, and the reason names PodSecurity.
func podSecurityRefused(level podsecurity.Level, what string) string {
	return fmt.Sprintf("PodSecurity: this cluster refuses the Pod Security level %s that the spec's Pods need (%s)", level, what)
}

// holdPodSecurity checks, right after the spec's namespace ns was created
// with the label for the level the spec needs, that the cluster keeps to
// it: the namespace was stored with the label, and a dry-run Pod of that
// level is admitted there. When not, the spec is skipped: the cluster was
// hardened so, which is not a fault, and its claims are not checkable.
func (f *Framework) holdPodSecurity(ctx context.Context, ns *corev1.Namespace, level podsecurity.Level) {
	ginkgo.GinkgoHelper()
	if level == podsecurity.LevelRestricted {
		return
	}
	if changed := podsecurity.Honoured(ns, level); changed != "" {
		ginkgo.Skip(podSecurityRefused(level, fmt.Sprintf("namespace %s was created with %s=%s, but %s", ns.Name, podsecurity.EnforceLabel, level, changed)))
	}
	a := AskPodSecurity(ctx, f.Client, ns.Name, level)
	switch {
	case a.Refused != nil:
		ginkgo.Skip(podSecurityRefused(level, fmt.Sprintf("a dry-run Pod of level %s in namespace %s, labelled %s=%s, was refused: %s",
			level, ns.Name, podsecurity.EnforceLabel, level, a.Refused.Message)))
	case a.Other != nil:
		// Not PodSecurity's answer: the spec's own Pods will show what
		// the cluster does with them.
		ginkgo.GinkgoWriter.Printf("a dry-run Pod of Pod Security level %s in namespace %s: %v\n", level, ns.Name, a.Other)
	}
}

// onPodSecurityRefusal handles a request of the spec that PodSecurity
// admission refused. A Pod the spec needs at a level its namespace was
// meant to allow (the cluster enforced a stricter one) is the cluster's
// hardening: the spec is skipped, its claims not checkable, naming
// PodSecurity. A Pod that breaks the very level the spec declared is
// kubeproof's own mistake: the spec fails, saying so.
func onPodSecurityRefusal(err error, what string) {
	ginkgo.GinkgoHelper()
	r, ok := podsecurity.RefusalOf(err)
	if !ok {
		return
	}
	need := currentPodSecurity()
	if stricterThanNeeded(need, r.Level) {
		ginkgo.Skip(podSecurityRefused(need, fmt.Sprintf("it enforced %s:%s when the spec tried to %s: %s", r.Level, r.Version, what, r.Message)))
	}
	ginkgo.Fail(fmt.Sprintf("harness bug: kubeproof's own request (%s) breaks the Pod Security level %s, which the spec declares its Pods need (add podsecurity.Restrict, or declare the level with NeedsPodSecurity): %s",
		what, need, r.Message))
}

// stricterThanNeeded says whether a refusal under the enforced level is
// the cluster's doing (it enforced a level stricter than the spec needs
// and declared), rather than kubeproof's (its Pod breaks the level it
// declared).
func stricterThanNeeded(need, enforced podsecurity.Level) bool {
	return need != enforced && need.Allows(enforced)
}

// PodSecurityAnswer is what the API server made of a Pod of some level in
// a namespace: admitted (both nil), refused by PodSecurity (Refused), or
// refused for another reason (Other).
type PodSecurityAnswer struct {
	Refused *podsecurity.Refusal
	Other   error
}

// AskPodSecurity asks the API server, with a dry-run Pod that needs level
// (podsecurity.Probe), whether namespace ns admits Pods of that level.
// Nothing is stored. The namespace's default ServiceAccount must exist
// (the ServiceAccount admission plugin refuses Pods before PodSecurity
// looks at them).
func AskPodSecurity(ctx context.Context, client kubernetes.Interface, ns string, level podsecurity.Level) PodSecurityAnswer {
	p := podsecurity.Probe("kubeproof-podsecurity-"+string(level), images.TestApp.PodRef(), level)
	_, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		return PodSecurityAnswer{}
	}
	if r, ok := podsecurity.RefusalOf(err); ok {
		return PodSecurityAnswer{Refused: &r}
	}
	return PodSecurityAnswer{Other: err}
}

// PodSecurityLabelRefused tells, after the API server refused (err) to
// create namespace ns with a Pod Security label, whether the label is what
// it refused: the same namespace without it, as a dry run, is accepted. It
// returns the refusal's message, or "" when the label is not the reason.
func PodSecurityLabelRefused(ctx context.Context, client kubernetes.Interface, ns *corev1.Namespace, err error) string {
	if err == nil || ns.Labels[podsecurity.EnforceLabel] == "" {
		return ""
	}
	without := ns.DeepCopy()
	delete(without.Labels, podsecurity.EnforceLabel)
	if _, derr := client.CoreV1().Namespaces().Create(ctx, without, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); derr != nil {
		return ""
	}
	return err.Error()
}

// PodSecurityVerdict is what a cluster's admission made of one level: a
// namespace made for its Pods, and a dry-run Pod of the level there.
type PodSecurityVerdict struct {
	Level podsecurity.Level
	// Refused says what was refused, naming PodSecurity; empty when the
	// level is admitted.
	Refused string
	// Unknown says why the question got no answer (the namespace could
	// not be made, its ServiceAccount never came, another refusal).
	Unknown string
}

// ObservePodSecurity asks the cluster whether it admits Pods of level, as
// a spec that needs the level would meet it: a namespace with the label
// for the level (none for restricted), kept as asked, and a dry-run Pod of
// the level admitted there. The namespace (labelled with ownership's
// labels for owner) is deleted again; nothing else is stored.
func ObservePodSecurity(ctx context.Context, client kubernetes.Interface, level podsecurity.Level, owner string) PodSecurityVerdict {
	v := PodSecurityVerdict{Level: level}
	want := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kp-podsecurity-",
		Labels: map[string]string{"kubeproof.io/spec": "podsecurity-preflight"}}}
	maps.Copy(want.Labels, ownership.Labels(owner))
	maps.Copy(want.Labels, podsecurity.NamespaceLabels(level))
	ns, err := client.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
	if refused := PodSecurityLabelRefused(ctx, client, want, err); refused != "" {
		v.Refused = fmt.Sprintf("PodSecurity: the API server refuses a namespace labelled %s=%s: %s", podsecurity.EnforceLabel, level, refused)
		return v
	}
	if err != nil {
		v.Unknown = "could not create a namespace to ask in: " + err.Error()
		return v
	}
	defer func() { _ = namespace.StartDelete(context.WithoutCancel(ctx), client, ns.Name) }()
	if changed := podsecurity.Honoured(ns, level); changed != "" {
		v.Refused = fmt.Sprintf("PodSecurity: a namespace created with %s=%s does not keep it: %s", podsecurity.EnforceLabel, level, changed)
		return v
	}
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "serviceaccounts", ns.Name, func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector("default")
	})
	if _, err := observe.Until(ctx, DefaultTimeouts().Controller, "the default ServiceAccount of namespace "+ns.Name, lw,
		func(*corev1.ServiceAccount) (bool, error) { return true, nil }, nil); err != nil {
		v.Unknown = err.Error()
		return v
	}
	a := AskPodSecurity(ctx, client, ns.Name, level)
	switch {
	case a.Refused != nil:
		where := "an unlabelled namespace"
		if level != podsecurity.LevelRestricted {
			where = fmt.Sprintf("a namespace labelled %s=%s", podsecurity.EnforceLabel, level)
		}
		v.Refused = fmt.Sprintf("PodSecurity refuses a dry-run Pod of level %s in %s: %s", level, where, a.Refused.Message)
	case a.Other != nil:
		v.Unknown = "a dry-run Pod of level " + string(level) + ": " + a.Other.Error()
	}
	return v
}
