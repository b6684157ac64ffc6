// Package observer holds the observers of a probe (probe.Probe), the part
// of a claims file that records evidence while a probe's steps run: one
// file per kind of observer, and one table of kinds (Kinds). A kind's file
// holds all of it: what a claims file writes (its spec type, whose doc
// comments the claims schema shows), how that is checked (Validate), the
// Go type of what it records (Evidence, which lint holds claims' paths
// to), what each path means (Explain, for the evidence catalog) and how it
// observes a cluster (Start). Its row in Kinds names its key in a claims
// file and the capabilities it needs.
//
// The package knows neither the claims catalog nor the spec's Framework:
// the catalog decodes observers with it, and the probe runtime
// (suites/probes) starts them on an Env it builds from the Framework.
package observer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Kind is one kind of observer: a row of Kinds.
type Kind struct {
	// Key names the kind in a claims file: the observer's one key beside
	// its name (object:, audit:).
	Key string
	// Needs are the capabilities an observer of the kind needs: a claim
	// that reads its evidence must require them (lint), and on a cluster
	// without one the observer records nothing, naming it.
	Needs []cluster.Capability
	// New returns an empty spec of the kind for a claims file's observer
	// to decode into.
	New func() Spec
}

// Spec is what a claims file writes for one kind of observer.
type Spec interface {
	// Validate returns what is wrong with the spec, each a phrase that
	// names the kind ("etcd needs apiVersion, kind and name").
	Validate() []string
	// Evidence is the Go type of what the observer records: claims' paths
	// through it are checked before any cluster exists.
	Evidence() reflect.Type
	// Explain says what each path of the evidence means, as the evidence
	// catalog lists it (evidencedoc.Expand: lists' elements as .0), the
	// observer named name.
	Explain(name string, put Explainer)
	// Start starts observing on env's cluster; the probe's first step
	// begins after every observer has started.
	Start(ctx context.Context, env *Env) (Recorder, error)
}

// Explainer takes the meaning of one evidence path, as a format and its
// arguments.
type Explainer func(path, format string, args ...any)

// Recorder is an observer at work.
type Recorder interface {
	// Evidence is what it saw, of the type its spec's Evidence declares,
	// taken once the probe's last step is done.
	Evidence() (any, error)
	// Stop ends its watches.
	Stop()
}

// StepReader is a Recorder that reads something after every step rather
// than following a watch.
type StepReader interface {
	AfterStep(ctx context.Context, step string)
}

// Waitable is a spec a probe's wait step can wait on: the names of the
// fields its evidence has.
type Waitable interface {
	FieldNames() []string
}

// Waiter is the Recorder of a Waitable spec.
type Waiter interface {
	// WaitField waits until holds is true of field's latest value.
	WaitField(ctx context.Context, timeout time.Duration, what, field string, holds func(any) bool) error
	// WaitDeleted waits until the object is deleted.
	WaitDeleted(ctx context.Context, timeout time.Duration, what string) error
}

// Lookup returns the kind with key.
func Lookup(key string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Key == key })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// Keys are the keys of every kind, in the table's order.
func Keys() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Key
	}
	return out
}

// Env is the cluster a probe runs on, as its observers (and its steps)
// reach it.
type Env struct {
	Client kubernetes.Interface
	// RESTConfig is the client's configuration: with it an observer
	// reaches a component's own endpoint (its /metrics).
	RESTConfig *rest.Config
	Dynamic    dynamic.Interface
	Mapper     meta.RESTMapper
	// Namespace is the probe's own.
	Namespace string
	Cluster   *cluster.Info
	// Start is when the probe's first step began: every time in evidence
	// is milliseconds after it.
	Start time.Time
	// StepStarts is when each step began, by name, as the steps are taken
	// (an observer reads it once the last is done).
	StepStarts map[string]time.Time
	// APITimeout bounds one request to the cluster; AuditTimeout the wait
	// for the audit log to hold a request.
	APITimeout, AuditTimeout time.Duration
}

// Millis is t as milliseconds after the probe's start.
func (e *Env) Millis(t time.Time) float64 { return float64(t.Sub(e.Start).Microseconds()) / 1000 }

// Mapping maps an object's apiVersion and kind to its resource.
func (e *Env) Mapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	m, err := e.Mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("the cluster serves no %s %s: %w", apiVersion, kind, err)
	}
	return m, nil
}

// Resource is the dynamic client of an object's resource, in the probe's
// namespace when it is namespaced.
func (e *Env) Resource(apiVersion, kind string) (dynamic.ResourceInterface, error) {
	m, err := e.Mapping(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return e.Dynamic.Resource(m.Resource).Namespace(e.Namespace), nil
	}
	return e.Dynamic.Resource(m.Resource), nil
}

// Ref names one object of the probe: in the probe's namespace unless it
// is cluster-scoped.
type Ref struct {
	// APIVersion and Kind of the object (v1 Pod, apps/v1 Deployment).
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
}

func (r Ref) String() string { return fmt.Sprintf("%s %s", r.Kind, r.Name) }

// complete reports whether the reference names apiVersion, kind and name.
func (r Ref) complete() bool { return r.APIVersion != "" && r.Kind != "" && r.Name != "" }

// Observer records evidence under Name while the probe runs: exactly one
// of its kinds is set.
type Observer struct {
	// Name is the evidence name claims read (name.last.phase).
	Name string `json:"name"`
	// Spec is the observer's kind and what it observes; nil when the
	// claims file gave none.
	Spec Spec `json:"-"`
	// keys are the kinds the claims file gave: more than one is refused
	// by Validate, as the schema refuses it.
	keys []string
}

// New returns an observer of the kind of spec, named name.
func New(name string, spec Spec) Observer {
	o := Observer{Name: name, Spec: spec}
	if k, ok := kindOf(spec); ok {
		o.keys = []string{k.Key}
	}
	return o
}

// kindOf is the row of spec's type.
func kindOf(spec Spec) (Kind, bool) {
	if spec == nil {
		return Kind{}, false
	}
	t := reflect.TypeOf(spec)
	for _, k := range Kinds {
		if reflect.TypeOf(k.New()) == t {
			return k, true
		}
	}
	return Kind{}, false
}

// Kind is the observer's row of Kinds.
func (o Observer) Kind() (Kind, bool) { return kindOf(o.Spec) }

// Needs are the capabilities the observer needs.
func (o Observer) Needs() []cluster.Capability {
	k, _ := o.Kind()
	return k.Needs
}

// Validate checks the observer's kind and its spec; each problem names
// the observer.
func (o Observer) Validate() []string {
	var errs []string
	if len(o.keys) != 1 || o.Spec == nil {
		errs = append(errs, fmt.Sprintf("observer %s: give exactly one of %s", o.Name, strings.Join(Keys(), ", ")))
		return errs
	}
	for _, e := range o.Spec.Validate() {
		errs = append(errs, fmt.Sprintf("observer %s: %s", o.Name, e))
	}
	return errs
}

// UnmarshalJSON reads an observer as a claims file writes it: its name
// and one key of Kinds, whose value is decoded into that kind's spec,
// unknown fields refused as the loader refuses them everywhere.
func (o *Observer) UnmarshalJSON(data []byte) error {
	var named struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &named); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*o = Observer{Name: named.Name}
	for _, key := range Keys() {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		delete(fields, key)
		k, _ := Lookup(key)
		spec := k.New()
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			return err
		}
		o.keys = append(o.keys, key)
		if o.Spec == nil {
			o.Spec = spec
		}
	}
	delete(fields, "name")
	for key := range fields {
		return fmt.Errorf("json: unknown field %q", key)
	}
	return nil
}

// MarshalJSON writes the observer as a claims file does.
func (o Observer) MarshalJSON() ([]byte, error) {
	out := map[string]any{"name": o.Name}
	if k, ok := o.Kind(); ok {
		out[k.Key] = o.Spec
	}
	return json.Marshal(out)
}

// OneOf lists the keys of which an observer takes exactly one, as the
// struct fields they would be: the claims schema says one-of with them,
// and a decoding error is placed on the line of the field it is in.
func (Observer) OneOf() []reflect.StructField {
	out := make([]reflect.StructField, len(Kinds))
	for i, k := range Kinds {
		out[i] = reflect.StructField{Name: "K_" + k.Key, Type: reflect.TypeOf(k.New()), Index: []int{i},
			Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, k.Key+",omitempty"))}
	}
	return out
}

// jsonValue decodes v into the shapes the judge reads (float64, string,
// bool, []any, map[string]any).
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// jsonEqual compares two values decoded from JSON.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(jsonValue(a), jsonValue(b)) }

// structOf is a struct type with one field of type elem per name, after
// the fields given: the evidence of an observer whose claims file names
// its fields (an object's, a node's conditions), so that lint checks a
// claim's path through them as through a built-in spec's.
func structOf(names []string, elem reflect.Type, extra ...reflect.StructField) reflect.Type {
	sf := slices.Clone(extra)
	for _, n := range names {
		sf = append(sf, reflect.StructField{Name: "F_" + n, Type: elem, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, n))})
	}
	return reflect.StructOf(sf)
}
