package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
)

// The specs of this file. They stop etcd or members of it, which every
// other spec needs: they run alone.
const (
	specEtcdStopped = "apiserver-etcd-stopped"
	specEtcdQuorum  = "apiserver-etcd-quorum"
)

// writeWindow is how long a create may take while etcd is stopped: the
// API server keeps retrying etcd for its own request timeout (a minute by
// default), so no answer within the window means nothing was stored yet.
const writeWindow = 5 * time.Second

var _ = ginkgo.Describe("API server without etcd", ginkgo.Serial, func() {
	f := framework.New("no-etcd")

	ginkgo.It("with etcd stopped nothing is stored and what runs goes on running; once it is back, the same create succeeds",
		framework.Checks(specEtcdStopped, framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			ginkgo.By("a Pod behind a Service, served before etcd stops")
			workload := startServedWorkload(ctx, f)
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			cm := func() *corev1.ConfigMap {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-etcd-stopped"}, Data: map[string]string{"stored": "when etcd is back"}}
			}
			// An object stored before etcd stops, and in the API server's
			// watch cache (a read with resourceVersion=0 returns it): what
			// can still be read without etcd?
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-etcd-stopped"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ConfigMap before etcd stops")
			framework.ExpectNoError(wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				_, err := cms.Get(ctx, "before-etcd-stopped", metav1.GetOptions{ResourceVersion: "0"})
				return err == nil, nil
			}), "the API server's cache serves the ConfigMap made before etcd stops")
			start := f.StopComponent(ctx, "etcd")
			stopped := time.Now()

			ev := etcdStoppedEvidence{WindowSeconds: writeWindow.Seconds()}
			ginkgo.By("reads while etcd is stopped: from the API server's cache, and of the latest state")
			read := func(rv string) (bool, string) {
				rctx, cancel := context.WithTimeout(ctx, writeWindow)
				defer cancel()
				_, err := cms.Get(rctx, "before-etcd-stopped", metav1.GetOptions{ResourceVersion: rv})
				if err == nil {
					return true, "served"
				}
				return false, outcome(err)
			}
			ev.CachedReadServed, ev.CachedReadOutcome = read("0")
			ev.LatestReadServed, ev.LatestReadOutcome = read("")

			ginkgo.By("a create while etcd is stopped")
			wctx, cancel := context.WithTimeout(ctx, writeWindow)
			began := time.Now()
			_, err = cms.Create(wctx, cm(), metav1.CreateOptions{})
			cancel()
			ev.WriteMs = framework.Millis(time.Since(began))
			ev.WriteOutcome = outcome(err)
			ev.WriteAccepted = err == nil

			ginkgo.By("what ran before: the Pod on its own port, and its Service, through the node's runtime")
			workload.observe(ctx, f, stopped)

			restarted := time.Now()
			if err := start(ctx); err != nil {
				framework.Unmet("etcd", "etcd started again", err.Error())
			}
			ginkgo.By("the same object, once etcd is back")
			// Whether the refused create left anything behind, then the
			// create again; the API server reconnects to etcd on its own
			// schedule, so both are asked until they get an answer.
			var lastErr error
			err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				_, lastErr = cms.Get(ctx, "while-etcd-stopped", metav1.GetOptions{})
				return lastErr == nil || apierrors.IsNotFound(lastErr), nil
			})
			if err != nil {
				framework.Unmet("kube-apiserver", "the API server answered again after etcd was back", outcome(lastErr))
			}
			ev.StoredWhileStopped = lastErr == nil
			if !ev.StoredWhileStopped {
				_, lastErr = cms.Create(ctx, cm(), metav1.CreateOptions{})
				ev.StoredAfterRestart = lastErr == nil
				ev.AfterRestartOutcome = outcome(lastErr)
				ev.RecoveredAfterMs = framework.Millis(time.Since(restarted))
			}
			etcdStopped.Record(ev)
		})

	ginkgo.It("with three etcd members a write is committed while one is stopped, and not while two are",
		framework.Checks(specEtcdQuorum, framework.Requires(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
			if n := len(f.Cluster.Etcd.Endpoints); n != 3 {
				ginkgo.Skip(fmt.Sprintf("etcd has %d member(s) here; the majority of three needs a cluster made with --etcd-members 3 (local provider)", n))
			}
			ev := etcdQuorumEvidence{Members: 3, WindowSeconds: writeWindow.Seconds()}
			// The prefix the API server stores under (another --etcd-prefix
			// is not /registry/), found while a majority answers.
			prefix, err := f.Etcd().Prefix(ctx, f.Namespace)
			framework.ExpectNoError(err, "find where the API server stores in etcd")
			startFirst := f.StopComponent(ctx, "etcd-1")
			ginkgo.By("one member of three stopped: a create")
			ev.OneStoppedAccepted, ev.OneStoppedOutcome, ev.OneStoppedMs = createWithin(ctx, f, "one-stopped")
			startSecond := f.StopComponent(ctx, "etcd-2")
			ginkgo.By("two members of three stopped: a create")
			ev.TwoStoppedAccepted, ev.TwoStoppedOutcome, ev.TwoStoppedMs = createWithin(ctx, f, "two-stopped")
			// What the member still running has applied: only what a
			// majority committed.
			committed, err := f.Etcd().GetLocal(ctx, prefix+"configmaps/"+f.Namespace+"/two-stopped")
			framework.ExpectNoError(err, "read the running member's own store")
			ev.TwoStoppedCommitted = committed
			for name, start := range map[string]func(context.Context) error{"etcd-2": startSecond, "etcd-1": startFirst} {
				if err := start(ctx); err != nil {
					framework.Unmet("etcd", name+" started again", err.Error())
				}
			}
			ginkgo.By("all three back: what was stored, and a create")
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			var lastErr error
			err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				_, lastErr = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "all-back"}}, metav1.CreateOptions{})
				return lastErr == nil, nil
			})
			// Recorded either way: a create that fails for the whole window
			// with every member back refutes the claim, with what was said.
			ev.StoredAfterRestart, ev.AfterRestartOutcome = err == nil, outcome(lastErr)
			_, err = cms.Get(ctx, "two-stopped", metav1.GetOptions{})
			ev.TwoStoppedStored = err == nil
			etcdQuorum.Record(ev)
		})
})

// createWithin creates a ConfigMap named name, waiting for an answer at most
// writeWindow, and says how it ended.
func createWithin(ctx context.Context, f *framework.Framework, name string) (accepted bool, how string, ms float64) {
	wctx, cancel := context.WithTimeout(ctx, writeWindow)
	defer cancel()
	began := time.Now()
	_, err := f.Client.CoreV1().ConfigMaps(f.Namespace).Create(wctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err == nil, outcome(err), framework.Millis(time.Since(began))
}

// outcome says how a request ended: "created", the API server's status,
// or that no answer came in time.
func outcome(err error) string {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return "created"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the window"
	case errors.As(err, &status):
		s := status.Status()
		return string(s.Reason) + ": " + s.Message
	}
	return err.Error()
}

// Evidence: what the specs above record, under the names the claims files use.

// A create while etcd was stopped, and the same create once it was back.
type etcdStoppedEvidence struct {
	// WindowSeconds is how long each request while etcd was stopped waited
	// for an answer.
	WindowSeconds float64 `json:"windowSeconds"`
	// WriteAccepted: the API server answered the create with success
	// while etcd was stopped.
	WriteAccepted bool `json:"writeAccepted"`
	// WriteOutcome is how the create ended ("created", the Status reason and
	// message, or no answer within the window); WriteMs how long it took.
	WriteOutcome string  `json:"writeOutcome"`
	WriteMs      float64 `json:"writeMs"`
	// StoredWhileStopped: the object existed once etcd was back (the
	// refused create had stored it after all).
	StoredWhileStopped bool `json:"storedWhileStopped"`
	// StoredAfterRestart: the create made again once etcd was back succeeded
	// (tried only if the first left nothing); AfterRestartOutcome is how it
	// ended; RecoveredAfterMs the time from the restart to that answer.
	StoredAfterRestart  bool    `json:"storedAfterRestart"`
	AfterRestartOutcome string  `json:"afterRestartOutcome"`
	RecoveredAfterMs    float64 `json:"recoveredAfterMs"`
	// CachedReadServed: a GET with resourceVersion=0 (any state the API
	// server has) of an object stored before etcd stopped was answered
	// while it was stopped; LatestReadServed: the same GET of the latest
	// state (no resourceVersion). Each waited at most WindowSeconds.
	CachedReadServed bool `json:"cachedReadServed"`
	// CachedReadOutcome and LatestReadOutcome are how those GETs ended
	// ("served" or why not).
	CachedReadOutcome string `json:"cachedReadOutcome"`
	LatestReadServed  bool   `json:"latestReadServed"`
	LatestReadOutcome string `json:"latestReadOutcome"`
}

// Creates on a three-member etcd with one, then two members stopped.
type etcdQuorumEvidence struct {
	// Members is how many etcd members the cluster has (3).
	Members int `json:"members"`
	// WindowSeconds is how long each create waited for an answer.
	WindowSeconds float64 `json:"windowSeconds"`
	// OneStoppedAccepted, OneStoppedOutcome and OneStoppedMs: a create with
	// one member stopped succeeded, how it ended, how long it took.
	OneStoppedAccepted bool    `json:"oneStoppedAccepted"`
	OneStoppedOutcome  string  `json:"oneStoppedOutcome"`
	OneStoppedMs       float64 `json:"oneStoppedMs"`
	// TwoStoppedAccepted, TwoStoppedOutcome and TwoStoppedMs: the same with
	// two members stopped.
	TwoStoppedAccepted bool    `json:"twoStoppedAccepted"`
	TwoStoppedOutcome  string  `json:"twoStoppedOutcome"`
	TwoStoppedMs       float64 `json:"twoStoppedMs"`
	// TwoStoppedCommitted: the running member had applied the create made
	// with two members stopped (read from its own store at once).
	TwoStoppedCommitted bool `json:"twoStoppedCommitted"`
	// TwoStoppedStored: that create was found once the members were back
	// (a leader's proposal is committed when a majority returns).
	TwoStoppedStored bool `json:"twoStoppedStored"`
	// StoredAfterRestart: a create succeeded within Timeout.API once all
	// members were back; AfterRestartOutcome is how the last try ended.
	StoredAfterRestart  bool   `json:"storedAfterRestart"`
	AfterRestartOutcome string `json:"afterRestartOutcome"`
}

var (
	etcdStopped = framework.DeclareEvidence[etcdStoppedEvidence]("etcdStopped", specEtcdStopped)
	etcdQuorum  = framework.DeclareEvidence[etcdQuorumEvidence]("etcdQuorum", specEtcdQuorum)
)
