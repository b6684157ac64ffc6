package observer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// Objects is every object of a kind in the probe's namespace whose labels
// match a selector (the Pods of a Deployment, of a Service), each one's
// history, and counts over the set after each change: how many existed,
// how many had each value of a field.
type Objects struct {
	// APIVersion and Kind of the objects (v1 Pod, apps/v1 ReplicaSet).
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Selector is a label selector (app=web, tier in (a,b)).
	Selector string `json:"selector"`
	// Fields maps a name (letters, digits) to a JSONPath into each object,
	// as an object observer's do.
	Fields map[string]string `json:"fields,omitempty"`
	// Since names a step: the counts' max and min are taken from that
	// step's start on (a rollout, not the Pods' first start); Until, up to
	// another's start. The histories and the timeline are whole.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
}

// Tally is a count over the set, after each change.
type Tally struct {
	// Max and Min are the largest and smallest count (from since's step
	// on), Last the count when the probe ended.
	Max  int `json:"max"`
	Min  int `json:"min"`
	Last int `json:"last"`
}

// StepsNamed is an observer that reads the times steps of its probe began:
// the probe checks that it names its steps.
type StepsNamed interface {
	StepsNamed() []string
}

// StepsNamed are the steps the counts are taken from and to.
func (o *Objects) StepsNamed() []string {
	var out []string
	for _, s := range []string{o.Since, o.Until} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (o *Objects) Validate() []string {
	var errs []string
	if o.APIVersion == "" || o.Kind == "" || o.Selector == "" {
		errs = append(errs, "objects needs apiVersion, kind and selector")
	}
	if _, err := labels.Parse(o.Selector); o.Selector != "" && err != nil {
		errs = append(errs, fmt.Sprintf("objects: selector: %v", err))
	}
	return append(errs, validateFields("field", o.Fields)...)
}

// Evidence is an objects observer's evidence: each object's history as an
// object observer's (first, last, values of its fields), and counts.
//
//	objects.N.{name,at,deletedAt,first.<f>,last.<f>,values.<f>}
//	names, count                       every object seen, how many
//	live.{max,min,last}                how many existed after each change
//	tally.<f>.<value>.{max,min,last}   how many had that value of f
//	timeline.N.{at,live,<f>}           after each change: the count, and
//	                                   each live object's f (by name)
func (o *Objects) Evidence() reflect.Type {
	fields := slices.Sorted(maps.Keys(o.Fields))
	anyT := reflect.TypeFor[any]()
	values := structOf(fields, anyT)
	object := reflect.StructOf([]reflect.StructField{
		{Name: "Name", Type: reflect.TypeFor[string](), Tag: `json:"name"`},
		{Name: "At", Type: reflect.TypeFor[float64](), Tag: `json:"at"`},
		{Name: "DeletedAt", Type: reflect.TypeFor[*float64](), Tag: `json:"deletedAt"`},
		{Name: "First", Type: values, Tag: `json:"first"`},
		{Name: "Last", Type: values, Tag: `json:"last"`},
		{Name: "Values", Type: structOf(fields, reflect.TypeFor[[]any]()), Tag: `json:"values"`},
		{Name: "Changes", Type: structOf(fields, reflect.TypeFor[[]Change]()), Tag: `json:"changes"`},
	})
	point := structOf(fields, reflect.TypeFor[[]any](),
		reflect.StructField{Name: "At", Type: reflect.TypeFor[float64](), Tag: `json:"at"`},
		reflect.StructField{Name: "Live", Type: reflect.TypeFor[int](), Tag: `json:"live"`})
	return reflect.StructOf([]reflect.StructField{
		{Name: "Objects", Type: reflect.SliceOf(object), Tag: `json:"objects"`},
		{Name: "Names", Type: reflect.TypeFor[[]string](), Tag: `json:"names"`},
		{Name: "Count", Type: reflect.TypeFor[int](), Tag: `json:"count"`},
		{Name: "Live", Type: reflect.TypeFor[Tally](), Tag: `json:"live"`},
		{Name: "Tally", Type: structOf(fields, reflect.TypeFor[map[string]Tally]()), Tag: `json:"tally"`},
		{Name: "Range", Type: structOf(fields, reflect.TypeFor[Range]()), Tag: `json:"range"`},
		{Name: "Timeline", Type: reflect.SliceOf(point), Tag: `json:"timeline"`},
	})
}

func (o *Objects) Explain(n string, put Explainer) {
	set := fmt.Sprintf("the %s objects with labels %s", o.Kind, o.Selector)
	from := "while the probe ran"
	switch {
	case o.Since != "" && o.Until != "":
		from = "from the start of step " + o.Since + " to the start of step " + o.Until
	case o.Since != "":
		from = "from the start of step " + o.Since
	case o.Until != "":
		from = "until the start of step " + o.Until
	}
	put(n, "Every one of %s, and counts over them after each change.", set)
	put(n+".objects", "Each of %s, in the order first seen.", set)
	put(n+".objects.0.name", "Its name.")
	put(n+".objects.0.at", "When the watch first saw it (ms).")
	put(n+".objects.0.deletedAt", "When the watch saw it deleted (ms); null if it was not.")
	put(n+".objects.0.first", "Its fields when first seen.")
	put(n+".objects.0.last", "Its fields when last seen.")
	put(n+".objects.0.values", "Each field's distinct successive values.")
	put(n+".objects.0.changes", "When each of a field's values began.")
	put(n+".range", "For each numeric field, the smallest and largest value among the existing objects %s.", from)
	put(n+".names", "The names of %s, in the order first seen.", set)
	put(n+".names.0", "One name.")
	put(n+".count", "How many of %s were seen.", set)
	put(n+".live", "How many of %s existed, after each change.", set)
	put(n+".live.max", "The most that existed at once %s.", from)
	put(n+".live.min", "The fewest that existed at once %s.", from)
	put(n+".live.last", "How many existed when the probe ended.")
	put(n+".tally", "For each field, how many of them had each of its values, after each change.")
	put(n+".timeline", "After each change: when, how many existed, and each one's fields (by name).")
	put(n+".timeline.0.at", "When the change was seen (ms).")
	put(n+".timeline.0.live", "How many existed after it.")
	for f, jp := range o.Fields {
		put(n+".objects.0.first."+f, "%s when first seen (%s).", f, jp)
		put(n+".objects.0.last."+f, "%s when last seen (%s).", f, jp)
		put(n+".objects.0.values."+f, "The distinct successive values of %s.", f)
		put(n+".objects.0.values."+f+".0", "One value of %s.", f)
		put(n+".objects.0.changes."+f, "When each value of %s began.", f)
		put(n+".objects.0.changes."+f+".0.at", "When the value began (ms).")
		put(n+".objects.0.changes."+f+".0.value", "The value of %s from then on.", f)
		put(n+".range."+f, "The smallest and largest %s among the existing objects %s (null if it was never a number).", f, from)
		put(n+".range."+f+".min", "The smallest %s %s.", f, from)
		put(n+".range."+f+".max", "The largest %s %s.", f, from)
		put(n+".tally."+f, "By value of %s (as JSON writes it, a string without quotes, null for none): how many had it.", f)
		put(n+".tally."+f+".{key}", "How many had that value of %s.", f)
		put(n+".tally."+f+".{key}.max", "The most that had it at once %s.", from)
		put(n+".tally."+f+".{key}.min", "The fewest that had it at once %s (0 if, at some time, none).", from)
		put(n+".tally."+f+".{key}.last", "How many had it when the probe ended.")
		put(n+".timeline.0."+f, "Each existing object's %s, by name.", f)
		put(n+".timeline.0."+f+".0", "One object's %s.", f)
	}
}

// objectsRecorder follows the set.
type objectsRecorder struct {
	spec Objects
	rec  *observe.Recorder
	vals *objectRecorder
}

func (o *Objects) Start(ctx context.Context, env *Env) (Recorder, error) {
	ri, err := env.Resource(o.APIVersion, o.Kind)
	if err != nil {
		return nil, err
	}
	vals, err := newObjectRecorder(env, o.Fields)
	if err != nil {
		return nil, err
	}
	lw := observe.Selected(ri.List, ri.Watch, func(opts *metav1.ListOptions) { opts.LabelSelector = o.Selector })
	r := &objectsRecorder{spec: *o, vals: vals}
	if r.rec, err = observe.Record(ctx, lw); err != nil {
		return nil, fmt.Errorf("watch %s %s: %w", o.Kind, o.Selector, err)
	}
	return r, nil
}

func (r *objectsRecorder) Stop() { r.rec.Stop() }

func (r *objectsRecorder) Evidence() (any, error) {
	var since, until time.Time
	if r.spec.Since != "" {
		since = r.vals.env.StepStarts[r.spec.Since]
	}
	if r.spec.Until != "" {
		until = r.vals.env.StepStarts[r.spec.Until]
	}
	return r.history(r.rec.Events(), since, until), nil
}

// history folds the watch's events into the evidence; counts are taken
// over the states at or after since (the state when since's step began
// included) and before until (when set).
func (r *objectsRecorder) history(events []observe.Event, since, until time.Time) map[string]any {
	env, names := r.vals.env, r.vals.names
	type one struct {
		events    []observe.Event
		at        float64
		deletedAt *float64
	}
	byName := map[string]*one{}
	var order []string
	live := map[string]map[string]any{}
	timeline := []map[string]any{}
	// counted are the states the counts are taken over: how many existed,
	// and per field how many had each value.
	type state struct {
		live int
		per  map[string]map[string]int
		nums map[string][]float64
	}
	var counted []state
	snapshot := func() state {
		st := state{live: len(live), per: map[string]map[string]int{}, nums: map[string][]float64{}}
		for _, f := range names {
			st.per[f] = map[string]int{}
			for _, m := range live {
				st.per[f][valueKey(m[f])]++
				if x, ok := m[f].(float64); ok {
					st.nums[f] = append(st.nums[f], x)
				}
			}
		}
		return st
	}
	for _, e := range events {
		u, ok := e.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if !since.IsZero() && !e.Received.Before(since) && len(counted) == 0 {
			counted = append(counted, snapshot()) // the state when the step began
		}
		at := env.Millis(e.Received)
		name := u.GetName()
		o := byName[name]
		if o == nil {
			o = &one{at: at}
			byName[name] = o
			order = append(order, name)
		}
		o.events = append(o.events, e)
		if e.Type == watch.Deleted {
			delete(live, name)
			o.deletedAt = &at
		} else {
			live[name] = r.vals.values(e.Object)
		}
		point := map[string]any{"at": at, "live": len(live)}
		members := slices.Sorted(maps.Keys(live))
		for _, f := range names {
			vals := []any{}
			for _, m := range members {
				vals = append(vals, live[m][f])
			}
			point[f] = vals
		}
		timeline = append(timeline, point)
		if (since.IsZero() || !e.Received.Before(since)) && (until.IsZero() || e.Received.Before(until)) {
			counted = append(counted, snapshot())
		}
	}
	if len(counted) == 0 {
		// No change after since's step began: its state is the last one.
		counted = append(counted, snapshot())
	}
	final := snapshot()
	liveT := Tally{Max: counted[0].live, Min: counted[0].live, Last: final.live}
	tallies := map[string]any{}
	for _, f := range names {
		byValue := map[string]Tally{}
		for _, st := range append(slices.Clone(counted), final) {
			for v := range st.per[f] {
				byValue[v] = Tally{Min: -1}
			}
		}
		for v := range byValue {
			t := Tally{Min: -1, Last: final.per[f][v]}
			for _, st := range counted {
				n := st.per[f][v]
				t.Max = max(t.Max, n)
				if t.Min < 0 || n < t.Min {
					t.Min = n
				}
			}
			byValue[v] = t
		}
		tallies[f] = byValue
	}
	for _, st := range counted {
		liveT.Max, liveT.Min = max(liveT.Max, st.live), min(liveT.Min, st.live)
	}
	ranges := map[string]Range{}
	for _, f := range names {
		var r Range
		for _, st := range counted {
			for _, x := range st.nums[f] {
				if r.Min == nil || x < *r.Min {
					r.Min = &x
				}
				if r.Max == nil || x > *r.Max {
					r.Max = &x
				}
			}
		}
		ranges[f] = r
	}
	objects := []map[string]any{}
	for _, name := range order {
		o := byName[name]
		h := r.vals.history(o.events)
		objects = append(objects, map[string]any{"name": name, "at": o.at, "deletedAt": o.deletedAt,
			"first": h["first"], "last": h["last"], "values": h["values"], "changes": h["changes"]})
	}
	return map[string]any{"objects": objects, "names": append([]string{}, order...), "count": len(order),
		"live": liveT, "tally": tallies, "range": ranges, "timeline": timeline}
}

// valueKey is a field's value as a tally names it: a string as it is,
// null as null, another value as JSON writes it.
func valueKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// Range is the smallest and largest number a field took among the
// existing objects, over the states counted; null when it took none.
type Range struct {
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
}
