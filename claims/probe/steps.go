package probe

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/observer"
)

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
	// probe's namespace (-n is added), in the claims file's directory (a
	// file it names is relative to the claims file); its exit code is
	// steps.<name>.code.
	Kubectl []string `json:"kubectl,omitempty" schema:"oneof"`
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
	// RestartComponent restarts a component with other flags, feature
	// gates or configuration (scope: cluster); it is put back when the
	// probe ends, or by a RestoreComponent step.
	RestartComponent *ComponentRestart `json:"restartComponent,omitempty" schema:"oneof"`
	// RestoreComponent restarts a component a RestartComponent step
	// changed as it was, and waits until it is healthy.
	RestoreComponent string `json:"restoreComponent,omitempty" schema:"oneof"`
	// AddComponent runs a second instance of a component (a scheduler of
	// another name) until the probe ends (scope: cluster).
	AddComponent *ExtraComponent `json:"addComponent,omitempty" schema:"oneof"`
	// Signal sends a signal to a container or a Pod's sandbox through the
	// node's container runtime (needs NodeExec).
	Signal *Signal `json:"signal,omitempty" schema:"oneof"`

	// As runs a kubectl or exec step as another identity: a user with a
	// client certificate the cluster's CSR API issues (or one from a CA
	// the cluster does not trust), a ServiceAccount's token, or no
	// credentials at all.
	As *Identity `json:"as,omitempty"`
	// Stdin is given to a kubectl or exec step's standard input (kubectl
	// apply -f -; exec -i is added).
	Stdin string `json:"stdin,omitempty"`
	// StdinFile is a file, relative to the claims file, given to its
	// standard input instead.
	StdinFile string `json:"stdinFile,omitempty"`
	// Env sets (a value) or unsets (null) variables of a kubectl step's
	// environment: kubectl's own, not a container's (a container's
	// environment is in its manifest).
	Env map[string]*string `json:"env,omitempty"`
}

// StopsComponents reports whether the probe stops a component (and must
// run alone).
func (p Probe) StopsComponents() bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.StopComponent != "" })
}

// Identity is who a kubectl or exec step acts as: exactly one of a user
// (with its groups, and the CA of its certificate), a ServiceAccount, or
// no one.
type Identity struct {
	// User is the certificate's common name, the username.
	User string `json:"user,omitempty"`
	// Groups are its organizations, the user's groups.
	Groups []string `json:"groups,omitempty"`
	// CA is who signs the user's certificate: cluster (the default: the
	// cluster's CSR API, whose signer the API server trusts) or untrusted
	// (a CA the probe makes, which no cluster trusts: the API server does
	// not authenticate the certificate).
	CA string `json:"ca,omitempty"`
	// ServiceAccount names a ServiceAccount of the probe's namespace: the
	// step uses a token the TokenRequest API issues for it.
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Anonymous, true, gives kubectl no credentials at all.
	Anonymous bool `json:"anonymous,omitempty"`
}

// String names the identity as a report does.
func (id Identity) String() string {
	switch {
	case id.Anonymous:
		return "no credentials"
	case id.ServiceAccount != "":
		return "ServiceAccount " + id.ServiceAccount
	case id.CA == CAUntrusted:
		return "user " + id.User + " (a certificate from a CA the cluster does not trust)"
	}
	return "user " + id.User
}

// CAUntrusted is an identity's CA that no cluster trusts.
const CAUntrusted = "untrusted"

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
	// Since names an earlier step: the wait's took is then counted from
	// that step's start (the time from a delete to the Pod's end), not
	// from the wait's own, which begins only when the step before it ends.
	// The wait's own name says that its own start is meant (a time in which
	// nothing is to happen), which claims lint then takes as written.
	Since string `json:"since,omitempty"`
}

// StepResult is what a step did: steps.<name>.
type StepResult struct {
	// At is when the step began (ms after the first step began).
	At float64 `json:"at"`
	// Took is how long the step took (ms); for a wait with since, the time
	// from that step's start to the wait's end.
	Took float64 `json:"took"`
	// Code is, for apply, patch and delete, the HTTP status of the step's
	// last request (201 for a create, 422 for an invalid object, 403 for a
	// refusal); for kubectl and exec, the exit code of kubectl (of the
	// command, for exec: kubectl exec exits with it); 0 for a wait.
	Code int `json:"code"`
	// Reason is the API status reason of a failed request (Invalid,
	// Forbidden, AlreadyExists); empty on success.
	Reason string `json:"reason"`
	// Message is a failed request's message; for kubectl and exec, what
	// the command wrote, standard output then standard error.
	Message string `json:"message"`
	// Stdout and Stderr are a kubectl or exec step's output, apart.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Dropped are the fields of an apply step's manifest that the object
	// the API server created does not have (spec.containers.0.lifecycle.
	// stopSignal): dropped, not refused, as the API server drops a field
	// behind a disabled feature gate.
	Dropped []string `json:"dropped"`
}

var stepNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)

// validateStep checks step i of the probe; each problem is a phrase the
// caller prefixes with the step's name.
func (p Probe) validateStep(i int, s Step, observers map[string]*Observer) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if s.Name != "" && !stepNameRE.MatchString(s.Name) {
		bad("a name is letters, digits and dashes")
	}
	n := 0
	for _, set := range []bool{s.Apply != nil, s.Patch != nil, s.Delete != nil, s.Wait != nil, s.Kubectl != nil, s.Exec != nil, s.StopComponent != "", s.StartComponent != "",
		s.RestartComponent != nil, s.RestoreComponent != "", s.AddComponent != nil, s.Signal != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		bad("give exactly one of apply, patch, delete, wait, kubectl, exec, stopComponent, startComponent, restartComponent, restoreComponent, addComponent, signal")
		return errs
	}
	for _, c := range []string{s.StopComponent, s.StartComponent} {
		if c != "" && !slices.Contains(StoppableComponents, c) {
			bad("%q is not a component a provider stops (%s)", c, strings.Join(StoppableComponents, ", "))
		}
	}
	if s.StartComponent != "" && !slices.ContainsFunc(p.Steps[:i], func(b Step) bool { return b.StopComponent == s.StartComponent }) {
		bad("starts %s, which no step before it stops", s.StartComponent)
	}
	switch {
	case s.Apply != nil:
		if (s.Apply.Manifest == "") == (s.Apply.File == "") {
			bad("apply needs a manifest or a file (one)")
		}
	case s.Patch != nil:
		if s.Patch.Kind == "" || s.Patch.Name == "" || len(s.Patch.Patch) == 0 {
			bad("patch needs apiVersion, kind, name and patch")
		}
		if !slices.Contains([]string{"", "merge", "strategic", "json"}, s.Patch.Type) {
			bad("patch type %q is not merge, strategic or json", s.Patch.Type)
		}
	case s.Delete != nil:
		if s.Delete.Kind == "" || s.Delete.Name == "" {
			bad("delete needs apiVersion, kind and name")
		}
		if !slices.Contains([]string{"", "Foreground", "Background", "Orphan"}, s.Delete.Propagation) {
			bad("propagation %q is not Foreground, Background or Orphan", s.Delete.Propagation)
		}
	case s.Wait != nil:
		errs = append(errs, p.validateWait(i, *s.Wait, observers)...)
	case s.Exec != nil:
		if s.Exec.Pod == "" || len(s.Exec.Command) == 0 {
			bad("exec needs a pod and a command")
		}
	}
	command := s.Kubectl != nil || s.Exec != nil
	if s.As != nil {
		if !command {
			bad("as is for a kubectl or exec step")
		}
		errs = append(errs, s.As.validate()...)
	}
	if (s.Stdin != "" || s.StdinFile != "") && !command {
		bad("stdin is for a kubectl or exec step")
	}
	if s.Stdin != "" && s.StdinFile != "" {
		bad("give stdin or stdinFile, not both")
	}
	if len(s.Env) > 0 && s.Kubectl == nil {
		bad("env sets kubectl's environment, for a kubectl step: a container's is set in its manifest")
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "= ") {
			bad("env: %q is not a variable's name", k)
		}
	}
	return errs
}

func (id Identity) validate() []string {
	n := 0
	for _, set := range []bool{id.User != "", id.ServiceAccount != "", id.Anonymous} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return []string{"as: give exactly one of user, serviceAccount, anonymous"}
	case id.User == "" && (len(id.Groups) > 0 || id.CA != ""):
		return []string{"as: groups and ca go with a user"}
	case !slices.Contains([]string{"", "cluster", CAUntrusted}, id.CA):
		return []string{fmt.Sprintf("as: ca %q is not cluster or %s", id.CA, CAUntrusted)}
	}
	return nil
}

// validateWait checks the wait of step i.
func (p Probe) validateWait(i int, w Wait, observers map[string]*Observer) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	o := observers[w.Observer]
	var wt observer.Waitable
	if o != nil {
		wt, _ = o.Spec.(observer.Waitable)
	}
	switch {
	case wt == nil:
		bad("wait names %q, which is not an object observer of the probe", w.Observer)
	case w.Deleted == (w.Condition != nil):
		bad("wait needs a field and condition, or deleted: true (one)")
	case w.Condition != nil:
		if fields := wt.FieldNames(); !slices.Contains(fields, w.Field) {
			bad("wait: observer %s has no field %q (it has %s)", o.Name, w.Field, strings.Join(fields, ", "))
		}
		c := *w.Condition
		c.Evidence = w.Observer + ".last." + w.Field
		if err := c.Validate(); err != nil {
			bad("wait: %v", err)
		} else if c.Relative() {
			bad("wait: a condition holds the field to a value written in it: %s reads other evidence, which a wait does not have (compare it in a claim)", c.Want())
		}
	}
	if _, err := ParseTimeout(w.Timeout, time.Minute); err != nil {
		bad("wait: %v", err)
	}
	if w.Since != "" && !slices.Contains(p.StepNames()[:i+1], w.Since) {
		bad("wait: since %q names neither a step before it (%s) nor the wait itself", w.Since, strings.Join(p.StepNames()[:i], ", "))
	}
	return errs
}
