package apiserver

import (
	"context"
	"errors"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/framework"
)

// The spec of this file. It stops etcd, which every other spec needs: it
// runs alone.
const specEtcdStopped = "apiserver-etcd-stopped"

// writeWindow is how long a create may take while etcd is stopped: the
// API server keeps retrying etcd for its own request timeout (a minute by
// default), so no answer within the window means nothing was stored yet.
const writeWindow = 5 * time.Second

var _ = ginkgo.Describe("API server without etcd", ginkgo.Serial, func() {
	f := framework.New("no-etcd")

	ginkgo.It("with etcd stopped nothing is stored; once it is back, the same create succeeds",
		framework.Checks(specEtcdStopped, "002-ETCD-NOTHING-WORKS"),
		func(ctx ginkgo.SpecContext) {
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			cm := func() *corev1.ConfigMap {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-etcd-stopped"}, Data: map[string]string{"stored": "when etcd is back"}}
			}
			start := f.StopComponent(ctx, "etcd")

			ginkgo.By("a create while etcd is stopped")
			ev := etcdStoppedEvidence{WindowSeconds: writeWindow.Seconds()}
			wctx, cancel := context.WithTimeout(ctx, writeWindow)
			began := time.Now()
			_, err := cms.Create(wctx, cm(), metav1.CreateOptions{})
			cancel()
			ev.WriteMs = framework.Millis(time.Since(began))
			ev.WriteOutcome = outcome(err)
			ev.WriteAccepted = err == nil

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
})

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
	WindowSeconds float64 `json:"windowSeconds"`
	// WriteAccepted: the API server answered the create with success
	// while etcd was stopped.
	WriteAccepted bool    `json:"writeAccepted"`
	WriteOutcome  string  `json:"writeOutcome"`
	WriteMs       float64 `json:"writeMs"`
	// StoredWhileStopped: the object existed once etcd was back (the
	// refused create had stored it after all).
	StoredWhileStopped  bool    `json:"storedWhileStopped"`
	StoredAfterRestart  bool    `json:"storedAfterRestart"`
	AfterRestartOutcome string  `json:"afterRestartOutcome"`
	RecoveredAfterMs    float64 `json:"recoveredAfterMs"`
}

var etcdStopped = framework.DeclareEvidence[etcdStoppedEvidence]("etcdStopped", specEtcdStopped)
