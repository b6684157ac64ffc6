package observer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeproof/kubeproof/kube/audit"
)

// Audit are the API server's audit entries that match a filter (needs the
// AuditLog capability): by default those about objects of the probe's
// namespace; an empty field matches any.
type Audit struct {
	// User is the username (system:serviceaccount:..., kubernetes-admin),
	// or a regular expression when it starts with ^.
	User string `json:"user,omitempty"`
	// Verbs are the verbs (create, update, patch, delete, get, list, watch).
	Verbs []string `json:"verbs,omitempty"`
	// Resource, Subresource and Name of the object.
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
	// Scope is which requests are looked at: namespace (the default:
	// about objects of the probe's namespace), cluster (about cluster-scoped
	// objects, Nodes or ClusterRoles, and requests for no object at all,
	// /healthz or /version), or both. Other runs' requests are in the log
	// too: a cluster-scoped filter names the user or the object.
	Scope string `json:"scope,omitempty"`
	// URI, a regular expression, matches the request's URI, path and query
	// (/api/v1/namespaces/{namespace}/pods?fieldSelector=...; the probe's
	// namespace reads {namespace}).
	URI string `json:"uri,omitempty"`
	// Body maps a name (letters, digits) to a JSONPath into the object the
	// request sent ({.spec.nodeName}), for the requests the audit policy
	// records it of (kubeproof's clusters: create, update, patch, delete;
	// never Secrets): entries.N.body.<name>, null where it has none.
	Body map[string]string `json:"body,omitempty"`
}

// Audit scopes.
const (
	ScopeNamespace = "namespace"
	ScopeCluster   = "cluster"
	ScopeBoth      = "both"
)

// AuditRecord is one audit entry that matched.
type AuditRecord struct {
	// User is the requesting user's name.
	User string `json:"user"`
	// Verb, Resource, Subresource, Name as the audit entry has them.
	Verb        string `json:"verb"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Name        string `json:"name"`
	// Namespace is the object's namespace ({namespace} for the probe's;
	// empty for a cluster-scoped object or none).
	Namespace string `json:"namespace"`
	// URI is the request's URI ({namespace} for the probe's namespace),
	// Query its query's parameters (several values joined with commas).
	URI   string            `json:"uri"`
	Query map[string]string `json:"query"`
	// Code is the response's HTTP status; Reason and Message those of a
	// failed request (who refused it, and why).
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// At is when the request was received (ms).
	At float64 `json:"at"`
}

// AuditEvidence is what an audit observer records.
type AuditEvidence struct {
	// Entries are the matching entries, in the order received.
	Entries []AuditRecord `json:"entries"`
	// Codes are their response codes, in order.
	Codes []int `json:"codes"`
	// Users and Verbs are the distinct users and verbs, in the order
	// first seen.
	Users []string `json:"users"`
	Verbs []string `json:"verbs"`
	// Count is the number of matching entries.
	Count int `json:"count"`
}

func (a *Audit) Validate() []string {
	var errs []string
	if strings.HasPrefix(a.User, "^") {
		if _, err := regexp.Compile(a.User); err != nil {
			errs = append(errs, fmt.Sprintf("user: %v", err))
		}
	}
	if a.URI != "" {
		if _, err := regexp.Compile(a.URI); err != nil {
			errs = append(errs, fmt.Sprintf("uri: %v", err))
		}
	}
	if !slices.Contains([]string{"", ScopeNamespace, ScopeCluster, ScopeBoth}, a.Scope) {
		errs = append(errs, fmt.Sprintf("audit scope %q is not namespace, cluster or both", a.Scope))
	}
	return append(errs, validateFields("body", a.Body)...)
}

// Evidence is AuditEvidence, with each entry's body of the fields Body
// names.
func (a *Audit) Evidence() reflect.Type {
	if len(a.Body) == 0 {
		return reflect.TypeFor[AuditEvidence]()
	}
	names := slices.Sorted(maps.Keys(a.Body))
	entry := slices.Clone(reflect.VisibleFields(reflect.TypeFor[AuditRecord]()))
	entry = append(entry, reflect.StructField{Name: "Body", Type: structOf(names, reflect.TypeFor[any]()), Tag: `json:"body"`})
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(reflect.TypeFor[AuditEvidence]()) {
		if f.Name == "Entries" {
			f.Type = reflect.SliceOf(reflect.StructOf(entry))
		}
		out = append(out, f)
	}
	return reflect.StructOf(out)
}

func (a *Audit) Explain(n string, put Explainer) {
	put(n, "The API server's audit entries (%s) that match the observer's filter.", map[string]string{"": "about objects of the probe's namespace",
		ScopeNamespace: "about objects of the probe's namespace", ScopeCluster: "about cluster-scoped objects or none", ScopeBoth: "about objects of the probe's namespace, cluster-scoped objects or none"}[a.Scope])
	put(n+".entries", "The matching audit entries, in the order received.")
	for f, text := range map[string]string{"user": "The requesting user.", "verb": "The request's verb.", "resource": "The resource.",
		"subresource": "The subresource, if any.", "name": "The object's name.", "namespace": "The object's namespace ({namespace}: the probe's; empty: cluster-scoped).",
		"uri": "The request's URI, path and query ({namespace}: the probe's).", "query": "The query's parameters, each a string (several values joined with commas).",
		"query.{key}": "One parameter's value.", "code": "The response's HTTP status.", "reason": "A failed request's status reason (Forbidden, Invalid).",
		"message": "A failed request's status message: who refused it, and why.", "at": "When the request was received (ms)."} {
		put(n+".entries.0."+f, "%s", text)
	}
	if len(a.Body) > 0 {
		put(n+".entries.0.body", "Fields of the object the request sent (null where the log has none).")
		for f, jp := range a.Body {
			put(n+".entries.0.body."+f, "%s in the object the request sent (%s).", f, jp)
		}
	}
	put(n+".codes", "The response codes of the matching entries, in order.")
	put(n+".codes.0", "One response code.")
	put(n+".users", "The distinct users of the matching entries, in the order first seen.")
	put(n+".users.0", "One user.")
	put(n+".verbs", "The distinct verbs of the matching entries, in the order first seen.")
	put(n+".verbs.0", "One verb.")
	put(n+".count", "How many audit entries matched.")
}

// auditRecorder reads the audit log from the probe's start.
type auditRecorder struct {
	env    *Env
	log    *audit.Log
	from   audit.Offset
	filter Audit
	// userRE is the filter's user when it is a regular expression; uriRE
	// its URI.
	userRE, uriRE *regexp.Regexp
	// body reads the fields of a request's object.
	body *objectRecorder
}

func (a *Audit) Start(_ context.Context, env *Env) (Recorder, error) {
	log := audit.Open(env.Cluster.AuditLogPath)
	from, err := log.Mark()
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	r := &auditRecorder{env: env, log: log, from: from, filter: *a}
	// Checked when the file loaded.
	if strings.HasPrefix(a.User, "^") {
		r.userRE = regexp.MustCompile(a.User)
	}
	if a.URI != "" {
		r.uriRE = regexp.MustCompile(a.URI)
	}
	if len(a.Body) > 0 {
		if r.body, err = newObjectRecorder(env, a.Body); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// inScope says whether an entry is about what the filter's scope looks at.
func (r *auditRecorder) inScope(e audit.Event) bool {
	ns := ""
	if e.ObjectRef != nil {
		ns = e.ObjectRef.Namespace
	}
	switch r.filter.Scope {
	case ScopeCluster:
		return ns == ""
	case ScopeBoth:
		return ns == "" || ns == r.env.Namespace
	}
	return e.ObjectRef != nil && ns == r.env.Namespace
}

func (r *auditRecorder) match(e audit.Event) bool {
	if !r.inScope(e) {
		return false
	}
	ref := e.ObjectRef
	if ref == nil {
		ref = &audit.ObjectRef{}
	}
	f := r.filter
	user := f.User == "" || e.User.Username == f.User
	if r.userRE != nil {
		user = r.userRE.MatchString(e.User.Username)
	}
	return user && (len(f.Verbs) == 0 || slices.Contains(f.Verbs, e.Verb)) &&
		(f.Resource == "" || ref.Resource == f.Resource) && (f.Subresource == "" || ref.Subresource == f.Subresource) &&
		(f.Name == "" || ref.Name == f.Name) && (r.uriRE == nil || r.uriRE.MatchString(r.placeholders(e.RequestURI)))
}

// placeholders writes the probe's namespace as {namespace}, as evidence
// names it.
func (r *auditRecorder) placeholders(s string) string {
	return strings.ReplaceAll(s, r.env.Namespace, "{namespace}")
}

// Evidence first makes a request of its own and waits for it in the log:
// the log is written in order, so every request of the probe is in it by
// then.
func (r *auditRecorder) Evidence() (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.env.AuditTimeout)
	defer cancel()
	ns := r.env.Namespace
	if _, err := r.env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("a request to find the end of the audit log: %w", err)
	}
	marker := func(e audit.Event) bool {
		return e.Verb == "get" && e.ObjectRef != nil && e.ObjectRef.Resource == "namespaces" && e.ObjectRef.Name == ns
	}
	if _, err := r.log.WaitFor(ctx, r.from, r.env.AuditTimeout, "the probe's own get of namespace "+ns, marker, audit.AtLeast(1)); err != nil {
		return nil, err
	}
	events, err := r.log.Since(r.from, r.match)
	if err != nil {
		return nil, err
	}
	ev := AuditEvidence{Entries: []AuditRecord{}, Codes: []int{}, Users: []string{}, Verbs: []string{}}
	var bodies []map[string]any
	for _, e := range events {
		rec := r.record(e)
		ev.Entries = append(ev.Entries, rec)
		ev.Codes = append(ev.Codes, rec.Code)
		if !slices.Contains(ev.Users, rec.User) {
			ev.Users = append(ev.Users, rec.User)
		}
		if !slices.Contains(ev.Verbs, rec.Verb) {
			ev.Verbs = append(ev.Verbs, rec.Verb)
		}
		if r.body != nil {
			bodies = append(bodies, r.bodyOf(e))
		}
	}
	ev.Count = len(ev.Entries)
	if r.body == nil {
		return ev, nil
	}
	// Entries with a body: the record's fields and body, as the type
	// Evidence declares them.
	out := jsonValue(ev).(map[string]any)
	entries := out["entries"].([]any)
	for i := range entries {
		entries[i].(map[string]any)["body"] = bodies[i]
	}
	return out, nil
}

// record is one matching entry as evidence.
func (r *auditRecorder) record(e audit.Event) AuditRecord {
	ref := e.ObjectRef
	if ref == nil {
		ref = &audit.ObjectRef{}
	}
	rec := AuditRecord{User: e.User.Username, Verb: e.Verb, Resource: ref.Resource, Subresource: ref.Subresource, Name: ref.Name,
		Namespace: ref.Namespace, URI: r.placeholders(e.RequestURI), Query: map[string]string{}, Code: e.Code(),
		At: r.env.Millis(e.RequestReceivedTimestamp)}
	if rec.Namespace == r.env.Namespace {
		rec.Namespace = "{namespace}"
	}
	if u, err := url.ParseRequestURI(e.RequestURI); err == nil {
		for k, vs := range u.Query() {
			rec.Query[k] = strings.Join(vs, ",")
		}
	}
	if st := e.ResponseStatus; st != nil {
		rec.Reason, rec.Message = st.Reason, r.placeholders(st.Message)
	}
	return rec
}

// bodyOf reads the body's fields from the object an entry sent (every
// field null when the log has none).
func (r *auditRecorder) bodyOf(e audit.Event) map[string]any {
	var obj map[string]any
	if len(e.RequestObject) > 0 && json.Unmarshal(e.RequestObject, &obj) == nil {
		return r.body.values(&unstructured.Unstructured{Object: obj})
	}
	return r.body.values(nil)
}

func (r *auditRecorder) Stop() {}
