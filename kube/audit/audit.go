// Package audit reads the API server's audit log: who did what, to which
// object, in which order, with the API server's microsecond timestamps. It is
// how checks see requests made by other components (the scheduler's binding,
// the kubelet's status writes, the controllers' creations) and requests
// kubectl really sent.
package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Event is the part of an audit.k8s.io/v1 Event the checks use.
type Event struct {
	Level                    string            `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    string            `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     UserInfo          `json:"user"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *ObjectRef        `json:"objectRef,omitempty"`
	ResponseStatus           *ResponseStatus   `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	RequestReceivedTimestamp time.Time         `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time         `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// UserInfo is the authenticated user as the API server saw it.
type UserInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// ObjectRef names the object a request was about.
type ObjectRef struct {
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Subresource     string `json:"subresource,omitempty"`
}

// ResponseStatus is the outcome of a request.
type ResponseStatus struct {
	Code    int    `json:"code"`
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Code returns the response code (0 when the event has none).
func (e Event) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Summary renders the event for evidence and messages.
func (e Event) Summary() string {
	obj := ""
	if r := e.ObjectRef; r != nil {
		obj = r.Resource
		if r.Subresource != "" {
			obj += "/" + r.Subresource
		}
		if r.Namespace != "" {
			obj += " " + r.Namespace + "/" + r.Name
		} else if r.Name != "" {
			obj += " " + r.Name
		}
	}
	return fmt.Sprintf("%s %s %s by %s -> %d at %s", e.Verb, obj, e.RequestURI, e.User.Username, e.Code(),
		e.RequestReceivedTimestamp.UTC().Format("15:04:05.000000"))
}

// Match selects events.
type Match func(Event) bool

// On selects events about one object (any subresource unless given).
func On(resource, namespace, name, subresource string) Match {
	return func(e Event) bool {
		r := e.ObjectRef
		return r != nil && r.Resource == resource && r.Namespace == namespace &&
			(name == "" || r.Name == name) && (subresource == "*" || r.Subresource == subresource)
	}
}

// InNamespace selects events about objects in namespace ns.
func InNamespace(ns string) Match {
	return func(e Event) bool { return e.ObjectRef != nil && e.ObjectRef.Namespace == ns }
}

// By selects events of one user.
func By(username string) Match { return func(e Event) bool { return e.User.Username == username } }

// Verbs selects events with one of the verbs.
func Verbs(verbs ...string) Match {
	return func(e Event) bool { return slices.Contains(verbs, e.Verb) }
}

// All combines matches.
func All(ms ...Match) Match {
	return func(e Event) bool {
		for _, m := range ms {
			if !m(e) {
				return false
			}
		}
		return true
	}
}

// Log is an audit log file.
type Log struct {
	path string
}

// Open returns the log at path (it need not exist yet).
func Open(path string) *Log { return &Log{path: path} }

// Offset is a position in the log; events before it are someone else's.
type Offset int64

// Mark returns the current end of the log, so that later reads see only
// what happened after it.
func (l *Log) Mark() (Offset, error) {
	fi, err := os.Stat(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return Offset(fi.Size()), nil
}

// final reports whether the event is the one to read for its request: the
// ResponseComplete stage, or for a watch the ResponseStarted stage (a watch
// completes only when it ends, minutes later).
func (e Event) final() bool {
	if e.Verb == "watch" {
		return e.Stage == "ResponseStarted"
	}
	return e.Stage == "ResponseComplete"
}

// Query returns a query parameter of the request URI (decoded).
func (e Event) Query(name string) string {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return ""
	}
	return u.Query().Get(name)
}

// Path returns the request URI without its query.
func (e Event) Path() string {
	path, _, _ := strings.Cut(e.RequestURI, "?")
	return path
}

// Since returns the events after from that match (see final).
func (l *Log) Since(from Offset, match Match) ([]Event, error) {
	events, _, err := l.read(from, match)
	return events, err
}

func (l *Log) read(from Offset, match Match) ([]Event, Offset, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(from), io.SeekStart); err != nil {
		return nil, from, fmt.Errorf("audit log: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var out []Event
	pos := from
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			pos += Offset(len(line))
			var e Event
			if jerr := json.Unmarshal(line, &e); jerr == nil && e.final() && (match == nil || match(e)) {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			// A partial last line is read again next time.
			return out, pos, nil
		}
		if err != nil {
			return out, pos, fmt.Errorf("audit log: %w", err)
		}
	}
}

// WaitFor returns the matching events after from as soon as enough(events)
// holds, waiting for the API server to write more (file notifications, no
// polling), or fails after timeout saying what it saw.
func (l *Log) WaitFor(ctx context.Context, from Offset, timeout time.Duration, what string, match Match, enough func([]Event) bool) ([]Event, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch audit log: %w", err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(l.path)); err != nil {
		return nil, fmt.Errorf("watch audit log: %w", err)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var found []Event
	pos := from
	for {
		events, next, err := l.read(pos, match)
		if err != nil {
			return found, err
		}
		found, pos = append(found, events...), next
		if enough(found) {
			return found, nil
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			return found, fmt.Errorf("watch audit log: %w", err)
		case <-deadline.C:
			return found, fmt.Errorf("timed out after %s waiting in the audit log for %s; matching events seen: %s", timeout, what, summaries(found))
		case <-ctx.Done():
			return found, fmt.Errorf("waiting in the audit log for %s: %w", what, ctx.Err())
		}
	}
}

// AtLeast is an enough function for WaitFor.
func AtLeast(n int) func([]Event) bool { return func(es []Event) bool { return len(es) >= n } }

func summaries(es []Event) string {
	if len(es) == 0 {
		return "none"
	}
	var parts []string
	for _, e := range es {
		parts = append(parts, e.Summary())
	}
	return strings.Join(parts, "; ")
}
