package claims

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

	"github.com/kubeproof/kubeproof/framework/cluster"
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

// ProbeFiles are the absolute paths of the files the catalog's probes are
// written in, each once.
func (c *Catalog) ProbeFiles() []string {
	var out []string
	for _, p := range c.Probes {
		if p.Path != "" && !slices.Contains(out, p.Path) {
			out = append(out, p.Path)
		}
	}
	return out
}

// Probe returns the probe with id.
func (c *Catalog) Probe(id string) (LoadedProbe, bool) {
	for _, p := range c.Probes {
		if p.ID == id {
			return p, true
		}
	}
	return LoadedProbe{}, false
}

// ProbeEvidence declares the evidence of every probe of the catalog.
func (c *Catalog) ProbeEvidence() []EvidenceDecl {
	var out []EvidenceDecl
	for _, p := range c.Probes {
		out = append(out, p.Evidence(Source{File: p.File})...)
	}
	return out
}

// Object names one object of the probe: in the probe's namespace unless it
// is cluster-scoped.
type Object struct {
	// APIVersion and Kind of the object (v1 Pod, apps/v1 Deployment).
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
}

func (o Object) String() string { return fmt.Sprintf("%s %s", o.Kind, o.Name) }

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
	Apply *Apply `json:"apply,omitempty"`
	// Patch patches an object.
	Patch *Patch `json:"patch,omitempty"`
	// Delete deletes an object.
	Delete *Delete `json:"delete,omitempty"`
	// Wait waits until an observer's object meets a condition.
	Wait *Wait `json:"wait,omitempty"`
	// Kubectl runs the cluster's kubectl with these arguments in the
	// probe's namespace (-n is added); its exit code is steps.<name>.code.
	Kubectl []string `json:"kubectl,omitempty"`
	// As runs a kubectl or exec step as another user: with an x509 client
	// certificate the cluster's CSR API issues for it (needs a signer and
	// the right to approve CSRs), so that the API server authenticates
	// that user, not an impersonation.
	As *Identity `json:"as,omitempty"`
	// Exec runs a command in a container of a Pod of the probe (through
	// the API server, as kubectl exec does).
	Exec *Exec `json:"exec,omitempty"`
	// StopComponent stops a component of the cluster (etcd,
	// kube-controller-manager, kube-scheduler) where the provider can; it
	// is started again by a StartComponent step or when the probe ends. A
	// probe that stops one runs alone (Serial); on a provider that cannot,
	// its claims are not checkable, naming that.
	StopComponent string `json:"stopComponent,omitempty"`
	// StartComponent starts a component a StopComponent step stopped and
	// waits until it is healthy.
	StartComponent string `json:"startComponent,omitempty"`
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
	Field     string       `json:"field,omitempty"`
	Condition *Expectation `json:"condition,omitempty"`
	// Deleted waits until the object is gone instead.
	Deleted bool `json:"deleted,omitempty"`
	// Timeout bounds the wait (default 60s).
	Timeout string `json:"timeout,omitempty"`
}

// Observer records evidence under Name while the probe runs: exactly one
// of its kinds is set.
type Observer struct {
	// Name is the evidence name claims read (name.last.phase).
	Name string `json:"name"`
	// Object is the history of one object from a watch: every version,
	// with the fields asked for and when.
	Object *ObjectObserver `json:"object,omitempty"`
	// Events are the Events about one object of the probe.
	Events *Object `json:"events,omitempty"`
	// Audit are the API server's audit entries of the probe's namespace
	// that match a filter (needs the AuditLog capability).
	Audit *AuditFilter `json:"audit,omitempty"`
	// EndpointSlices is the membership of a Service's EndpointSlices over
	// time: which Pods were ready, serving, terminating.
	EndpointSlices *ServiceRef `json:"endpointSlices,omitempty"`
	// Etcd reads an object of the probe from etcd after every step: its
	// key and how it is encoded (needs the EtcdAccess capability).
	Etcd *Object `json:"etcd,omitempty"`
	// Metric reads a metric of a component when the probe starts and when
	// it ends.
	Metric *MetricRef `json:"metric,omitempty"`
}

// MetricRef names a metric: the sum of its samples whose labels include
// Labels.
type MetricRef struct {
	// Component is kube-apiserver or kubelet.
	Component string `json:"component"`
	// Node is the kubelet's node (default: the cluster's only node, or the
	// first node listed).
	Node string `json:"node,omitempty"`
	// Name is the metric's name (apiserver_request_total).
	Name string `json:"name"`
	// Labels select its samples.
	Labels map[string]string `json:"labels,omitempty"`
}

// EtcdEvidence is what an etcd observer records: it reads the object
// after every step, so that an object the probe deletes was still seen.
type EtcdEvidence struct {
	// Found: etcd held the object after some step.
	Found bool `json:"found"`
	// FoundAfter names the steps after which etcd held it.
	FoundAfter []string `json:"foundAfter"`
	// Key is the key it was last stored under (/registry/pods/<ns>/<name>),
	// with the probe's namespace as {namespace}.
	Key string `json:"key"`
	// Encoding is how it was last stored: protobuf, json or other.
	Encoding string `json:"encoding"`
}

// MetricEvidence is what a metric observer records.
type MetricEvidence struct {
	// Before and After are the metric's value when the probe started and
	// when it ended; Change is After - Before.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change"`
}

// ObjectObserver watches one object.
type ObjectObserver struct {
	Object `json:",inline"`
	// Fields maps a name (letters, digits) to a JSONPath into the object
	// ({.status.phase}, {.status.containerStatuses[0].restartCount}).
	Fields map[string]string `json:"fields"`
}

// AuditFilter selects audit entries; an empty field matches any.
type AuditFilter struct {
	// User is the username (system:serviceaccount:..., kubernetes-admin),
	// or a regular expression when it starts with ^.
	User string `json:"user,omitempty"`
	// Verbs are the verbs (create, update, patch, delete, get, list, watch).
	Verbs []string `json:"verbs,omitempty"`
	// Resource, Subresource and Name of the object.
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// ServiceRef names a Service of the probe.
type ServiceRef struct {
	Service string `json:"service"`
}

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

// EventRecord is one Event about the observed object.
type EventRecord struct {
	// Reason is the Event's reason (Scheduled, Pulled, BackOff, Killing).
	Reason string `json:"reason"`
	// Type is Normal or Warning.
	Type string `json:"type"`
	// Message is the Event's message.
	Message string `json:"message"`
	// Count is how many times the Event was reported (series included).
	Count int `json:"count"`
	// Source is the component that reported it (kubelet, default-scheduler).
	Source string `json:"source"`
	// At is when it was first seen by the watch (ms).
	At float64 `json:"at"`
}

// EventsEvidence is what an events observer records.
type EventsEvidence struct {
	// Events are every Event about the object, in the order seen.
	Events []EventRecord `json:"events"`
	// Reasons are the distinct reasons, in the order first seen.
	Reasons []string `json:"reasons"`
	// Count is the number of distinct Events.
	Count int `json:"count"`
}

// AuditRecord is one audit entry that matched.
type AuditRecord struct {
	// User is the requesting user's name.
	User string `json:"user"`
	// Verb, Resource, Subresource, Name as the audit entry has them.
	Verb        string `json:"verb"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Name        string `json:"name"`
	// Code is the response's HTTP status.
	Code int `json:"code"`
	// At is when the request was received (ms).
	At float64 `json:"at"`
}

// AuditEvidence is what an audit observer records.
type AuditEvidence struct {
	// Entries are the matching entries, in the order received.
	Entries []AuditRecord `json:"entries"`
	// Codes are their response codes, in order.
	Codes []int `json:"codes"`
	// Count is the number of matching entries.
	Count int `json:"count"`
}

// SliceVersion is a Service's endpoints at one time.
type SliceVersion struct {
	// At is when the watch delivered it (ms).
	At float64 `json:"at"`
	// Ready, Serving and Terminating name the Pods whose endpoint had the
	// condition true; All names every Pod with an endpoint.
	Ready       []string `json:"ready"`
	Serving     []string `json:"serving"`
	Terminating []string `json:"terminating"`
	All         []string `json:"all"`
}

// EndpointsEvidence is what an endpointSlices observer records.
type EndpointsEvidence struct {
	// Versions are the Service's endpoints after each change, in order.
	Versions []SliceVersion `json:"versions"`
	// Last is the endpoints at the end of the probe.
	Last SliceVersion `json:"last"`
	// EverReady names every Pod that was ready at some time.
	EverReady []string `json:"everReady"`
}

// Change is a field's value from some time on.
type Change struct {
	At    float64 `json:"at"`
	Value any     `json:"value"`
}

var (
	fieldNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	stepNameRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)
)

// StepsEvidence is the evidence name under which a probe records its steps.
const StepsEvidence = "steps"

// ObjectEvidenceType is the Go type of an object observer's evidence: its
// fields become struct fields, so that a claim's path through them is
// checked like a built-in spec's.
//
//	versions.N.{at,type,<field>...}  every version the watch delivered
//	first.<field>, last.<field>      the first and last version's values
//	values.<field>                    the field's distinct successive values
//	changes.<field>.N.{at,value}      when each of them began
//	intervals.<field>                 ms between successive changes
//	deleted, deletedAt, count         whether it was deleted, when; versions seen
func ObjectEvidenceType(fields []string) reflect.Type {
	anyT := reflect.TypeFor[any]()
	mk := func(elem reflect.Type, extra ...reflect.StructField) reflect.Type {
		sf := slices.Clone(extra)
		for _, f := range fields {
			sf = append(sf, reflect.StructField{Name: "F_" + f, Type: elem, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, f))})
		}
		return reflect.StructOf(sf)
	}
	version := mk(anyT,
		reflect.StructField{Name: "At", Type: reflect.TypeFor[float64](), Tag: `json:"at"`},
		reflect.StructField{Name: "Type", Type: reflect.TypeFor[string](), Tag: `json:"type"`})
	values := mk(anyT)
	return reflect.StructOf([]reflect.StructField{
		{Name: "Versions", Type: reflect.SliceOf(version), Tag: `json:"versions"`},
		{Name: "First", Type: values, Tag: `json:"first"`},
		{Name: "Last", Type: values, Tag: `json:"last"`},
		{Name: "Values", Type: mk(reflect.TypeFor[[]any]()), Tag: `json:"values"`},
		{Name: "Changes", Type: mk(reflect.TypeFor[[]Change]()), Tag: `json:"changes"`},
		{Name: "Intervals", Type: mk(reflect.TypeFor[[]float64]()), Tag: `json:"intervals"`},
		{Name: "Deleted", Type: reflect.TypeFor[bool](), Tag: `json:"deleted"`},
		{Name: "DeletedAt", Type: reflect.TypeFor[*float64](), Tag: `json:"deletedAt"`},
		{Name: "Count", Type: reflect.TypeFor[int](), Tag: `json:"count"`},
	})
}

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
func (p Probe) Evidence(source Source) []EvidenceDecl {
	var steps []reflect.StructField
	for _, n := range p.StepNames() {
		steps = append(steps, reflect.StructField{Name: "S_" + strings.ReplaceAll(n, "-", "_"), Type: reflect.TypeFor[StepResult](), Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, n))})
	}
	decls := []EvidenceDecl{{Spec: p.ID, Name: StepsEvidence, Type: reflect.StructOf(steps), Source: source}}
	for _, o := range p.Observe {
		var t reflect.Type
		switch {
		case o.Object != nil:
			t = ObjectEvidenceType(sortedKeys(o.Object.Fields))
		case o.Events != nil:
			t = reflect.TypeFor[EventsEvidence]()
		case o.Audit != nil:
			t = reflect.TypeFor[AuditEvidence]()
		case o.EndpointSlices != nil:
			t = reflect.TypeFor[EndpointsEvidence]()
		case o.Etcd != nil:
			t = reflect.TypeFor[EtcdEvidence]()
		case o.Metric != nil:
			t = reflect.TypeFor[MetricEvidence]()
		default:
			continue
		}
		decls = append(decls, EvidenceDecl{Spec: p.ID, Name: o.Name, Type: t, Source: source})
	}
	return decls
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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

// validate checks a probe's shape; errors name the probe and the step or
// observer.
func (p Probe) validate() []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("probe %s: %s", p.ID, fmt.Sprintf(format, args...)))
	}
	if !specRE.MatchString(p.ID) {
		bad("ID must be lower-case letters, digits and dashes")
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
		n := 0
		for _, set := range []bool{o.Object != nil, o.Events != nil, o.Audit != nil, o.EndpointSlices != nil, o.Etcd != nil, o.Metric != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			bad("observer %s: give exactly one of object, events, audit, endpointSlices, etcd, metric", o.Name)
		}
		if o.Etcd != nil && (o.Etcd.Kind == "" || o.Etcd.APIVersion == "" || o.Etcd.Name == "") {
			bad("observer %s: etcd needs apiVersion, kind and name", o.Name)
		}
		if o.Metric != nil && (o.Metric.Name == "" || !slices.Contains([]string{"kube-apiserver", "kubelet"}, o.Metric.Component)) {
			bad("observer %s: metric needs a name and a component (kube-apiserver or kubelet)", o.Name)
		}
		if o.Object != nil {
			if o.Object.Kind == "" || o.Object.APIVersion == "" || o.Object.Name == "" {
				bad("observer %s: object needs apiVersion, kind and name", o.Name)
			}
			if len(o.Object.Fields) == 0 {
				bad("observer %s: object needs fields (name: JSONPath)", o.Name)
			}
			for f, jp := range o.Object.Fields {
				if !fieldNameRE.MatchString(f) {
					bad("observer %s: field name %q must be letters and digits", o.Name, f)
				}
				if !strings.HasPrefix(jp, "{") || !strings.HasSuffix(jp, "}") {
					bad("observer %s: field %s: %q is not a JSONPath in braces ({.status.phase})", o.Name, f, jp)
				}
			}
		}
		if o.Events != nil && (o.Events.Kind == "" || o.Events.Name == "") {
			bad("observer %s: events needs the kind and name of the object", o.Name)
		}
		if o.Audit != nil && strings.HasPrefix(o.Audit.User, "^") {
			if _, err := regexp.Compile(o.Audit.User); err != nil {
				bad("observer %s: user: %v", o.Name, err)
			}
		}
		if o.EndpointSlices != nil && o.EndpointSlices.Service == "" {
			bad("observer %s: endpointSlices needs a service", o.Name)
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
			switch {
			case o == nil || o.Object == nil:
				bad("step %s: wait names %q, which is not an object observer of the probe", name, s.Wait.Observer)
			case s.Wait.Deleted == (s.Wait.Condition != nil):
				bad("step %s: wait needs a field and condition, or deleted: true (one)", name)
			case s.Wait.Condition != nil:
				if _, ok := o.Object.Fields[s.Wait.Field]; !ok {
					bad("step %s: wait: observer %s has no field %q (it has %s)", name, o.Name, s.Wait.Field, strings.Join(sortedKeys(o.Object.Fields), ", "))
				}
				c := *s.Wait.Condition
				c.Evidence = s.Wait.Observer + ".last." + s.Wait.Field
				if err := c.validate(); err != nil {
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

// Needs are the capabilities an observer of a probe needs: a claim that
// reads its evidence must require them, so that a cluster without them
// makes the claim not checkable, naming them, before any spec runs.
func (o Observer) Needs() []cluster.Capability {
	switch {
	case o.Audit != nil:
		return []cluster.Capability{cluster.AuditLog}
	case o.Etcd != nil:
		return []cluster.Capability{cluster.EtcdAccess}
	}
	return nil
}

// StoppableComponents are the components a probe's steps can stop and
// start (where the provider can: cluster.ComponentStopper).
var StoppableComponents = []string{"etcd", "kube-controller-manager", "kube-scheduler"}

// CheckProbeNeeds reports every claim that reads evidence of a probe's
// observer without requiring what the observer needs (nor the probe
// requiring it).
func CheckProbeNeeds(cat *Catalog) []error {
	var errs []error
	for _, c := range cat.Claims {
		paths := slices.Clone(c.Context)
		for _, e := range c.Expect {
			paths = append(paths, e.Evidence)
		}
		for _, alt := range c.Conditional {
			for _, e := range alt.Expect {
				paths = append(paths, e.Evidence)
			}
		}
		for _, spec := range c.Specs {
			p, ok := cat.Probe(spec)
			if !ok {
				continue
			}
			for _, o := range p.Observe {
				reads := slices.ContainsFunc(paths, func(path string) bool { return path == o.Name || strings.HasPrefix(path, o.Name+".") })
				for _, need := range o.Needs() {
					if reads && !slices.Contains(c.Requires, need) && !slices.Contains(p.Requires, need) {
						errs = append(errs, fmt.Errorf("claim %s: reads %s, an observer of probe %s that needs capability %s: add it to the claim's requires", c.ID, o.Name, p.ID, need))
					}
				}
			}
		}
	}
	return errs
}
