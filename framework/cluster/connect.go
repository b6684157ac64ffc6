package cluster

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// RESTConfig loads a kubeconfig file (and optionally a context in it). Errors
// carry exitcode.Kubeconfig: the file is missing, unreadable or invalid.
func RESTConfig(path, kubeContext string) (*rest.Config, error) {
	if path == "" {
		return nil, exitcode.Errorf(exitcode.Kubeconfig, "no kubeconfig given (use --kubeconfig or set KUBECONFIG)")
	}
	if _, err := os.ReadFile(path); err != nil {
		return nil, exitcode.Errorf(exitcode.Kubeconfig, "kubeconfig %s is unreadable: %v", path, unwrapPathError(err))
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Kubeconfig, "kubeconfig %s is invalid: %v", path, err)
	}
	return cfg, nil
}

// Connect loads the kubeconfig and checks that the API server answers
// /readyz within timeout. Errors carry exitcode.Kubeconfig or
// exitcode.Unreachable.
func Connect(ctx context.Context, path, kubeContext string, timeout time.Duration) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := RESTConfig(path, kubeContext)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, exitcode.Errorf(exitcode.Kubeconfig, "kubeconfig %s: %v", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return nil, nil, exitcode.Errorf(exitcode.Unreachable, "cluster at %s is not reachable or not ready: %v %s", cfg.Host, err, trimBody(body))
	}
	return cfg, client, nil
}

func trimBody(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s", pe.Err)
	}
	return err
}
