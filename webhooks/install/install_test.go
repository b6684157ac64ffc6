package install

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// The webhook server runs on clusters that enforce the restricted Pod
// Security Standard by default.
func TestServerPodIsRestricted(t *testing.T) {
	podsecuritytest.Passes(t, "the webhook server's Pod", podsecurity.LevelRestricted, metav1.ObjectMeta{},
		serverPod(Options{Webhook: "w", TestApp: "a"}, "--listen=:8443"))
}
