package kind

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/controlplane"
)

var _ cluster.APIServerStarter = (*Provider)(nil)

// StartAPIServer starts another kube-apiserver with the flags of the
// cluster's own (read from its static Pod manifest on the control-plane
// node) plus extraArgs, which win. It runs on this machine, on its address
// in the kind network, against the cluster's etcd, with the cluster's PKI
// from the host directory the control plane mounts, and a serving
// certificate of its own from the cluster CA. It writes its own audit log
// and stays out of the kubernetes Service. Its command line names the
// cluster's directory, so `down` stops it even if the caller does not.
func (p *Provider) StartAPIServer(ctx context.Context, extraArgs []string) (*cluster.APIServer, error) {
	c, l := p.cfg, p.l
	cp, cpIP, err := p.controlPlane()
	if err != nil {
		return nil, err
	}
	var manifest bytes.Buffer
	if err := cp.Command("cat", "/etc/kubernetes/manifests/kube-apiserver.yaml").SetStdout(&manifest).Run(); err != nil {
		return nil, fmt.Errorf("read the kube-apiserver manifest of %s: %w", cp, err)
	}
	own, err := manifestArgs(manifest.Bytes())
	if err != nil {
		return nil, err
	}
	host, err := hostAddressFor(cpIP)
	if err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort(host)
	if err != nil {
		return nil, err
	}
	bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
	if err != nil {
		return nil, err
	}
	name := controlplane.ExtraName()
	certDir := filepath.Join(l.dir(), "extra", name)
	if err := issueServing(l, certDir, net.ParseIP(host)); err != nil {
		return nil, err
	}
	audit := filepath.Join(l.auditDir(), name+".log")
	args := []string{bin.Path(APIServer)}
	args = append(args, hostArgs(own, l)...)
	args = append(args,
		"--advertise-address="+host,
		"--bind-address="+host,
		"--secure-port="+strconv.Itoa(port),
		"--etcd-servers=https://"+net.JoinHostPort(cpIP, "2379"),
		"--tls-cert-file="+filepath.Join(certDir, "serving.crt"),
		"--tls-private-key-file="+filepath.Join(certDir, "serving.key"),
		"--endpoint-reconciler-type=none",
		"--audit-log-path="+audit,
	)
	return controlplane.StartExtra(ctx, controlplane.Extra{
		Name: name, Args: args, Wins: extraArgs, Log: filepath.Join(l.logDir(), name+".log"), Host: host, Port: port,
		Kubeconfig: l.kubeconfig(), CAFile: l.pki("ca.crt"), AuditLog: audit,
		Cleanup: func() { _ = os.RemoveAll(certDir) },
	})
}

// controlPlane is the running cluster's control-plane node and its address.
func (p *Provider) controlPlane() (nodes.Node, string, error) {
	st, err := loadState(p.l)
	if err != nil {
		return nil, "", fmt.Errorf("kind cluster %q is not up: %w", p.cfg.Name, err)
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return nil, "", err
	}
	_, cp, cpIP, err := p.nodesOf(kp)
	return cp, cpIP, err
}

// manifestArgs returns the kube-apiserver flags of a static Pod manifest.
func manifestArgs(manifest []byte) ([]string, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, fmt.Errorf("parse the kube-apiserver manifest: %w", err)
	}
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == APIServer {
			all := append(append([]string{}, ctr.Command...), ctr.Args...)
			var flags []string
			for _, a := range all {
				if strings.HasPrefix(a, "--") {
					flags = append(flags, a)
				}
			}
			return flags, nil
		}
	}
	return nil, fmt.Errorf("the kube-apiserver manifest has no %s container", APIServer)
}

// replaced are the flags an extra server sets for itself.
var replaced = []string{"--advertise-address", "--bind-address", "--secure-port", "--etcd-servers",
	"--tls-cert-file", "--tls-private-key-file", "--audit-log-path"}

// hostArgs drops the flags an extra server sets itself and points the rest
// from the node's paths to the host directories mounted there.
func hostArgs(flags []string, l layout) []string {
	paths := strings.NewReplacer(nodePKIDir, l.pkiDir(), nodeConfDir, l.confDir(), nodeAuditDir, l.auditDir())
	var out []string
	for _, f := range flags {
		name, _, _ := strings.Cut(f, "=")
		skip := false
		for _, r := range replaced {
			if name == r {
				skip = true
			}
		}
		if !skip {
			out = append(out, paths.Replace(f))
		}
	}
	return out
}

// hostAddressFor returns this machine's address on the network of ip (the
// kind network's bridge).
func hostAddressFor(ip string) (string, error) {
	target := net.ParseIP(ip)
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("list addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.Contains(target) {
			return n.IP.String(), nil
		}
	}
	return "", fmt.Errorf("this machine has no address on the network of %s", ip)
}

// issueServing writes a serving certificate for ip, from the cluster CA.
func issueServing(l layout, dir string, ip net.IP) error {
	ca, err := pki.LoadCA(l.pkiDir(), "ca")
	if err != nil {
		return err
	}
	kp, err := ca.Issue(pki.Request{CommonName: "kube-apiserver-extra", IPs: []net.IP{ip}, Usage: pki.ServerAuth})
	if err != nil {
		return fmt.Errorf("issue a serving certificate: %w", err)
	}
	return kp.Write(dir, "serving")
}
