package framework

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/record"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/etcd"
)

// Checks labels a spec with its ID, with a claim:<id> label for each
// claim the catalog names it for, and with what it needs of the cluster
// beyond the API (Requires, Uses, Disturbs), declared here beside its ID
// so that the evidence catalog and a reader see it without running it.
// The link to claims is written once, in the catalog (each claim's
// specs:); the claim labels follow from it, so that a label filter on
// claims (--label-filter 'claim:002-RUNNING-STATUS', a regular expression,
// a set) selects their specs as Ginkgo reads the filter.
func Checks(specID string, needs ...Need) ginkgo.Labels {
	labels := ginkgo.Labels{speclink.SpecLabelPrefix + specID}
	if cat, err := builtinCatalog(); err == nil {
		for _, id := range cat.ClaimsOf(specID) {
			labels = append(labels, speclink.ClaimLabelPrefix+id)
		}
	}
	for _, n := range needs {
		labels = append(labels, n.label)
		if n.disturbs != "" {
			disturbing.Store(specID, n.disturbs)
		}
	}
	return labels
}

// builtinCatalog is the catalog this binary carries, read once: it says
// which claims each spec checks.
var builtinCatalog = sync.OnceValues(func() (*claims.Catalog, error) {
	return claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
})

// specInfo is a spec as its labels and the catalog describe it.
func specInfo(name string, labels []string) speclink.SpecInfo {
	s := speclink.SpecsFromLabels(name, labels)
	if cat, err := builtinCatalog(); err == nil {
		// A catalog that does not load fails its own tests and every
		// command that loads it; here the spec just names no claims.
		s.Claims = cat.ClaimsOf(s.ID)
	}
	return s
}

// Evidence is one named observation that specs record for the claims
// report, of type T. Claims refer to it by name and then by the JSON names
// of T's fields ("stored.nodeName"); because T is declared, a unit test
// (the catalog test) finds a claim that names a path no spec records, and
// the compiler finds a spec that records the wrong shape.
type Evidence[T any] struct {
	name  string
	specs []string
}

var (
	evidenceMu    sync.Mutex
	evidenceDecls []evidence.EvidenceDecl
)

// DeclareEvidence declares that the named specs record evidence name of
// type T. Declare it at package level, next to the specs.
func DeclareEvidence[T any](name string, specs ...string) Evidence[T] {
	t := reflect.TypeFor[T]()
	at := callerSource()
	evidenceMu.Lock()
	defer evidenceMu.Unlock()
	for _, s := range specs {
		for _, d := range evidenceDecls {
			if d.Spec == s && d.Name == name {
				panic(fmt.Sprintf("evidence %q of spec %s is declared twice", name, s))
			}
		}
		evidenceDecls = append(evidenceDecls, evidence.EvidenceDecl{Spec: s, Name: name, Type: t, Source: at})
	}
	return Evidence[T]{name: name, specs: specs}
}

// DeclaredEvidence returns every evidence declaration of this binary's specs.
func DeclaredEvidence() []evidence.EvidenceDecl {
	evidenceMu.Lock()
	defer evidenceMu.Unlock()
	return slices.Clone(evidenceDecls)
}

// Record records v for the claims report. Recording evidence that is not
// declared for the running spec is a harness bug and fails the spec.
func (e Evidence[T]) Record(v T) {
	ginkgo.GinkgoHelper()
	if id := CurrentSpecID(); !slices.Contains(e.specs, id) {
		ginkgo.Fail(fmt.Sprintf("harness bug: spec %q records evidence %q, declared only for %s", id, e.name, strings.Join(e.specs, ", ")))
	}
	RecordProbeEvidence(e.name, v)
}

// writeRecord reports r to the judge.
func writeRecord(r record.Record, visibility ginkgo.ReportEntryVisibility) {
	ginkgo.AddReportEntry(record.RecordEntry, r, visibility)
}

// Unobservable records that the running spec cannot observe this
// evidence on this cluster, and why (what it depends on did not hold: the
// user was not unauthorized after all, RBAC did not answer). Claims that
// need the evidence are then not checkable, with that reason; the spec
// goes on to observe what it can.
func (e Evidence[T]) Unobservable(reason string, args ...any) {
	ginkgo.GinkgoHelper()
	if len(args) > 0 {
		reason = fmt.Sprintf(reason, args...)
	}
	ProbeUnobservable(e.name, reason)
}

// CurrentSpecID is the ID (spec:<id> label) of the running spec.
func CurrentSpecID() string {
	for _, l := range ginkgo.CurrentSpecReport().Labels() {
		if id, ok := strings.CutPrefix(l, speclink.SpecLabelPrefix); ok {
			return id
		}
	}
	return ""
}

// Millis is a duration in milliseconds, with microsecond precision, for
// timing evidence.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Generalize replaces the spec's own names in s (its namespace, the node) by
// placeholders, so that evidence can be compared with a document's example.
func (f *Framework) Generalize(s string, names map[string]string) string {
	s = strings.ReplaceAll(s, f.Namespace, "{namespace}")
	for value, placeholder := range names {
		if value != "" {
			s = strings.ReplaceAll(s, value, placeholder)
		}
	}
	return s
}

// AuditLog returns the API server's audit log and its current end, or nil
// when the cluster does not offer it.
func (f *Framework) AuditLog() (*audit.Log, audit.Offset) {
	ginkgo.GinkgoHelper()
	if !f.Has(cluster.AuditLog) {
		return nil, 0
	}
	l := audit.Open(f.Cluster.AuditLogPath)
	from, err := l.Mark()
	ExpectNoError(err, "read the audit log")
	return l, from
}

// Etcd returns a client for the cluster's etcd, or nil without access.
func (f *Framework) Etcd() *etcd.Client {
	ginkgo.GinkgoHelper()
	if !f.Has(cluster.EtcdAccess) {
		return nil
	}
	c, err := etcd.New(f.Cluster.Etcd)
	ExpectNoError(err, "reach etcd")
	return c
}

// Samples is a timing measured several times: the median is what a timing
// claim is judged on, the spread is there to be read beside it. Without
// samples there is no median (nil): a claim judged on it is not checkable,
// never refuted by a zero nobody measured.
type Samples struct {
	// Median of the values (the mean of the middle two for an even
	// count); absent without values.
	Median *float64 `json:"median,omitempty"`
	// Min is the smallest value; absent without values.
	Min *float64 `json:"min,omitempty"`
	// Max is the largest value; absent without values.
	Max *float64 `json:"max,omitempty"`
	// N is how many values were measured.
	N int `json:"n"`
	// Values are the measurements, in the order they were taken.
	Values []float64 `json:"values"`
}

// NewSamples summarizes values (in the order measured).
func NewSamples(values []float64) Samples {
	s := Samples{N: len(values), Values: slices.Clone(values)}
	if len(values) == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(values))
	median := sorted[len(sorted)/2]
	if n := len(sorted); n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	s.Min, s.Max, s.Median = &sorted[0], &sorted[len(sorted)-1], &median
	return s
}

// Manifest is one of kubeproof's manifests (fixtures) as the cluster gets
// it: with our images taken from the run's registry, if it has one.
func Manifest(name string) []byte { return images.Rewrite(fixtures.MustRead(name)) }

// RecordProbeEvidence records v as evidence name of the running spec. A
// probe calls it directly: its evidence is declared by its claims file
// (probe.Probe.Evidence) and checked by lint, not by DeclareEvidence;
// Evidence.Record calls it once the declaration is checked.
func RecordProbeEvidence(name string, v any) {
	ginkgo.GinkgoHelper()
	if _, err := json.Marshal(v); err != nil {
		ginkgo.Fail(fmt.Sprintf("harness bug: evidence %q does not encode as JSON, so the judge cannot read it: %v", name, err))
	}
	writeRecord(record.Record{Kind: record.EvidenceRecord, Name: name, Value: v}, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// ProbeUnobservable records that a probe cannot observe its evidence name
// on this cluster, and why: its claims are then not checkable, with that
// reason.
func ProbeUnobservable(name, reason string) {
	writeRecord(record.Record{Kind: record.UnobservableRecord, Name: name, Reason: reason}, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}
