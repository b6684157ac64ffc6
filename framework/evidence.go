package framework

import (
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/etcd"
)

// Checks labels a spec with its ID and the claims it checks; the claims
// catalog names the spec by the same ID.
func Checks(specID string, claimIDs ...string) ginkgo.Labels {
	labels := ginkgo.Labels{claims.SpecLabelPrefix + specID}
	for _, id := range claimIDs {
		labels = append(labels, claims.ClaimLabelPrefix+id)
	}
	return labels
}

// Evidence records an observation for the claims report. The value should
// be JSON-friendly (strings, numbers, booleans, maps, slices, structs with
// exported fields); claims refer to it by name and field path.
func Evidence(name string, value any) {
	ginkgo.AddReportEntry(claims.EvidencePrefix+name, value, ginkgo.ReportEntryVisibilityFailureOrVerbose)
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
	if !f.Cluster.Has(cluster.AuditLog) {
		return nil, 0
	}
	l := audit.Open(f.Cluster.AuditLogPath)
	from, err := l.Mark()
	ExpectNoError(err, "read the audit log")
	return l, from
}

// Etcd returns a client for the cluster's etcd, or nil without access.
func (f *Framework) Etcd() *etcd.Client {
	if !f.Cluster.Has(cluster.EtcdAccess) {
		return nil
	}
	c, err := etcd.New(f.Cluster.Etcd)
	ExpectNoError(err, "reach etcd")
	return c
}

// AuditTimeout bounds a wait for a request to appear in the audit log.
const AuditTimeout = time.Minute
