package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeproof/kubeproof/framework/binaries"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/exitcode"
	"github.com/kubeproof/kubeproof/framework/process"
)

// Open returns the provider of an existing local cluster, with the
// configuration it was made with (for use from the spec runner).
func Open(name string) (*Provider, error) {
	l := layout{name: name}
	st, err := loadState(l.stateFile())
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Unreachable, "local cluster %q is not up: %v", name, err)
	}
	return &Provider{cfg: st.Config.WithDefaults(), l: l}, nil
}

var _ cluster.APIServerStarter = (*Provider)(nil)

// StartAPIServer starts another kube-apiserver with the cluster's flags plus
// extraArgs (which win), against the same etcd, on a free port of the
// host-side address, and waits until it is ready. It stays out of the
// kubernetes Service and writes its own audit log. Its command line names
// the cluster's directory, so `down` stops it even if the caller does not.
func (p *Provider) StartAPIServer(ctx context.Context, extraArgs []string) (*cluster.APIServer, error) {
	c, l := p.cfg, p.l
	bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
	if err != nil {
		return nil, err
	}
	host := c.network().hostIP.String()
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := "kube-apiserver-extra-" + hex.EncodeToString(suffix)
	audit := filepath.Join(filepath.Dir(l.auditLog()), name+".log")

	extra := c
	extra.APIServerPort = port
	args := apiServerArgs(extra, l, bin, fmt.Sprintf("https://%s", net.JoinHostPort(host, strconv.Itoa(c.EtcdPort))))
	args = append(args, "--endpoint-reconciler-type=none", "--audit-log-path="+audit)
	args = append(args, extraArgs...)
	proc, err := process.Start(name, args, l.log(name), os.Environ())
	if err != nil {
		return nil, err
	}
	stop := func() error { return proc.Stop(15 * time.Second) }
	url := "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	if err := waitAPIServer(ctx, l, url, proc); err != nil {
		_ = stop()
		return nil, err
	}
	return &cluster.APIServer{URL: url, CAFile: l.pki("ca.crt"), AuditLogPath: audit, Stop: stop}, nil
}

// waitAPIServer polls /readyz with the admin's credentials (the server has
// no watchable state before it is ready).
func waitAPIServer(ctx context.Context, l layout, url string, proc *process.Proc) error {
	cfg, err := clientcmd.BuildConfigFromFlags(url, l.adminKubeconfig())
	if err != nil {
		return fmt.Errorf("admin credentials: %w", err)
	}
	cfg.Timeout = 2 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	last := ""
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, apiServerTimeout, true, func(ctx context.Context) (bool, error) {
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
		return fmt.Errorf("timed out after %s waiting for the extra kube-apiserver at %s; last seen: %s", apiServerTimeout, url, last)
	}
	return err
}

// freePort asks the kernel for a free TCP port on host.
func freePort(host string) (int, error) {
	lis, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port, nil
}
