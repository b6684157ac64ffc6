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

	"github.com/kubeproof/kubeproof/framework/binaries"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/cluster/controlplane"
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
	port, err := controlplane.FreePort(host)
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
	if err := controlplane.WaitReady(ctx, url, l.adminKubeconfig(), proc); err != nil {
		_ = stop()
		return nil, err
	}
	return &cluster.APIServer{URL: url, CAFile: l.pki("ca.crt"), AuditLogPath: audit, Stop: stop}, nil
}
