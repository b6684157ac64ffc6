// Package probe is the probe language of a claims file: a spec written in
// YAML, steps to take on the cluster and observers (package observer)
// that record typed evidence while they run; what each step records, the
// checks of a probe's shape, and the evidence it declares. The probes run
// as specs in suites/probes.
package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/observer"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// Probe is a spec written in a claims file instead of Go: steps to take on
// the cluster, and observers that record evidence while they run. A claim
// names a probe in its specs: as it names a built-in spec; the probe runs
// like one (its own namespace, the framework's timeouts and cleanup, "not
// checkable" when the cluster lacks what it requires) and its evidence is
// typed by its observers, so that lint checks a claim's paths before any
// cluster exists.
type Probe struct {
	// ID is the probe's spec ID (lower-case letters, digits, dashes): claims
	// name it in specs:, and it must not be a built-in spec's.
	ID string `json:"id"`
	// Description says what the probe does, as the reports name it.
	Description string `json:"description"`
	// Requires are capabilities the probe needs; without one, every claim
	// it checks is not checkable, naming it.
	Requires []cluster.Capability `json:"requires,omitempty"`
	// Timeout bounds the whole probe (default 3m).
	Timeout string `json:"timeout,omitempty"`
	// Scope is namespace (default) or cluster: a probe that makes
	// cluster-scoped objects, or stops, restarts or adds components, says
	// cluster; it then runs alone, its cleanup removes what it made, and it
	// runs only on a cluster nobody else uses (Disposable).
	Scope Scope `json:"scope,omitempty"`
	// PodSecurity is the Pod Security level its Pods need, when more than
	// restricted (the level every spec's Pods pass unless they say so):
	// baseline, or privileged (a Pod with hostNetwork). Its namespace is
	// labelled with it; on a cluster that refuses the level its claims are
	// not checkable, naming PodSecurity.
	PodSecurity podsecurity.Level `json:"podSecurity,omitempty"`
	// Observe are the observers, started before the first step in the
	// order given and stopped after the last.
	Observe []Observer `json:"observe,omitempty"`
	// Steps are taken in order; a step that fails stops the probe, and its
	// claims are not checkable, naming the step, unless it allows failure.
	Steps []Step `json:"steps"`
}

// LoadedProbe is a probe as the catalog holds it: with the document and
// the claims file it is written in (its apply files are relative to it).
type LoadedProbe struct {
	Probe
	Document string
	// File is the claims file's path as given; Path its absolute path, which
	// the spec processes load it from and its apply files are relative to.
	File string
	Path string
}

// Manifest is the YAML an apply step creates: inline, or read from its
// file, relative to the claims file.
func (p LoadedProbe) Manifest(a Apply) ([]byte, error) {
	if a.File == "" {
		return []byte(a.Manifest), nil
	}
	data, err := os.ReadFile(p.Relative(a.File))
	if err != nil {
		return nil, fmt.Errorf("probe %s: read manifest: %w", p.ID, err)
	}
	return data, nil
}

// Relative is path as the probe's files name it: relative to the claims
// file, unless absolute.
func (p LoadedProbe) Relative(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(p.Path), path)
}

// Object names one object of the probe: in the probe's namespace unless it
// is cluster-scoped.
type Object = observer.Ref

// Observer records evidence under Name while the probe runs: its kinds
// are the rows of observer.Kinds.
type Observer = observer.Observer

// Probe evidence types: what each observer records. Times are
// milliseconds after the probe's first step began, so that claims compare
// them with each other and with the document's numbers.

// StepsEvidence is the evidence name under which a probe records its steps.
const StepsEvidence = "steps"

// StepNames are the names of the probe's steps as its evidence has them.
func (p Probe) StepNames() []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Name
		if out[i] == "" {
			out[i] = fmt.Sprintf("step%d", i+1)
		}
	}
	return out
}

// Evidence declares what the probe records, for lint and the evidence
// catalog: its steps and each observer's evidence.
func (p Probe) Evidence(source evidence.Source) []evidence.EvidenceDecl {
	var steps []reflect.StructField
	for _, n := range p.StepNames() {
		steps = append(steps, reflect.StructField{Name: "S_" + strings.ReplaceAll(n, "-", "_"), Type: reflect.TypeFor[StepResult](), Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, n))})
	}
	decls := []evidence.EvidenceDecl{{Spec: p.ID, Name: StepsEvidence, Type: reflect.StructOf(steps), Source: source}}
	for _, o := range p.Observe {
		if o.Spec != nil {
			decls = append(decls, evidence.EvidenceDecl{Spec: p.ID, Name: o.Name, Type: o.Spec.Evidence(), Source: source})
		}
	}
	return decls
}

// ParseTimeout reads a probe's or a wait's timeout, def when empty.
func ParseTimeout(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q is not a positive duration (30s, 2m)", s)
	}
	return d, nil
}

// Validate checks a probe's shape (its ID's form is the catalog's to
// check, as a spec ID); errors name the probe and the step or observer.
func (p Probe) Validate() []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("probe %s: %s", p.ID, fmt.Sprintf(format, args...)))
	}
	if p.Description == "" {
		bad("description is required")
	}
	if len(p.Steps) == 0 {
		bad("has no steps")
	}
	if _, err := ParseTimeout(p.Timeout, time.Minute); err != nil {
		bad("%v", err)
	}
	if p.PodSecurity != "" && p.PodSecurity != podsecurity.LevelBaseline && p.PodSecurity != podsecurity.LevelPrivileged {
		bad("podSecurity %q is not baseline or privileged (restricted needs no word)", p.PodSecurity)
	}
	for _, c := range p.Requires {
		if !slices.Contains(cluster.Capabilities, c) {
			bad("requires %q, which is not a capability (%v)", c, cluster.Capabilities)
		}
	}
	observers := map[string]*Observer{}
	for i := range p.Observe {
		o := &p.Observe[i]
		if o.Name == "" || o.Name == StepsEvidence || strings.Contains(o.Name, ".") {
			bad("observer %d: a name (not %q, no dots) is required", i+1, StepsEvidence)
		}
		if observers[o.Name] != nil {
			bad("observer %s: the name is used twice", o.Name)
		}
		observers[o.Name] = o
		for _, e := range o.Validate() {
			bad("%s", e)
		}
		if sn, ok := o.Spec.(observer.StepsNamed); ok {
			for _, step := range sn.StepsNamed() {
				if !slices.Contains(p.StepNames(), step) {
					bad("observer %s: %q names no step of the probe (%s)", o.Name, step, strings.Join(p.StepNames(), ", "))
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, s := range p.Steps {
		name := p.StepNames()[i]
		if seen[name] {
			bad("step %s: the name is used twice", name)
		}
		seen[name] = true
		for _, e := range p.validateStep(i, s, observers) {
			bad("step %s: %s", name, e)
		}
	}
	return errs
}

// StoppableComponents are the components a probe's steps can stop and
// start (where the provider can: cluster.ComponentStopper).
var StoppableComponents = []string{"etcd", "kube-controller-manager", "kube-scheduler"}
