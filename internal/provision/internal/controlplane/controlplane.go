// Package controlplane holds what providers share to run an extra
// kube-apiserver beside a cluster's own: a name, a free port, starting it
// and the wait for it to be ready.
package controlplane

import (
	"context"
	"fmt"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// ReadyTimeout bounds the wait for an extra API server.
const ReadyTimeout = 90 * time.Second

// WaitReady waits until the API server at url answers /readyz to the
// credentials of kubeconfig, or proc exits. Before it is ready the server
// has no watchable state, so this polls.
func WaitReady(ctx context.Context, url, kubeconfig string, proc *process.Proc) error {
	cfg, err := clientcmd.BuildConfigFromFlags(url, kubeconfig)
	if err != nil {
		return fmt.Errorf("admin credentials: %w", err)
	}
	cfg.Timeout = 2 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	last := ""
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-proc.Exited():
			return false, fmt.Errorf("extra kube-apiserver exited (%v); last log lines:\n%s", proc.Err(), process.Tail(proc.Log, 5))
		default:
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			last = fmt.Sprintf("%v %s", err, truncate(string(body), 200))
			return false, nil
		}
		return true, nil
	})
	if err != nil && wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("timed out after %s waiting for the extra kube-apiserver at %s; last seen: %s", ReadyTimeout, url, last)
	}
	return err
}

// FreePort asks the kernel for a free TCP port on host.
func FreePort(host string) (int, error) {
	lis, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
