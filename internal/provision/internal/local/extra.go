package local

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/controlplane"
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
	name := controlplane.ExtraName()
	audit := filepath.Join(filepath.Dir(l.auditLog()), name+".log")

	extra := c
	extra.APIServerPort = port
	args := apiServerArgs(extra, l, bin, strings.Join(c.etcdClientURLs(), ","))
	args = append(args, "--endpoint-reconciler-type=none", "--audit-log-path="+audit)
	return controlplane.StartExtra(ctx, controlplane.Extra{
		Name: name, Args: args, Wins: extraArgs, Log: l.log(name), Host: host, Port: port,
		Kubeconfig: l.adminKubeconfig(), CAFile: l.pki("ca.crt"), AuditLog: audit,
	})
}
