package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
)

// component is one process of the cluster.
type component struct {
	name string
	// inNode runs the process inside the node's network namespace.
	inNode bool
	args   []string
	// env is set on top of kubeproof's own environment.
	env []string
}

// components returns the command line of every component that runs, in start
// order. Flags from Config.ComponentArgs come last and so win.
func components(c Config, l layout, bin binaries.Set) []component {
	nw := c.network()
	host := nw.hostIP.String()
	pkiPath := l.pki

	all := append(etcdComponents(c, l, bin.Path("etcd")), []component{
		{name: APIServer, args: apiServerArgs(c, l, bin, strings.Join(c.etcdClientURLs(), ","))},
		{name: Containerd, inNode: true, args: []string{bin.Path(Containerd), "--config=" + l.conf("containerd.toml")},
			// containerd asks the shim about its runtime (`-info`) without
			// the runc path of its configuration: the shim then looks for
			// runc in PATH. Found, the answer is kept; not found, containerd
			// runs the shim again for every container it starts.
			env: []string{"PATH=" + filepath.Dir(bin.Path("runc")) + string(os.PathListSeparator) + os.Getenv("PATH")}},
		{name: ControllerManager, args: append(controlPlaneArgs(bin, l, ControllerManager, host, c.ControllerManagerPort),
			"--controllers=*,bootstrapsigner,tokencleaner",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file="+pkiPath("sa.key"),
			"--root-ca-file="+pkiPath("ca.crt"),
			"--client-ca-file="+pkiPath("ca.crt"),
			"--requestheader-client-ca-file="+pkiPath("front-proxy-ca.crt"),
			// The CSR API issues client certificates with the cluster CA.
			"--cluster-signing-cert-file="+pkiPath("ca.crt"),
			"--cluster-signing-key-file="+pkiPath("ca.key"),
			"--allocate-node-cidrs=true",
			"--cluster-cidr="+c.PodCIDR,
			"--node-cidr-mask-size=24",
			"--service-cluster-ip-range="+c.ServiceCIDR,
			"--cluster-name="+c.Name,
		)},
		{name: Scheduler, args: controlPlaneArgs(bin, l, Scheduler, host, c.SchedulerPort)},
		{name: Kubelet, inNode: true, args: []string{bin.Path(Kubelet),
			"--config=" + l.conf("kubelet.yaml"),
			"--kubeconfig=" + l.conf(Kubelet+".kubeconfig"),
			"--root-dir=" + l.kubeletRoot(),
			"--cert-dir=" + l.pkiDir(),
			// /etc/hosts maps the host name to 127.0.0.1: name the IP.
			"--node-ip=" + nw.nodeIP.String(),
			"--hostname-override=" + l.nodeName(),
			"--v=1",
		}},
		{name: KubeProxy, inNode: true, args: []string{bin.Path(KubeProxy),
			"--config=" + l.conf("kube-proxy.yaml"),
			"--v=1",
		}},
	}...)
	var out []component
	for _, comp := range all {
		if !c.Runs(comp.name) {
			continue
		}
		// --component-arg etcd=... goes to every etcd member.
		key := comp.name
		if strings.HasPrefix(key, Etcd+"-") {
			key = Etcd
		}
		comp.args = append(comp.args, c.ComponentArgs[key]...)
		if comp.inNode {
			comp.args = append([]string{"nsenter", "--net=" + l.netnsPath(), "--"}, comp.args...)
		}
		out = append(out, comp)
	}
	return out
}

// controlPlaneArgs are the flags the controller manager and the scheduler
// share: their identity, where they serve, and no leader election (there is
// one of each).
func controlPlaneArgs(bin binaries.Set, l layout, name, host string, port int) []string {
	kubeconfig := l.conf(name + ".kubeconfig")
	return []string{bin.Path(name),
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=" + host,
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
	}
}

func apiServerArgs(c Config, l layout, bin binaries.Set, etcdURL string) []string {
	nw := c.network()
	p := l.pki
	args := []string{bin.Path(APIServer),
		"--advertise-address=" + nw.hostIP.String(),
		"--bind-address=" + nw.hostIP.String(),
		"--secure-port=" + strconv.Itoa(c.APIServerPort),
		"--etcd-servers=" + etcdURL,
		"--etcd-cafile=" + p("etcd-ca.crt"),
		"--etcd-certfile=" + p("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + p("apiserver-etcd-client.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-cluster-ip-range=" + c.ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
		// `kubectl logs` and `exec` verify the kubelet's serving certificate.
		"--kubelet-certificate-authority=" + p("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file=" + p("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p("front-proxy-client.key"),
		"--audit-policy-file=" + l.conf("audit-policy.yaml"),
		"--audit-log-path=" + l.auditLog(),
		"--audit-log-format=json",
		"--audit-log-maxsize=200",
		"--audit-log-maxbackup=1",
		// Blocking mode writes each event from the request's own goroutine
		// instead of batching it for up to a second; checks still wait for
		// the event they need.
		"--audit-log-mode=blocking",
	}
	if len(c.AuthenticationConfig) > 0 {
		args = append(args, "--authentication-config="+l.conf("authentication.yaml"))
	}
	if len(c.AdmissionConfig) > 0 {
		args = append(args, "--admission-control-config-file="+l.conf("admission.yaml"))
	}
	return args
}
