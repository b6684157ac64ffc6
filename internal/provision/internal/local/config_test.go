package local

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
)

func testConfig() Config {
	return Config{Shape: config.Shape{Name: "t"}, LinkCIDR: "10.250.0.0/30"}.WithDefaults()
}

func TestValidate(t *testing.T) {
	if err := testConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := map[string]func(*Config){
		"name with capitals":        func(c *Config) { c.Name = "Bad" },
		"name too long":             func(c *Config) { c.Name = strings.Repeat("a", 21) },
		"pod CIDR not a CIDR":       func(c *Config) { c.PodCIDR = "10.244.0.0" },
		"pod CIDR host bits":        func(c *Config) { c.PodCIDR = "10.244.0.1/16" },
		"pod CIDR too small":        func(c *Config) { c.PodCIDR = "10.244.0.0/24" },
		"overlapping CIDRs":         func(c *Config) { c.ServiceCIDR = "10.244.128.0/20" },
		"port out of range":         func(c *Config) { c.APIServerPort = 70000 },
		"unknown component arg":     func(c *Config) { c.ComponentArgs = map[string][]string{"kube-foo": {"--x"}} },
		"component not optional":    func(c *Config) { c.Without = []string{Etcd} },
		"IPv6 service CIDR":         func(c *Config) { c.ServiceCIDR = "fd00::/108" },
		"unknown without at all":    func(c *Config) { c.Without = []string{"coredns"} },
		"link CIDR too small":       func(c *Config) { c.LinkCIDR = "10.250.0.0/31" },
		"service overlaps link":     func(c *Config) { c.ServiceCIDR = "10.250.0.0/16" },
		"pod CIDR IPv6":             func(c *Config) { c.PodCIDR = "fd00::/48" },
		"negative scheduler port":   func(c *Config) { c.SchedulerPort = -1 },
		"admission config not YAML": func(c *Config) { c.AdmissionConfig = []byte("\tnot: [yaml") },
		"admission config of another kind": func(c *Config) {
			c.AdmissionConfig = []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n")
		},
		"admission plugin config in another file": func(c *Config) {
			c.AdmissionConfig = []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: podsecurity.yaml\n")
		},
	}
	for name, mutate := range bad {
		c := testConfig()
		mutate(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: exit code %v, want Usage", name, exitcode.Of(err))
		}
	}
}

func TestNetworkAddresses(t *testing.T) {
	nw := testConfig().network()
	if nw.hostIP.String() != "10.250.0.1" || nw.nodeIP.String() != "10.250.0.2" || nw.linkPrefix != 30 {
		t.Fatalf("link: host %s node %s /%d", nw.hostIP, nw.nodeIP, nw.linkPrefix)
	}
	if nw.nodePodCIDR.String() != "10.244.0.0/24" || nw.apiServiceIP.String() != "10.96.0.1" {
		t.Fatalf("pod CIDR %s, kubernetes service IP %s", nw.nodePodCIDR, nw.apiServiceIP)
	}
}

// Overrides come after our flags (the last flag wins), components left out
// do not run, and node components run inside the node namespace.
func TestComponents(t *testing.T) {
	c := testConfig()
	c.ComponentArgs = map[string][]string{APIServer: {"--anonymous-auth=false"}}
	c.Without = []string{KubeProxy}
	comps := components(c, layout{name: c.Name}, binaries.Set{KubernetesDir: "/k", EtcdDir: "/e", ContainerdDir: "/c", RuncDir: "/r"})
	byName := map[string]component{}
	for _, comp := range comps {
		byName[comp.name] = comp
	}
	if _, ok := byName[KubeProxy]; ok {
		t.Fatal("kube-proxy runs although left out")
	}
	api := byName[APIServer].args
	if api[len(api)-1] != "--anonymous-auth=false" {
		t.Fatalf("override not last: %v", api[len(api)-3:])
	}
	for _, want := range []string{"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction", "--audit-log-path=" + (layout{name: "t"}).auditLog()} {
		if !slices.Contains(api, want) {
			t.Errorf("kube-apiserver lacks %s", want)
		}
	}
	if !slices.Contains(byName[Etcd].args, "--client-cert-auth=true") {
		t.Error("etcd must require client certificates")
	}
	kubelet := byName[Kubelet].args
	if kubelet[0] != "nsenter" || kubelet[1] != "--net="+(layout{name: "t"}).netnsPath() {
		t.Errorf("kubelet not started in the node namespace: %v", kubelet[:3])
	}
	// The shim's -info finds runc by PATH (see components).
	if env := byName[Containerd].env; len(env) != 1 || !strings.HasPrefix(env[0], "PATH=/r:") {
		t.Errorf("containerd env = %v: want runc's directory first in PATH", env)
	}
	if byName[APIServer].inNode || byName[Etcd].inNode {
		t.Error("the control plane runs on the host")
	}
}

// The node cgroups of the three kinds of host the kubelet config is
// written for: this VM's cgroup v1, a cgroup v2 machine without systemd (a
// container, the user-mode-linux guest) and one that systemd booted.
var (
	v1Cgroup      = hostchange.NodeCgroup{Name: "kubeproof-t", Driver: hostchange.DriverCgroupfs, KubeletRoot: "/kubeproof-t"}
	v2Cgroup      = hostchange.NodeCgroup{Name: "kubeproof-t", Driver: hostchange.DriverCgroupfs, KubeletRoot: "/kubeproof-t", Unified: true, UnifiedRoot: "/sys/fs/cgroup", Controllers: []string{"cpu", "memory", "pids"}}
	systemdCgroup = hostchange.NodeCgroup{Name: "kubeproof-t", Driver: hostchange.DriverSystemd, KubeletRoot: "/kubeproof-t", Slice: "kubeproof_t.slice", Unified: true, UnifiedRoot: "/sys/fs/cgroup", Controllers: []string{"cpu", "memory", "pids"}}
)

// Both configuration files are decoded strictly, as the components would
// with a typo: the kubelet otherwise ignores unknown fields silently.
func TestKubeletConfigDecodesStrictly(t *testing.T) {
	c := testConfig()
	var kc kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict([]byte(kubeletConfig(c, layout{name: c.Name}, v1Cgroup)), &kc); err != nil {
		t.Fatalf("kubelet config: %v", err)
	}
	if kc.FailCgroupV1 == nil || *kc.FailCgroupV1 {
		t.Error("failCgroupV1 must be false on this machine's cgroup v1")
	}
	if kc.CgroupDriver != "cgroupfs" {
		t.Errorf("cgroupDriver = %q on cgroup v1", kc.CgroupDriver)
	}
	if kc.OOMScoreAdj == nil || *kc.OOMScoreAdj != 0 {
		t.Error("oomScoreAdj must be 0 without CAP_SYS_RESOURCE")
	}
	if kc.PodLogsDir != (layout{name: c.Name}).podLogs() {
		t.Errorf("podLogsDir = %q: pod logs must stay in the cluster's directory", kc.PodLogsDir)
	}
	if kc.CgroupRoot != "/kubeproof-t" {
		t.Errorf("cgroupRoot = %q", kc.CgroupRoot)
	}
}

// On cgroup v2 the kubelet keeps its default refusal of cgroup v1, and its
// driver is the plan's: with systemd's, cgroupRoot stays in cgroupfs form
// (the kubelet turns /kubeproof-t into the slice kubeproof_t.slice).
func TestKubeletConfigCgroupV2(t *testing.T) {
	c := testConfig()
	for _, cg := range []hostchange.NodeCgroup{v2Cgroup, systemdCgroup} {
		var kc kubeletv1beta1.KubeletConfiguration
		if err := yaml.UnmarshalStrict([]byte(kubeletConfig(c, layout{name: c.Name}, cg)), &kc); err != nil {
			t.Fatalf("kubelet config: %v", err)
		}
		if kc.FailCgroupV1 != nil {
			t.Errorf("%s: failCgroupV1 set on a cgroup v2 host", cg.Driver)
		}
		if kc.CgroupDriver != cg.Driver || kc.CgroupRoot != "/kubeproof-t" {
			t.Errorf("cgroupDriver %q, cgroupRoot %q; want %q, /kubeproof-t", kc.CgroupDriver, kc.CgroupRoot, cg.Driver)
		}
	}
}

func TestKubeProxyConfigDecodesStrictly(t *testing.T) {
	c := testConfig()
	var kc kubeproxyv1alpha1.KubeProxyConfiguration
	if err := yaml.UnmarshalStrict([]byte(kubeProxyConfig(c, layout{name: c.Name})), &kc); err != nil {
		t.Fatalf("kube-proxy config: %v", err)
	}
	if kc.Mode != "iptables" {
		t.Errorf("mode %q", kc.Mode)
	}
	if kc.IPTables.LocalhostNodePorts == nil || *kc.IPTables.LocalhostNodePorts {
		t.Error("localhostNodePorts must be off (it changes a sysctl)")
	}
}

func TestContainerdConfigParses(t *testing.T) {
	l := layout{name: "t"}
	var conf map[string]any
	bin := binaries.Set{ContainerdDir: "/cache/containerd", RuncDir: "/cache/runc"}
	if _, err := toml.Decode(containerdConfig(l, bin, v1Cgroup), &conf); err != nil {
		t.Fatalf("containerd config: %v", err)
	}
	if conf["root"] != l.containerdRoot() || conf["version"] != int64(3) {
		t.Errorf("root = %v, version = %v", conf["root"], conf["version"])
	}
	plugins := conf["plugins"].(map[string]any)
	rt := plugins["io.containerd.cri.v1.runtime"].(map[string]any)
	if rt["restrict_oom_score_adj"] != true {
		t.Error("restrict_oom_score_adj must be set")
	}
	runc := rt["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)
	if runc["runtime_path"] != "/cache/containerd/containerd-shim-runc-v2" || runc["options"].(map[string]any)["BinaryName"] != "/cache/runc/runc" {
		t.Errorf("runc runtime = %v: want the shim and runc of the cache", runc)
	}
	if runc["options"].(map[string]any)["SystemdCgroup"] != false {
		t.Error("runc must use cgroupfs as the kubelet does")
	}
	var sd map[string]any
	if _, err := toml.Decode(containerdConfig(l, bin, systemdCgroup), &sd); err != nil {
		t.Fatal(err)
	}
	sdRunc := sd["plugins"].(map[string]any)["io.containerd.cri.v1.runtime"].(map[string]any)["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)
	if sdRunc["options"].(map[string]any)["SystemdCgroup"] != true {
		t.Error("with the kubelet's systemd driver, runc must use systemd too")
	}
	img := plugins["io.containerd.cri.v1.images"].(map[string]any)
	if p := img["registry"].(map[string]any)["config_path"]; p != l.registryHostsDir() {
		t.Errorf("registry config_path = %v", p)
	}
}

func TestLayoutNames(t *testing.T) {
	l := layout{name: strings.Repeat("a", 20)}
	if len(l.hostVeth()) > 15 {
		t.Errorf("interface name %q longer than the kernel's 15 bytes", l.hostVeth())
	}
	if !strings.HasPrefix(l.containerdSock(), RunRoot) || !strings.HasPrefix(l.kubeletRoot(), DataRoot) {
		t.Error("cluster files outside the cluster's roots")
	}
}

func TestHelpers(t *testing.T) {
	if ip, err := hexIPv4("0100000A"); err != nil || ip.String() != "10.0.0.1" {
		t.Errorf("hexIPv4 = %v, %v", ip, err)
	}
	if got := componentOf([]string{"nsenter", "--net=/run/netns/x", "--", "/c/kubelet", "--v=1"}); got != "kubelet" {
		t.Errorf("componentOf(nsenter ...) = %q", got)
	}
	if got := componentOf([]string{"/c/etcd", "--name=x"}); got != "etcd" {
		t.Errorf("componentOf(etcd) = %q", got)
	}
	// The cluster's registry is kubeproof itself, found by its command.
	if got := componentOf([]string{"/bin/kubeproof", "registry", "serve", "--dir", "/var/lib/kubeproof/x/registry"}); got != Registry {
		t.Errorf("componentOf(kubeproof registry serve) = %q", got)
	}
	args := []string{"containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", "/run/x.sock"}
	if flagValue(args, "-id") != "abc" || flagValue(args, "-address") != "/run/x.sock" || flagValue(args, "-nope") != "" {
		t.Error("flagValue")
	}
}

// A second cluster gets the next free link; routes of the first (and of the
// machine) are avoided.
func TestChooseLink(t *testing.T) {
	c := Config{Shape: config.Shape{Name: "t"}}.WithDefaults()
	mk := func(cidr, dev string) route { return route{dst: mustCIDR(cidr), dev: dev} }
	routes := []route{
		mk("0.0.0.0/0", "eth0"),
		mk("192.0.2.0/24", "eth0"),
		mk("10.250.0.0/30", "kp-kubeproof"),
		mk("10.250.0.4/30", "kp-other"),
	}
	got, err := chooseLink(c, routes)
	if err != nil || got != "10.250.0.8/30" {
		t.Fatalf("chooseLink = %q, %v; want 10.250.0.8/30", got, err)
	}
	full := append(routes, mk("10.250.0.0/16", "somewhere"))
	if _, err := chooseLink(c, full); exitcode.Of(err) != exitcode.Conflict {
		t.Fatalf("a full pool must be a Conflict: %v", err)
	}
}

// All of etcd is killed when stopped; one member of several, and the other
// components, get time to stop cleanly (a leader hands over first).
func TestStopGrace(t *testing.T) {
	if g := stopGrace(Etcd); g != 0 {
		t.Errorf("stopGrace(%s) = %s, want 0", Etcd, g)
	}
	three := testConfig()
	three.EtcdMembers = 3
	for _, name := range append(three.etcdNames()[1:], ControllerManager, Scheduler) {
		if g := stopGrace(name); g <= 0 {
			t.Errorf("stopGrace(%s) = %s, want a grace period", name, g)
		}
	}
}

// The example a user is pointed at (--admission-control-config-file's help,
// docs/your-cluster.md) is accepted and reaches kube-apiserver as a file of
// the cluster's own.
func TestAdmissionConfigExample(t *testing.T) {
	data, err := os.ReadFile("../../../../fixtures/admission/podsecurity-restricted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := testConfig()
	c.AdmissionConfig = data
	if err := c.Validate(); err != nil {
		t.Fatalf("the shipped example: %v", err)
	}
	l := layout{name: c.Name}
	args := apiServerArgs(c, l, binaries.Set{}, "https://127.0.0.1:2379")
	if want := "--admission-control-config-file=" + l.conf("admission.yaml"); !slices.Contains(args, want) {
		t.Errorf("kube-apiserver args lack %s: %v", want, args)
	}
	if args := apiServerArgs(testConfig(), l, binaries.Set{}, "https://127.0.0.1:2379"); slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--admission-control-config-file")
	}) {
		t.Errorf("without an admission configuration, kube-apiserver gets one: %v", args)
	}
}

// The cluster's registry is kubeproof serving on the host end of the
// node's link, at full speed and over its slow link, its blobs and access
// log in the cluster's own directories (so that down removes them); the
// specs are told where, and that its images are the test app's.
func TestRegistry(t *testing.T) {
	c := testConfig()
	l := layout{name: c.Name}
	comp, err := registryComponent(c, l)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(comp.args, " ")
	for _, want := range []string{" registry serve ", "--listen 10.250.0.1:5000", "--shaped-listen 10.250.0.1:5001", "--shaped-rate 524288",
		"--dir " + l.registryDir(), "--access-log " + l.registryAccessLog()} {
		if !strings.Contains(args, want) {
			t.Errorf("registry command %q lacks %q", args, want)
		}
	}
	if comp.inNode || componentOf(comp.args) != Registry {
		t.Errorf("the registry runs on the host and is found by its command: inNode %v, componentOf %q", comp.inNode, componentOf(comp.args))
	}
	for _, p := range []string{l.registryDir(), l.registryAccessLog()} {
		if !strings.HasPrefix(p, l.dataDir()+"/") {
			t.Errorf("%s is outside the cluster's directory", p)
		}
	}
	r := c.registry(l).PullRegistry()
	if r.Address != "10.250.0.1:5000" || r.Shaped != "10.250.0.1:5001" || r.ShapedRate != 512<<10 ||
		r.Base != "10.250.0.1:5000/kubeproof/testapp:v1" || !strings.Contains(r.Link, "10.250.0.1") {
		t.Errorf("pull registry %+v", r)
	}
	c.Without = []string{Registry}
	if err := c.Validate(); err != nil || c.Runs(Registry) {
		t.Errorf("--without registry: %v, runs %v", err, c.Runs(Registry))
	}
	// A registry of the user's on this machine's loopback, which the node
	// reaches at 10.250.0.1 at the same port, keeps its port.
	u := Config{Shape: config.Shape{Name: "t", ImageRegistry: "127.0.0.1:5001/kubeproof"}, LinkCIDR: "10.250.0.0/30"}
	if full, shaped := u.WithDefaults().registryAddress(); full != "10.250.0.1:5002" || shaped != "10.250.0.1:5003" {
		t.Errorf("with --image-registry %s the cluster's registry is at %s and %s", u.ImageRegistry, full, shaped)
	}
}
