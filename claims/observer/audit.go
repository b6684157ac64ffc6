package observer

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/audit"
)

// Audit are the API server's audit entries of the probe's namespace that
// match a filter (needs the AuditLog capability); an empty field matches
// any.
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

func (a *Audit) Validate() []string {
	if strings.HasPrefix(a.User, "^") {
		if _, err := regexp.Compile(a.User); err != nil {
			return []string{fmt.Sprintf("user: %v", err)}
		}
	}
	return nil
}

func (a *Audit) Evidence() reflect.Type { return reflect.TypeFor[AuditEvidence]() }

func (a *Audit) Explain(n string, put Explainer) {
	put(n, "The API server's audit entries of the probe's namespace that match the observer's filter.")
	put(n+".entries", "The matching audit entries, in the order received.")
	for f, text := range map[string]string{"user": "The requesting user.", "verb": "The request's verb.", "resource": "The resource.",
		"subresource": "The subresource, if any.", "name": "The object's name.", "code": "The response's HTTP status.", "at": "When the request was received (ms)."} {
		put(n+".entries.0."+f, "%s", text)
	}
	put(n+".codes", "The response codes of the matching entries, in order.")
	put(n+".codes.0", "One response code.")
	put(n+".count", "How many audit entries matched.")
}

// auditRecorder reads the audit log from the probe's start.
type auditRecorder struct {
	env    *Env
	log    *audit.Log
	from   audit.Offset
	filter Audit
	// userRE is the filter's user when it is a regular expression.
	userRE *regexp.Regexp
}

func (a *Audit) Start(_ context.Context, env *Env) (Recorder, error) {
	log := audit.Open(env.Cluster.AuditLogPath)
	from, err := log.Mark()
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	r := &auditRecorder{env: env, log: log, from: from, filter: *a}
	if strings.HasPrefix(a.User, "^") {
		// Checked when the file loaded.
		r.userRE = regexp.MustCompile(a.User)
	}
	return r, nil
}

func (r *auditRecorder) match(e audit.Event) bool {
	ref := e.ObjectRef
	if ref == nil || ref.Namespace != r.env.Namespace {
		return false
	}
	f := r.filter
	user := f.User == "" || e.User.Username == f.User
	if r.userRE != nil {
		user = r.userRE.MatchString(e.User.Username)
	}
	return user && (len(f.Verbs) == 0 || slices.Contains(f.Verbs, e.Verb)) &&
		(f.Resource == "" || ref.Resource == f.Resource) && (f.Subresource == "" || ref.Subresource == f.Subresource) &&
		(f.Name == "" || ref.Name == f.Name)
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
	ev := AuditEvidence{Entries: []AuditRecord{}, Codes: []int{}}
	for _, e := range events {
		ref := e.ObjectRef
		ev.Entries = append(ev.Entries, AuditRecord{User: e.User.Username, Verb: e.Verb, Resource: ref.Resource,
			Subresource: ref.Subresource, Name: ref.Name, Code: e.Code(), At: r.env.Millis(e.RequestReceivedTimestamp)})
		ev.Codes = append(ev.Codes, e.Code())
	}
	ev.Count = len(ev.Entries)
	return ev, nil
}

func (r *auditRecorder) Stop() {}
