// Package probe is the probe language of a claims file: a spec written in
// YAML, steps to take on the cluster and observers (package observer)
// that record typed evidence while they run; what each step records, the
// checks of a probe's shape, and the evidence it declares. The probes run
// as specs in suites/probes.
package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/observer"
	"github.com/kubeproof/kubeproof/contract/cluster"
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
	path := a.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.Path), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("probe %s: read manifest: %w", p.ID, err)
	}
	return data, nil
}

// Object names one object of the probe: in the probe's namespace unless it
// is cluster-scoped.
type Object = observer.Ref

// Step is one action of a probe: exactly one of its actions is set.
type Step struct {
	// Name names the step in the evidence "steps" (steps.<name>.code) and
	// in messages; without one a step is step<N> (1-based).
	Name string `json:"name,omitempty"`
	// AllowFailure records a failed request (its code, reason, message)
	// and goes on, for a sentence that says a request is refused.
	AllowFailure bool `json:"allowFailure,omitempty"`

	// Apply creates the objects of a manifest (one or more YAML documents)
	// in the probe's namespace, inline or from a file relative to the
	// claims file (the document's own YAML).
	Apply *Apply `json:"apply,omitempty" schema:"oneof"`
	// Patch patches an object.
	Patch *Patch `json:"patch,omitempty" schema:"oneof"`
	// Delete deletes an object.
	Delete *Delete `json:"delete,omitempty" schema:"oneof"`
	// Wait waits until an observer's object meets a condition.
	Wait *Wait `json:"wait,omitempty" schema:"oneof"`
	// Kubectl runs the cluster's kubectl with these arguments in the
	// probe's namespace (-n is added); its exit code is steps.<name>.code.
	Kubectl []string `json:"kubectl,omitempty" schema:"oneof"`
	// As runs a kubectl or exec step as another user: with an x509 client
	// certificate the cluster's CSR API issues for it (needs a signer and
	// the right to approve CSRs), so that the API server authenticates
	// that user, not an impersonation.
	As *Identity `json:"as,omitempty"`
	// Exec runs a command in a container of a Pod of the probe (through
	// the API server, as kubectl exec does).
	Exec *Exec `json:"exec,omitempty" schema:"oneof"`
	// StopComponent stops a component of the cluster (etcd,
	// kube-controller-manager, kube-scheduler) where the provider can; it
	// is started again by a StartComponent step or when the probe ends. A
	// probe that stops one runs alone (Serial); on a provider that cannot,
	// its claims are not checkable, naming that.
	StopComponent string `json:"stopComponent,omitempty" schema:"oneof"`
	// StartComponent starts a component a StopComponent step stopped and
	// waits until it is healthy.
	StartComponent string `json:"startComponent,omitempty" schema:"oneof"`
}

// StopsComponents reports whether the probe stops a component (and must
// run alone).
func (p Probe) StopsComponents() bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.StopComponent != "" })
}

// Identity is a user to act as.
type Identity struct {
	// User is the certificate's common name, the username.
	User string `json:"user"`
	// Groups are its organizations, the user's groups.
	Groups []string `json:"groups,omitempty"`
}

// Apply is a manifest to create.
type Apply struct {
	// Manifest is the YAML, inline.
	Manifest string `json:"manifest,omitempty"`
	// File is a YAML file, relative to the claims file.
	File string `json:"file,omitempty"`
}

// Patch changes an object.
type Patch struct {
	Object `json:",inline"`
	// Type is merge (default), strategic or json.
	Type string `json:"type,omitempty"`
	// Patch is the patch, as YAML or JSON.
	Patch json.RawMessage `json:"patch"`
	// Subresource, if set, is patched instead (status).
	Subresource string `json:"subresource,omitempty"`
}

// Delete removes an object.
type Delete struct {
	Object `json:",inline"`
	// Propagation is Foreground, Background or Orphan (default: the
	// server's for the kind).
	Propagation string `json:"propagation,omitempty"`
	// GracePeriodSeconds overrides the object's grace period.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// Exec is a command run in a container.
type Exec struct {
	// Pod and Container name where to run it (Container: the first).
	Pod       string `json:"pod"`
	Container string `json:"container,omitempty"`
	// Command is the command and its arguments.
	Command []string `json:"command"`
}

// Wait waits on an object observer: until its object's field meets a
// condition, or until it is deleted.
type Wait struct {
	// Observer is the name of an object observer of the probe.
	Observer string `json:"observer"`
	// Field is one of the observer's fields; Condition is held against its
	// latest value (the operators of an expectation, evidence left out).
	Field     string              `json:"field,omitempty"`
	Condition *expect.Expectation `json:"condition,omitempty"`
	// Deleted waits until the object is gone instead.
	Deleted bool `json:"deleted,omitempty"`
	// Timeout bounds the wait (default 60s).
	Timeout string `json:"timeout,omitempty"`
}

// Observer records evidence under Name while the probe runs: its kinds
// are the rows of observer.Kinds.
type Observer = observer.Observer

// Probe evidence types: what each observer records. Times are
// milliseconds after the probe's first step began, so that claims compare
// them with each other and with the document's numbers.

// StepResult is what a step did: steps.<name>.
type StepResult struct {
	// At is when the step began (ms after the first step began).
	At float64 `json:"at"`
	// Took is how long the step took (ms).
	Took float64 `json:"took"`
	// Code is the HTTP status of the step's last request (201 for a
	// create, 422 for an invalid object), or kubectl's/the command's exit
	// code; 0 for a wait.
	Code int `json:"code"`
	// Reason is the API status reason of a failed request (Invalid,
	// Forbidden, AlreadyExists); empty on success.
	Reason string `json:"reason"`
	// Message is the failure's message, or the command's output.
	Message string `json:"message"`
}

var stepNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)

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
	}
	seen := map[string]bool{}
	for i, s := range p.Steps {
		name := p.StepNames()[i]
		if s.Name != "" && !stepNameRE.MatchString(s.Name) {
			bad("step %s: a name is letters, digits and dashes", name)
		}
		if seen[name] {
			bad("step %s: the name is used twice", name)
		}
		seen[name] = true
		n := 0
		for _, set := range []bool{s.Apply != nil, s.Patch != nil, s.Delete != nil, s.Wait != nil, s.Kubectl != nil, s.Exec != nil, s.StopComponent != "", s.StartComponent != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			bad("step %s: give exactly one of apply, patch, delete, wait, kubectl, exec, stopComponent, startComponent", name)
			continue
		}
		for _, c := range []string{s.StopComponent, s.StartComponent} {
			if c != "" && !slices.Contains(StoppableComponents, c) {
				bad("step %s: %q is not a component a provider stops (%s)", name, c, strings.Join(StoppableComponents, ", "))
			}
		}
		if s.StartComponent != "" && !slices.ContainsFunc(p.Steps[:i], func(b Step) bool { return b.StopComponent == s.StartComponent }) {
			bad("step %s: starts %s, which no step before it stops", name, s.StartComponent)
		}
		switch {
		case s.Apply != nil:
			if (s.Apply.Manifest == "") == (s.Apply.File == "") {
				bad("step %s: apply needs a manifest or a file (one)", name)
			}
		case s.Patch != nil:
			if s.Patch.Kind == "" || s.Patch.Name == "" || len(s.Patch.Patch) == 0 {
				bad("step %s: patch needs apiVersion, kind, name and patch", name)
			}
			if !slices.Contains([]string{"", "merge", "strategic", "json"}, s.Patch.Type) {
				bad("step %s: patch type %q is not merge, strategic or json", name, s.Patch.Type)
			}
		case s.Delete != nil:
			if s.Delete.Kind == "" || s.Delete.Name == "" {
				bad("step %s: delete needs apiVersion, kind and name", name)
			}
			if !slices.Contains([]string{"", "Foreground", "Background", "Orphan"}, s.Delete.Propagation) {
				bad("step %s: propagation %q is not Foreground, Background or Orphan", name, s.Delete.Propagation)
			}
		case s.Wait != nil:
			o := observers[s.Wait.Observer]
			var w observer.Waitable
			if o != nil {
				w, _ = o.Spec.(observer.Waitable)
			}
			switch {
			case w == nil:
				bad("step %s: wait names %q, which is not an object observer of the probe", name, s.Wait.Observer)
			case s.Wait.Deleted == (s.Wait.Condition != nil):
				bad("step %s: wait needs a field and condition, or deleted: true (one)", name)
			case s.Wait.Condition != nil:
				if fields := w.FieldNames(); !slices.Contains(fields, s.Wait.Field) {
					bad("step %s: wait: observer %s has no field %q (it has %s)", name, o.Name, s.Wait.Field, strings.Join(fields, ", "))
				}
				c := *s.Wait.Condition
				c.Evidence = s.Wait.Observer + ".last." + s.Wait.Field
				if err := c.Validate(); err != nil {
					bad("step %s: wait: %v", name, err)
				}
			}
			if _, err := ParseTimeout(s.Wait.Timeout, time.Minute); err != nil {
				bad("step %s: wait: %v", name, err)
			}
		case s.Exec != nil:
			if s.Exec.Pod == "" || len(s.Exec.Command) == 0 {
				bad("step %s: exec needs a pod and a command", name)
			}
		}
		if s.As != nil && (s.As.User == "" || (s.Kubectl == nil && s.Exec == nil)) {
			bad("step %s: as names a user, for a kubectl or exec step", name)
		}
	}
	return errs
}

// StoppableComponents are the components a probe's steps can stop and
// start (where the provider can: cluster.ComponentStopper).
var StoppableComponents = []string{"etcd", "kube-controller-manager", "kube-scheduler"}
