package probe

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/etcd"
	"github.com/kubeproof/kubeproof/framework/metrics"
	"github.com/kubeproof/kubeproof/framework/observe"
)

// observer records one observer's evidence.
type observer interface {
	// evidence is what the observer saw, as its claims.Probe.Evidence
	// type declares it.
	evidence() (any, error)
	stop()
}

// stepWatcher is an observer that reads something after every step
// rather than following a watch.
type stepWatcher interface {
	afterStep(ctx context.Context, step string)
}

func (r *run) startObserver(ctx context.Context, o claims.Observer) (observer, error) {
	switch {
	case o.Object != nil:
		return r.watchObject(ctx, o.Object)
	case o.Events != nil:
		return r.watchEvents(ctx, o.Events)
	case o.Audit != nil:
		return r.readAudit(o.Audit)
	case o.EndpointSlices != nil:
		return r.watchSlices(ctx, o.EndpointSlices)
	case o.Etcd != nil:
		return r.readEtcd(o.Etcd)
	case o.Metric != nil:
		return r.readMetric(ctx, o.Metric)
	}
	return nil, fmt.Errorf("observer %s has no kind", o.Name)
}

// objectObserver is the history of one object from a watch.
type objectObserver struct {
	start  time.Time
	rec    *observe.Recorder
	fields map[string]*jsonpath.JSONPath
	names  []string
}

func (r *run) watchObject(ctx context.Context, o *claims.ObjectObserver) (*objectObserver, error) {
	ri, err := r.resource(o.APIVersion, o.Kind)
	if err != nil {
		return nil, err
	}
	sel := fields.OneTermEqualSelector("metadata.name", o.Name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = sel
			return ri.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = sel
			return ri.Watch(ctx, opts)
		},
	}
	ob := &objectObserver{start: r.start, fields: map[string]*jsonpath.JSONPath{}}
	for name, expr := range o.Fields {
		jp := jsonpath.New(name).AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, fmt.Errorf("field %s: JSONPath %s: %w", name, expr, err)
		}
		ob.fields[name] = jp
		ob.names = append(ob.names, name)
	}
	sort.Strings(ob.names)
	if ob.rec, err = observe.Record(ctx, lw); err != nil {
		return nil, fmt.Errorf("watch %s: %w", o.Object, err)
	}
	return ob, nil
}

// values reads the observer's fields from one version of the object: a
// field that is absent is null.
func (o *objectObserver) values(obj runtime.Object) map[string]any {
	u, ok := obj.(*unstructured.Unstructured)
	out := map[string]any{}
	for _, name := range o.names {
		out[name] = nil
		if !ok {
			continue
		}
		res, err := o.fields[name].FindResults(u.Object)
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

func (o *objectObserver) waitFor(ctx context.Context, timeout time.Duration, w *claims.Wait) error {
	what := "deleted"
	pred := func(events []observe.Event) bool {
		return slices.ContainsFunc(events, func(e observe.Event) bool { return e.Type == watch.Deleted })
	}
	if !w.Deleted {
		c := *w.Condition
		what = fmt.Sprintf("%s %s", w.Field, c.Want())
		pred = func(events []observe.Event) bool {
			return len(events) > 0 && c.Holds(o.values(events[len(events)-1].Object)[w.Field])
		}
	}
	_, err := o.rec.WaitFor(ctx, timeout, fmt.Sprintf("%s: %s", w.Observer, what), pred, func(e observe.Event) string {
		return fmt.Sprintf("%s %v", e.Type, o.values(e.Object))
	})
	return err
}

func (o *objectObserver) evidence() (any, error) {
	return history(o.rec.Events(), o.start, o.names, o.values), nil
}

// history is an object observer's evidence from the watch's events: every
// version with the fields' values, and per field its distinct successive
// values, when each began and the time between them.
func history(events []observe.Event, start time.Time, names []string, values func(runtime.Object) map[string]any) map[string]any {
	versions := []map[string]any{}
	distinct := map[string][]any{}
	changes := map[string][]claims.Change{}
	intervals := map[string][]float64{}
	first, last := map[string]any{}, map[string]any{}
	var deletedAt *float64
	for i, e := range events {
		at := ms(start, e.Received)
		vals := values(e.Object)
		v := map[string]any{"at": at, "type": string(e.Type)}
		for _, name := range names {
			v[name] = vals[name]
			ch := changes[name]
			if len(ch) == 0 || !jsonEqual(ch[len(ch)-1].Value, vals[name]) {
				if len(ch) > 0 {
					intervals[name] = append(intervals[name], at-ch[len(ch)-1].At)
				}
				changes[name] = append(ch, claims.Change{At: at, Value: vals[name]})
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
		"values": nonNil(distinct, names), "changes": nonNil(changes, names), "intervals": nonNil(intervals, names),
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

func (o *objectObserver) stop() { o.rec.Stop() }

// eventsObserver keeps the Events about one object.
type eventsObserver struct {
	start time.Time
	rec   *observe.Recorder
}

func (r *run) watchEvents(ctx context.Context, o *claims.Object) (*eventsObserver, error) {
	sel := fields.Set{"involvedObject.name": o.Name, "involvedObject.kind": o.Kind}.AsSelector().String()
	lw := cache.NewFilteredListWatchFromClient(r.f.Client.CoreV1().RESTClient(), "events", r.f.Namespace,
		func(opts *metav1.ListOptions) { opts.FieldSelector = sel })
	rec, err := observe.Record(ctx, lw)
	if err != nil {
		return nil, fmt.Errorf("watch the Events of %s: %w", o, err)
	}
	return &eventsObserver{start: r.start, rec: rec}, nil
}

func (o *eventsObserver) evidence() (any, error) {
	ev := claims.EventsEvidence{Events: []claims.EventRecord{}, Reasons: []string{}}
	index := map[string]int{}
	for _, e := range o.rec.Events() {
		k, ok := e.Object.(*corev1.Event)
		if !ok || e.Type == watch.Deleted {
			continue
		}
		count := int(k.Count)
		if k.Series != nil && int(k.Series.Count) > count {
			count = int(k.Series.Count)
		}
		rec := claims.EventRecord{Reason: k.Reason, Type: k.Type, Message: k.Message, Count: max(count, 1),
			Source: firstNonEmpty(k.Source.Component, k.ReportingController), At: ms(o.start, e.Received)}
		if i, seen := index[string(k.UID)]; seen {
			rec.At = ev.Events[i].At
			ev.Events[i] = rec
			continue
		}
		index[string(k.UID)] = len(ev.Events)
		ev.Events = append(ev.Events, rec)
		if !slices.Contains(ev.Reasons, k.Reason) {
			ev.Reasons = append(ev.Reasons, k.Reason)
		}
	}
	ev.Count = len(ev.Events)
	return ev, nil
}

func (o *eventsObserver) stop() { o.rec.Stop() }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// auditObserver reads the audit log from the probe's start.
type auditObserver struct {
	r      *run
	log    *audit.Log
	from   audit.Offset
	filter claims.AuditFilter
	// userRE is the filter's user when it is a regular expression.
	userRE *regexp.Regexp
}

func (r *run) readAudit(f *claims.AuditFilter) (*auditObserver, error) {
	if !r.f.Cluster.Has(cluster.AuditLog) {
		return nil, fmt.Errorf("the cluster's audit log cannot be read here: %s", r.f.Cluster.Missing(cluster.AuditLog))
	}
	log := audit.Open(r.f.Cluster.AuditLogPath)
	from, err := log.Mark()
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	o := &auditObserver{r: r, log: log, from: from, filter: *f}
	if strings.HasPrefix(f.User, "^") {
		// Checked when the file loaded.
		o.userRE = regexp.MustCompile(f.User)
	}
	return o, nil
}

func (o *auditObserver) match(e audit.Event) bool {
	ref := e.ObjectRef
	if ref == nil || ref.Namespace != o.r.f.Namespace {
		return false
	}
	f := o.filter
	user := f.User == "" || e.User.Username == f.User
	if o.userRE != nil {
		user = o.userRE.MatchString(e.User.Username)
	}
	return user && (len(f.Verbs) == 0 || slices.Contains(f.Verbs, e.Verb)) &&
		(f.Resource == "" || ref.Resource == f.Resource) && (f.Subresource == "" || ref.Subresource == f.Subresource) &&
		(f.Name == "" || ref.Name == f.Name)
}

// evidence first makes a request of its own and waits for it in the log:
// the log is written in order, so every request of the probe is in it by
// then.
func (o *auditObserver) evidence() (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.Timeout.Audit)
	defer cancel()
	ns := o.r.f.Namespace
	if _, err := o.r.f.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("a request to find the end of the audit log: %w", err)
	}
	marker := func(e audit.Event) bool {
		return e.Verb == "get" && e.ObjectRef != nil && e.ObjectRef.Resource == "namespaces" && e.ObjectRef.Name == ns
	}
	if _, err := o.log.WaitFor(ctx, o.from, framework.Timeout.Audit, "the probe's own get of namespace "+ns, marker, audit.AtLeast(1)); err != nil {
		return nil, err
	}
	events, err := o.log.Since(o.from, o.match)
	if err != nil {
		return nil, err
	}
	ev := claims.AuditEvidence{Entries: []claims.AuditRecord{}, Codes: []int{}}
	for _, e := range events {
		ref := e.ObjectRef
		ev.Entries = append(ev.Entries, claims.AuditRecord{User: e.User.Username, Verb: e.Verb, Resource: ref.Resource,
			Subresource: ref.Subresource, Name: ref.Name, Code: e.Code(), At: ms(o.r.start, e.RequestReceivedTimestamp)})
		ev.Codes = append(ev.Codes, e.Code())
	}
	ev.Count = len(ev.Entries)
	return ev, nil
}

func (o *auditObserver) stop() {}

// slicesObserver follows a Service's EndpointSlices.
type slicesObserver struct {
	start time.Time
	rec   *observe.Recorder
}

func (r *run) watchSlices(ctx context.Context, s *claims.ServiceRef) (*slicesObserver, error) {
	lw := cache.NewFilteredListWatchFromClient(r.f.Client.DiscoveryV1().RESTClient(), "endpointslices", r.f.Namespace,
		func(opts *metav1.ListOptions) { opts.LabelSelector = discoveryv1.LabelServiceName + "=" + s.Service })
	rec, err := observe.Record(ctx, lw)
	if err != nil {
		return nil, fmt.Errorf("watch the EndpointSlices of Service %s: %w", s.Service, err)
	}
	return &slicesObserver{start: r.start, rec: rec}, nil
}

func (o *slicesObserver) evidence() (any, error) {
	ev := claims.EndpointsEvidence{Versions: []claims.SliceVersion{}, EverReady: []string{}}
	current := map[string]*discoveryv1.EndpointSlice{}
	for _, e := range o.rec.Events() {
		es, ok := e.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		if e.Type == watch.Deleted {
			delete(current, es.Name)
		} else {
			current[es.Name] = es
		}
		v := sliceVersion(current)
		v.At = ms(o.start, e.Received)
		ev.Versions = append(ev.Versions, v)
		for _, p := range v.Ready {
			if !slices.Contains(ev.EverReady, p) {
				ev.EverReady = append(ev.EverReady, p)
			}
		}
	}
	ev.Last = sliceVersion(current)
	if n := len(ev.Versions); n > 0 {
		ev.Last.At = ev.Versions[n-1].At
	}
	return ev, nil
}

// sliceVersion is the endpoints of the slices, by Pod name, sorted.
func sliceVersion(current map[string]*discoveryv1.EndpointSlice) claims.SliceVersion {
	v := claims.SliceVersion{Ready: []string{}, Serving: []string{}, Terminating: []string{}, All: []string{}}
	for _, es := range current {
		for _, ep := range es.Endpoints {
			name := ""
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			v.All = append(v.All, name)
			c := ep.Conditions
			if c.Ready != nil && *c.Ready {
				v.Ready = append(v.Ready, name)
			}
			if c.Serving != nil && *c.Serving {
				v.Serving = append(v.Serving, name)
			}
			if c.Terminating != nil && *c.Terminating {
				v.Terminating = append(v.Terminating, name)
			}
		}
	}
	for _, l := range [][]string{v.Ready, v.Serving, v.Terminating, v.All} {
		sort.Strings(l)
	}
	return v
}

func (o *slicesObserver) stop() { o.rec.Stop() }

// jsonEqual compares two values decoded from JSON.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(jsonValue(a), jsonValue(b)) }

// etcdObserver reads an object from etcd after every step.
type etcdObserver struct {
	r   *run
	obj claims.Object
	ev  claims.EtcdEvidence
	err error
}

func (r *run) readEtcd(o *claims.Object) (*etcdObserver, error) {
	if !r.f.Cluster.Has(cluster.EtcdAccess) {
		return nil, fmt.Errorf("etcd cannot be read here: %s", r.f.Cluster.Missing(cluster.EtcdAccess))
	}
	return &etcdObserver{r: r, obj: *o, ev: claims.EtcdEvidence{FoundAfter: []string{}}}, nil
}

// afterStep reads the object as etcd holds it once step is done.
func (o *etcdObserver) afterStep(ctx context.Context, step string) {
	if o.err != nil {
		return
	}
	kv, found, err := o.find(ctx)
	if err != nil {
		o.err = err
		return
	}
	if found {
		o.ev.Found = true
		o.ev.FoundAfter = append(o.ev.FoundAfter, step)
		o.ev.Key = strings.ReplaceAll(kv.Key, o.r.f.Namespace, "{namespace}")
		o.ev.Encoding = kv.Encoding()
	}
}

func (o *etcdObserver) find(ctx context.Context) (etcd.KeyValue, bool, error) {
	c, err := etcd.New(o.r.f.Cluster.Etcd)
	if err != nil {
		return etcd.KeyValue{}, false, fmt.Errorf("reach etcd: %w", err)
	}
	gv, err := schema.ParseGroupVersion(o.obj.APIVersion)
	if err != nil {
		return etcd.KeyValue{}, false, err
	}
	m, err := o.r.mapper.RESTMapping(gv.WithKind(o.obj.Kind).GroupKind(), gv.Version)
	if err != nil {
		return etcd.KeyValue{}, false, fmt.Errorf("the cluster serves no %s %s: %w", o.obj.APIVersion, o.obj.Kind, err)
	}
	// Built-in resources are stored under their resource name, others
	// under their group too; Find also looks under another --etcd-prefix.
	path := m.Resource.Resource
	if m.Resource.Group != "" && strings.Contains(m.Resource.Group, ".") && !strings.HasSuffix(m.Resource.Group, ".k8s.io") {
		path = m.Resource.Group + "/" + path
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		path += "/" + o.r.f.Namespace
	}
	ctx, cancel := context.WithTimeout(ctx, framework.Timeout.API)
	defer cancel()
	kv, found, err := c.Find(ctx, path+"/"+o.obj.Name)
	if err != nil {
		return kv, false, fmt.Errorf("read %s from etcd: %w", o.obj, err)
	}
	return kv, found, nil
}

func (o *etcdObserver) evidence() (any, error) { return o.ev, o.err }

func (o *etcdObserver) stop() {}

// metricObserver reads a metric at the probe's start and end.
type metricObserver struct {
	r      *run
	ref    claims.MetricRef
	before float64
}

func (r *run) readMetric(ctx context.Context, m *claims.MetricRef) (*metricObserver, error) {
	o := &metricObserver{r: r, ref: *m}
	v, err := o.read(ctx)
	if err != nil {
		return nil, err
	}
	o.before = v
	return o, nil
}

func (o *metricObserver) read(ctx context.Context) (float64, error) {
	client := o.r.f.Client.CoreV1().RESTClient()
	var samples metrics.Samples
	var err error
	if o.ref.Component == "kubelet" {
		node := o.ref.Node
		if node == "" {
			nodes, lerr := o.r.f.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if lerr != nil || len(nodes.Items) == 0 {
				return 0, fmt.Errorf("find a node for the kubelet's metric: %v", lerr)
			}
			node = nodes.Items[0].Name
		}
		samples, err = metrics.Kubelet(ctx, client, node)
	} else {
		samples, err = metrics.Scrape(ctx, client)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s's metrics: %w", o.ref.Component, err)
	}
	return samples.Sum(o.ref.Name, o.ref.Labels), nil
}

func (o *metricObserver) evidence() (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.Timeout.API)
	defer cancel()
	after, err := o.read(ctx)
	if err != nil {
		return nil, err
	}
	return claims.MetricEvidence{Before: o.before, After: after, Change: after - o.before}, nil
}

func (o *metricObserver) stop() {}
