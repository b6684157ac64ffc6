package observer

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// Object is the history of one object from a watch: every version, with
// the fields asked for and when.
type Object struct {
	Ref `json:",inline"`
	// Fields maps a name (letters, digits) to a JSONPath into the object
	// ({.status.phase}, {.status.containerStatuses[0].restartCount}).
	Fields map[string]string `json:"fields"`
}

// Change is a field's value from some time on.
type Change struct {
	At    float64 `json:"at"`
	Value any     `json:"value"`
}

var fieldNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// FieldNames are the object's fields, sorted: a wait step waits on one.
func (o *Object) FieldNames() []string {
	names := make([]string, 0, len(o.Fields))
	for k := range o.Fields {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (o *Object) Validate() []string {
	var errs []string
	if !o.complete() {
		errs = append(errs, "object needs apiVersion, kind and name")
	}
	if len(o.Fields) == 0 {
		errs = append(errs, "object needs fields (name: JSONPath)")
	}
	return append(errs, validateFields("field", o.Fields)...)
}

// validateFields checks a map of name -> JSONPath (an observer's fields).
func validateFields(what string, fields map[string]string) []string {
	var errs []string
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		jp := fields[f]
		if !fieldNameRE.MatchString(f) {
			errs = append(errs, fmt.Sprintf("%s name %q must be letters and digits", what, f))
		}
		if !strings.HasPrefix(jp, "{") || !strings.HasSuffix(jp, "}") {
			errs = append(errs, fmt.Sprintf("%s %s: %q is not a JSONPath in braces ({.status.phase})", what, f, jp))
		}
	}
	return errs
}

// Evidence is an object observer's evidence: its fields become struct
// fields, so that a claim's path through them is checked like a built-in
// spec's.
//
//	versions.N.{at,type,<field>...}  every version the watch delivered
//	first.<field>, last.<field>      the first and last version's values
//	values.<field>                    the field's distinct successive values
//	changes.<field>.N.{at,value}      when each of them began
//	intervals.<field>                 ms between successive changes
//	deleted, deletedAt, count         whether it was deleted, when; versions seen
func (o *Object) Evidence() reflect.Type {
	fields := o.FieldNames()
	anyT := reflect.TypeFor[any]()
	version := structOf(fields, anyT,
		reflect.StructField{Name: "At", Type: reflect.TypeFor[float64](), Tag: `json:"at"`},
		reflect.StructField{Name: "Type", Type: reflect.TypeFor[string](), Tag: `json:"type"`})
	values := structOf(fields, anyT)
	return reflect.StructOf([]reflect.StructField{
		{Name: "Versions", Type: reflect.SliceOf(version), Tag: `json:"versions"`},
		{Name: "First", Type: values, Tag: `json:"first"`},
		{Name: "Last", Type: values, Tag: `json:"last"`},
		{Name: "Values", Type: structOf(fields, reflect.TypeFor[[]any]()), Tag: `json:"values"`},
		{Name: "Changes", Type: structOf(fields, reflect.TypeFor[[]Change]()), Tag: `json:"changes"`},
		{Name: "Intervals", Type: structOf(fields, reflect.TypeFor[[]float64]()), Tag: `json:"intervals"`},
		{Name: "Deleted", Type: reflect.TypeFor[bool](), Tag: `json:"deleted"`},
		{Name: "DeletedAt", Type: reflect.TypeFor[*float64](), Tag: `json:"deletedAt"`},
		{Name: "Count", Type: reflect.TypeFor[int](), Tag: `json:"count"`},
	})
}

func (o *Object) Explain(n string, put Explainer) {
	obj := o.Ref.String()
	put(n, "The history of %s from a watch, from the probe's start.", obj)
	put(n+".versions", "Every version of %s the watch delivered, in order.", obj)
	put(n+".versions.0.at", "When the watch delivered the version (ms).")
	put(n+".versions.0.type", "The watch event: ADDED, MODIFIED or DELETED.")
	put(n+".first", "The fields of the first version seen.")
	put(n+".last", "The fields of the last version seen.")
	put(n+".values", "Each field's distinct successive values.")
	put(n+".changes", "When each of a field's values began.")
	put(n+".intervals", "The time between successive changes of a field (ms).")
	for f, jp := range o.Fields {
		put(n+".versions.0."+f, "%s in that version (%s).", f, jp)
		put(n+".first."+f, "%s in the first version seen (%s).", f, jp)
		put(n+".last."+f, "%s in the last version seen (%s).", f, jp)
		put(n+".values."+f, "The distinct successive values of %s (%s), in order.", f, jp)
		put(n+".values."+f+".0", "One value of %s, in the order they came.", f)
		put(n+".changes."+f, "When each value of %s began.", f)
		put(n+".changes."+f+".0.at", "When the value began (ms).")
		put(n+".changes."+f+".0.value", "The value of %s from then on.", f)
		put(n+".intervals."+f, "The time between successive changes of %s (ms).", f)
		put(n+".intervals."+f+".0", "One interval between changes of %s (ms).", f)
	}
	put(n+".deleted", "Whether %s was deleted while the probe ran.", obj)
	put(n+".deletedAt", "When the watch saw %s deleted (ms); null if it was not.", obj)
	put(n+".count", "How many versions of %s the watch delivered.", obj)
}

// objectRecorder is the history of one object from a watch.
type objectRecorder struct {
	env    *Env
	rec    *observe.Recorder
	fields map[string]*jsonpath.JSONPath
	names  []string
}

func (o *Object) Start(ctx context.Context, env *Env) (Recorder, error) {
	ri, err := env.Resource(o.APIVersion, o.Kind)
	if err != nil {
		return nil, err
	}
	r, err := newObjectRecorder(env, o.Fields)
	if err != nil {
		return nil, err
	}
	if r.rec, err = observe.Record(ctx, observe.Named(ri.List, ri.Watch, o.Name)); err != nil {
		return nil, fmt.Errorf("watch %s: %w", o.Ref, err)
	}
	return r, nil
}

// newObjectRecorder parses the fields' JSONPaths.
func newObjectRecorder(env *Env, exprs map[string]string) (*objectRecorder, error) {
	r := &objectRecorder{env: env, fields: map[string]*jsonpath.JSONPath{}}
	for name, expr := range exprs {
		jp := jsonpath.New(name).AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, fmt.Errorf("field %s: JSONPath %s: %w", name, expr, err)
		}
		r.fields[name] = jp
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	return r, nil
}

// values reads the observer's fields from one version of the object: a
// field that is absent is null.
func (r *objectRecorder) values(obj runtime.Object) map[string]any {
	u, ok := obj.(*unstructured.Unstructured)
	out := map[string]any{}
	for _, name := range r.names {
		out[name] = nil
		if !ok {
			continue
		}
		res, err := r.fields[name].FindResults(u.Object)
		if err != nil || len(res) == 0 || len(res[0]) == 0 {
			continue
		}
		if len(res[0]) == 1 {
			out[name] = jsonValue(res[0][0].Interface())
			continue
		}
		var list []any
		for _, v := range res[0] {
			list = append(list, jsonValue(v.Interface()))
		}
		out[name] = list
	}
	return out
}

func (r *objectRecorder) WaitField(ctx context.Context, timeout time.Duration, what, field string, holds func(any) bool) error {
	return r.wait(ctx, timeout, what, func(events []observe.Event) bool {
		return len(events) > 0 && holds(r.values(events[len(events)-1].Object)[field])
	})
}

func (r *objectRecorder) WaitDeleted(ctx context.Context, timeout time.Duration, what string) error {
	return r.wait(ctx, timeout, what, func(events []observe.Event) bool {
		return slices.ContainsFunc(events, func(e observe.Event) bool { return e.Type == watch.Deleted })
	})
}

func (r *objectRecorder) wait(ctx context.Context, timeout time.Duration, what string, pred func([]observe.Event) bool) error {
	_, err := r.rec.WaitFor(ctx, timeout, what, pred, func(e observe.Event) string {
		return fmt.Sprintf("%s %v", e.Type, r.values(e.Object))
	})
	return err
}

func (r *objectRecorder) Evidence() (any, error) { return r.history(r.rec.Events()), nil }

// history is an object observer's evidence from the watch's events: every
// version with the fields' values, and per field its distinct successive
// values, when each began and the time between them.
func (r *objectRecorder) history(events []observe.Event) map[string]any {
	versions := []map[string]any{}
	distinct := map[string][]any{}
	changes := map[string][]Change{}
	intervals := map[string][]float64{}
	// An object never seen has every field null, first and last: a claim
	// reads null (the object was not there), not a missing field.
	first, last := map[string]any{}, map[string]any{}
	for _, name := range r.names {
		first[name], last[name] = nil, nil
	}
	var deletedAt *float64
	for i, e := range events {
		at := r.env.Millis(e.Received)
		vals := r.values(e.Object)
		v := map[string]any{"at": at, "type": string(e.Type)}
		for _, name := range r.names {
			v[name] = vals[name]
			ch := changes[name]
			if len(ch) == 0 || !jsonEqual(ch[len(ch)-1].Value, vals[name]) {
				if len(ch) > 0 {
					intervals[name] = append(intervals[name], at-ch[len(ch)-1].At)
				}
				changes[name] = append(ch, Change{At: at, Value: vals[name]})
				distinct[name] = append(distinct[name], vals[name])
			}
		}
		versions = append(versions, v)
		if i == 0 {
			first = vals
		}
		last = vals
		if e.Type == watch.Deleted && deletedAt == nil {
			deletedAt = &at
		}
	}
	return map[string]any{
		"versions": versions, "first": first, "last": last,
		"values": nonNil(distinct, r.names), "changes": nonNil(changes, r.names), "intervals": nonNil(intervals, r.names),
		"deleted": deletedAt != nil, "deletedAt": deletedAt, "count": len(events),
	}
}

// nonNil gives every field a list, empty when nothing was seen, so that a
// claim reads [] rather than finding no value.
func nonNil[T any](m map[string][]T, names []string) map[string][]T {
	for _, n := range names {
		if m[n] == nil {
			m[n] = []T{}
		}
	}
	return m
}

func (r *objectRecorder) Stop() { r.rec.Stop() }
