package framework

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Need is what a spec needs of the cluster beyond its API: a capability it
// cannot do without (Requires), one it records less without (Uses), or a
// change other users of the cluster would notice (Disturbs). Specs declare
// their needs in Checks, beside their ID; the Framework skips a spec whose
// cluster lacks what it requires before the spec begins, and fails one that
// asks for a capability it did not declare (Has, Require, AuditLog, Etcd).
type Need struct {
	label string
	// disturbs says what the spec does that others would notice.
	disturbs string
}

// Requires declares that the spec cannot do without capability c: on a
// cluster without it, the spec is skipped (its claims not checkable,
// with the cluster's reason).
func Requires(c cluster.Capability) Need {
	return Need{label: speclink.RequiresLabelPrefix + string(c)}
}

// Uses declares that the spec asks whether the cluster has capability c
// (Has, AuditLog, Etcd) and records less without it: evidence marked
// unobservable, with the cluster's reason.
func Uses(c cluster.Capability) Need { return Need{label: speclink.UsesLabelPrefix + string(c)} }

// Disturbs declares that the spec does what other users of the cluster
// would notice (what: "adds simulated Nodes"): it requires Disposable, and
// on a cluster that is not, it is skipped, saying what it would have done.
func Disturbs(what string) Need {
	return Need{label: speclink.RequiresLabelPrefix + string(cluster.Disposable), disturbs: what}
}

// disturbing is what each spec that Disturbs does, by spec ID.
var disturbing sync.Map

// skipUnmetNeeds skips the running spec when the cluster lacks a
// capability it requires.
func (f *Framework) skipUnmetNeeds() {
	report := ginkgo.CurrentSpecReport()
	for _, c := range declared(report.Labels(), speclink.RequiresLabelPrefix) {
		if f.Cluster.Has(c) {
			continue
		}
		if what, ok := disturbing.Load(speclink.SpecsFromLabels("", report.Labels()).ID); ok && c == cluster.Disposable {
			ginkgo.Skip(fmt.Sprintf("the spec %s, which would disturb other users of the cluster: %s", what, f.Cluster.Missing(c)))
		}
		ginkgo.Skip(f.Cluster.Missing(c))
	}
}

// declared are the capabilities a spec's labels declare under prefix.
func declared(labels []string, prefix string) []cluster.Capability {
	var out []cluster.Capability
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, cluster.Capability(v))
		}
	}
	return out
}

// mustHaveDeclared fails the running spec, as a harness bug, when it asks
// for capability c without declaring it (in prefixes: required, or
// required or used): the evidence catalog would not say that its evidence
// depends on c.
func mustHaveDeclared(c cluster.Capability, prefixes ...string) {
	ginkgo.GinkgoHelper()
	labels := ginkgo.CurrentSpecReport().Labels()
	for _, p := range prefixes {
		if slices.Contains(declared(labels, p), c) {
			return
		}
	}
	how := "framework.Uses(cluster." + string(c) + ") or framework.Requires"
	if len(prefixes) == 1 {
		how = "framework.Requires(cluster." + string(c) + ")"
	}
	ginkgo.Fail(fmt.Sprintf("harness bug: the spec asks for capability %s without declaring it: add %s beside its ID in framework.Checks", c, how))
}

// Has reports whether the cluster has capability c, which the spec
// declares that it uses or requires (Checks).
func (f *Framework) Has(c cluster.Capability) bool {
	ginkgo.GinkgoHelper()
	mustHaveDeclared(c, speclink.UsesLabelPrefix, speclink.RequiresLabelPrefix)
	return f.Cluster.Has(c)
}

// Missing says why the cluster lacks capability c.
func (f *Framework) Missing(c cluster.Capability) string { return f.Cluster.Missing(c) }

// Require skips the spec when the cluster lacks capability c, saying why;
// the spec declares it (Requires beside its ID), so that it is skipped
// before it begins and the evidence catalog knows.
func (f *Framework) Require(c cluster.Capability) {
	ginkgo.GinkgoHelper()
	mustHaveDeclared(c, speclink.RequiresLabelPrefix)
	if !f.Cluster.Has(c) {
		ginkgo.Skip(f.Cluster.Missing(c))
	}
}
