// Package probes runs the probes of the claims files a run was given
// (--kubeproof.claims-file): each probe is one spec, labelled spec:<id>
// and claim:<id> for every claim of its file that names it, so that a run
// selects it as it selects a built-in spec. A probe (the language of
// claims/probe) runs inside its spec like a built-in one, in its
// Framework's namespace, with its timeouts and cleanup: its steps are
// taken on the cluster while its observers record typed evidence.
package probes

import (
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
)

// The container body runs when Ginkgo builds the tree, after the flags are
// parsed: only then are the claims files known.
var _ = ginkgo.Describe("probes of claims files", func() {
	if len(framework.TestContext.ClaimsFiles) == 0 {
		return
	}
	cat := &claims.Catalog{}
	for _, file := range framework.TestContext.ClaimsFiles {
		if err := cat.AddFile(file); err != nil {
			// The run lints the file before any spec process starts: a
			// file that fails here changed meanwhile, or is a harness bug.
			ginkgo.It("loads "+file, func() { framework.ExpectNoError(err, "load claims file %s", file) })
			return
		}
	}
	f := framework.New("probe")
	for _, p := range cat.Probes {
		labels := ginkgo.Labels{speclink.SpecLabelPrefix + p.ID}
		for _, id := range cat.ClaimsOf(p.ID) {
			labels = append(labels, speclink.ClaimLabelPrefix+id)
		}
		args := []any{labels}
		if p.RunsAlone() {
			// A stopped or restarted component, or a change of the whole
			// cluster, disturbs every other spec.
			args = append(args, ginkgo.Serial)
		}
		if p.PodSecurity != "" {
			args = append(args, framework.NeedsPodSecurity(p.PodSecurity))
		}
		ginkgo.It(p.Description, append(args, func(ctx ginkgo.SpecContext) {
			if usesOurImages(p) {
				f.Needs(framework.Images)
			}
			runProbe(ctx, f, p)
		})...)
	}
})

// usesOurImages reports whether a manifest of the probe runs one of
// kubeproof's images: the probe then needs the canary to have seen them
// run (a cluster whose nodes cannot get them makes its claims not
// checkable, naming that, rather than failing a step). A manifest that
// cannot be read counts: the step that applies it says why.
func usesOurImages(p probe.LoadedProbe) bool {
	for _, s := range p.Steps {
		if s.Apply == nil {
			continue
		}
		data, err := p.Manifest(*s.Apply)
		if err != nil || strings.Contains(string(data), images.LoadedRegistry+"/") {
			return true
		}
	}
	return false
}
