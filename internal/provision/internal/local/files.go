package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/containerdconf"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/registryhosts"
)

// containerdConfig keeps containerd's root, state, socket, CNI config and
// registry hosts (package registryhosts) in the cluster's own directories,
// and names the shim and runc built for this cluster, so no containerd or
// runc of the host is used. It is containerd 2's configuration (version 3).
// restrict_oom_score_adj is required on hosts without CAP_SYS_RESOURCE (runc
// fails to create any sandbox otherwise). runc's cgroup driver is the
// kubelet's (cg).
func containerdConfig(l layout, bin binaries.Set, cg hostchange.NodeCgroup) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

%s
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, l.containerdRoot(), l.containerdState(), l.containerdSock(), l.containerdSock()+".ttrpc",
		containerdconf.CRI{
			Snapshotter:        "overlayfs",
			Sandbox:            images.Pause.Ref,
			RegistryConfigPath: l.registryHostsDir(),
			ShimPath:           bin.Path("containerd-shim-runc-v2"),
			RuncPath:           bin.Path("runc"),
			RuncRoot:           l.runcRoot(),
			NetnsUnderStateDir: true,
			CNIBinDir:          l.cniBinDir(),
			CNIConfDir:         l.cniConfDir(),
			SystemdCgroup:      cg.Driver == hostchange.DriverSystemd,
		}.Sections(), l.containerdRoot()+"/opt")
}

// kubeletConfig is the kubelet's configuration file; its cgroups are as cg
// says.
func kubeletConfig(c Config, l layout, cg hostchange.NodeCgroup) string {
	nw := c.network()
	failCgroupV1 := ""
	if !cg.Unified {
		failCgroupV1 = "# This machine runs cgroup v1, which kubelets from 1.35 refuse by default.\nfailCgroupV1: false\n"
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
tlsCertFile: %s
tlsPrivateKeyFile: %s
containerRuntimeEndpoint: unix://%s
cgroupDriver: %s
cgroupRoot: %s
%s# Lowering oom_score_adj needs CAP_SYS_RESOURCE, which this VM does not grant.
oomScoreAdj: 0
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: %s
# Static Pods, as kubeadm's nodes read them from /etc/kubernetes/manifests:
# the control plane here runs as processes, so the directory starts empty.
staticPodPath: %s
failSwapOn: false
# Our images cannot be pulled again once removed: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
rotateCertificates: false
serverTLSBootstrap: false
`, nw.nodeIP, l.pki("ca.crt"), l.pki("kubelet-server.crt"), l.pki("kubelet-server.key"),
		l.containerdSock(), cg.Driver, cg.KubeletRoot, failCgroupV1, l.podLogs(), l.staticPods())
}

// kubeProxyConfig runs kube-proxy in iptables mode without touching host
// sysctls (conntrack limits, route_localnet): it runs in the node namespace.
func kubeProxyConfig(c Config, l layout) string {
	nw := c.network()
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
clusterCIDR: %s
bindAddress: 0.0.0.0
healthzBindAddress: %s:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, l.conf(KubeProxy+".kubeconfig"), l.nodeName(), c.PodCIDR, nw.nodeIP)
}

// writeConfigFiles writes the component configuration files.
func writeConfigFiles(c Config, l layout, bin binaries.Set, cg hostchange.NodeCgroup) error {
	files := map[string]string{
		l.conf("audit-policy.yaml"):   config.AuditPolicy,
		l.conf("containerd.toml"):     containerdConfig(l, bin, cg),
		l.conf("kubelet.yaml"):        kubeletConfig(c, l, cg),
		l.conf("kube-proxy.yaml"):     kubeProxyConfig(c, l),
		l.conf("authentication.yaml"): string(c.AuthenticationConfig),
		l.conf("admission.yaml"):      string(c.AdmissionConfig),
	}
	// The node has a network namespace of its own: this machine's
	// loopback is the host end of its link there.
	for host, file := range registryhosts.Files(c.Shape, c.network().hostIP.String()) {
		files[filepath.Join(l.registryHostsDir(), host, "hosts.toml")] = file
		if host != images.LoadedRegistry {
			c.Progress.Infof("the node pulls %s from %s: a registry on this machine must listen there too", c.ImageRegistry, registryhosts.Server(file))
		}
	}
	// The cluster's own registry (registry.go) speaks plain HTTP.
	if c.Runs(Registry) {
		full, shaped := c.registryAddress()
		for _, addr := range []string{full, shaped} {
			files[filepath.Join(l.registryHostsDir(), addr, "hosts.toml")] = registryhosts.PlainHTTP(addr)
		}
	}
	for path, content := range files {
		if content == "" {
			continue
		}
		if err := pki.WriteFile(path, []byte(strings.TrimLeft(content, "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// debianCNIDir holds the CNI plugins of Debian's containernetworking-plugins.
const debianCNIDir = "/usr/lib/cni"

// makeCNIBinDir fills the cluster's own CNI bin directory: links to
// Debian's plugins and a copy of kubeproof-cni-trace (from programDir), so
// that nothing of ours is added to the machine's /usr/lib/cni.
func makeCNIBinDir(l layout, programDir string) error {
	dir := l.cniBinDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the CNI bin directory: %w", err)
	}
	entries, err := os.ReadDir(debianCNIDir)
	if err != nil {
		return fmt.Errorf("list the CNI plugins: %w", err)
	}
	for _, e := range entries {
		link := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(debianCNIDir, e.Name()), link); err != nil {
			return fmt.Errorf("link CNI plugin %s: %w", e.Name(), err)
		}
	}
	trace, err := os.ReadFile(filepath.Join(programDir, cni.TracePlugin))
	if err != nil {
		return fmt.Errorf("read the CNI trace plugin: %w", err)
	}
	return pki.WriteFile(filepath.Join(dir, cni.TracePlugin), trace, 0o755)
}

// writeCNIConfig writes the node's pod network configuration; containerd
// picks it up when the file appears or changes.
func writeCNIConfig(c Config, l layout, podCIDR string) error {
	conf, err := cni.Conflist(cni.Network{Name: "kubeproof-" + c.Name, Bridge: "kp-pods", PodCIDR: podCIDR, IPAMDataDir: l.cniIPAMDir(), TraceLog: l.cniTraceLog()})
	if err != nil {
		return err
	}
	return pki.WriteFile(filepath.Join(l.cniConfDir(), cni.ConfigFile), conf, 0o644)
}
