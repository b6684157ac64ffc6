// Package local is the provider for a real single-node cluster made of local
// processes: etcd, kube-apiserver, kube-controller-manager and kube-scheduler
// on the host, and containerd, the kubelet and kube-proxy inside a network
// namespace that plays the node, joined to the host by a veth pair.
//
// The node namespace keeps the cluster's iptables rules, bridge and routes off
// the host (another cluster can run beside it), and gives the node an address
// of its own. Pod and Service CIDRs are routed to it from the host, and the
// node has no default route: no cluster traffic leaves the machine.
package local

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
)

// ProviderName is the --provider value.
const ProviderName = "local"

// Component names, as used by --component-arg and --without.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Containerd        = "containerd"
	Kubelet           = "kubelet"
	KubeProxy         = "kube-proxy"
	// Registry is the registry the cluster's node pulls the pull specs'
	// images from (registry.go).
	Registry = clusterregistry.Name
)

// Components in start order.
var Components = []string{Etcd, APIServer, Containerd, Registry, ControllerManager, Scheduler, Kubelet, KubeProxy}

// Optional components may be left out with --without, to show what a cluster
// without them does.
var Optional = []string{ControllerManager, Scheduler, KubeProxy, Registry}

// Config describes a local cluster: the shape every provider takes (the
// node gets a /24 of the pod CIDR) and the local cluster's own addresses.
type Config struct {
	config.Shape

	// ProgramDir holds kubeproof's image programs.
	ProgramDir string

	// LinkCIDR is the /30 between host and node: the host side gets the
	// first address (the API server listens there), the node the second.
	// Empty means the first /30 of 10.250.0.0/16 that no host route
	// covers, so that clusters side by side get links of their own.
	LinkCIDR string
	// APIServerPort is the API server's port on the host-side link address.
	APIServerPort int
	// EtcdPort is etcd's client port; the peer and metrics ports follow it.
	EtcdPort int
	// EtcdMembers is how many members etcd has (--etcd-members: 1 or 3),
	// each a process with the three ports after the previous member's.
	EtcdMembers int
	// ControllerManagerPort and SchedulerPort are their secure ports.
	ControllerManagerPort int
	SchedulerPort         int
	// RegistryPort is the cluster's registry's port on the host-side link
	// address; the next port serves it at most RegistryShapedRate bytes
	// per second.
	RegistryPort       int
	RegistryShapedRate int64

	// AuthenticationConfig, if set, is written to a file and passed to
	// kube-apiserver --authentication-config.
	AuthenticationConfig []byte
	// AdmissionConfig, if set, is passed as --admission-control-config-file.
	AdmissionConfig []byte

	Progress *progress.Printer
}

// DefaultName is the cluster name when none is given.
const DefaultName = config.DefaultName

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Shape = c.Shape.WithDefaults()
	if c.APIServerPort == 0 {
		c.APIServerPort = 6443
	}
	if c.EtcdPort == 0 {
		c.EtcdPort = 2379
	}
	if c.EtcdMembers == 0 {
		c.EtcdMembers = 1
	}
	if c.ControllerManagerPort == 0 {
		c.ControllerManagerPort = 10257
	}
	if c.SchedulerPort == 0 {
		c.SchedulerPort = 10259
	}
	if c.RegistryPort == 0 {
		// A registry of the user's on this machine's loopback, which the
		// node reaches at the link's host address where this one listens,
		// keeps its port.
		c.RegistryPort = clusterregistry.FirstPort(clusterregistry.DefaultPort, clusterregistry.UserPort(c.ImageRegistry, ""))
	}
	if c.RegistryShapedRate == 0 {
		c.RegistryShapedRate = clusterregistry.DefaultRate
	}
	if c.Progress == nil {
		c.Progress = progress.Discard()
	}
	return c
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// Validate checks the config without touching the machine. Errors carry
// exitcode.Usage.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error { return exitcode.Errorf(exitcode.Usage, format, args...) }
	if !nameRE.MatchString(c.Name) {
		return bad("cluster name %q: use 1-20 lowercase letters, digits and dashes, starting with a letter", c.Name)
	}
	cidrs := []struct{ flag, value string }{{"--pod-cidr", c.PodCIDR}, {"--service-cidr", c.ServiceCIDR}}
	if c.LinkCIDR != "" {
		cidrs = append(cidrs, struct{ flag, value string }{"link CIDR", c.LinkCIDR})
	}
	for _, cidr := range cidrs {
		ip, n, err := net.ParseCIDR(cidr.value)
		if err != nil || ip.To4() == nil {
			return bad("%s %q is not an IPv4 CIDR", cidr.flag, cidr.value)
		}
		if !ip.Equal(n.IP) {
			return bad("%s %q has host bits set (did you mean %s?)", cidr.flag, cidr.value, n)
		}
	}
	if ones, _ := mustCIDR(c.PodCIDR).Mask.Size(); ones > 23 {
		return bad("--pod-cidr %s is too small: the node takes a /24 of it", c.PodCIDR)
	}
	nets := map[string]*net.IPNet{"pod": mustCIDR(c.PodCIDR), "service": mustCIDR(c.ServiceCIDR)}
	keys := []string{"pod", "service"}
	if c.LinkCIDR != "" {
		if ones, _ := mustCIDR(c.LinkCIDR).Mask.Size(); ones > 30 {
			return bad("link CIDR %s is too small: it needs two addresses", c.LinkCIDR)
		}
		nets["link"] = mustCIDR(c.LinkCIDR)
		keys = append(keys, "link")
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if overlap(nets[a], nets[b]) {
				return bad("the %s CIDR %s overlaps the %s CIDR %s", a, nets[a], b, nets[b])
			}
		}
	}
	for _, p := range []struct {
		what string
		port int
	}{{"--apiserver-port", c.APIServerPort}, {"etcd port", c.EtcdPort}, {"controller-manager port", c.ControllerManagerPort}, {"scheduler port", c.SchedulerPort}, {"registry port", c.RegistryPort}} {
		if p.port < 1 || p.port > 65533 {
			return bad("%s %d is out of range", p.what, p.port)
		}
	}
	if c.EtcdMembers != 1 && c.EtcdMembers != 3 && c.EtcdMembers != 5 {
		return bad("--etcd-members %d: etcd runs here with 1, 3 or 5 members", c.EtcdMembers)
	}
	for comp := range c.ComponentArgs {
		if !slices.Contains(Components, comp) {
			return bad("--component-arg: unknown component %q (one of %s)", comp, strings.Join(Components, ", "))
		}
	}
	for _, w := range c.Without {
		if !slices.Contains(Optional, w) {
			return bad("--without %q: only %s can be left out", w, strings.Join(Optional, ", "))
		}
	}
	if len(c.AdmissionConfig) > 0 {
		if err := checkAdmissionConfig(c.AdmissionConfig); err != nil {
			return bad("--admission-control-config-file: %v", err)
		}
	}
	return nil
}

// admissionConfigVersions are the apiVersions of an AdmissionConfiguration
// that kube-apiserver reads.
var admissionConfigVersions = []string{"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1"}

// checkAdmissionConfig finds, before anything starts, what would stop
// kube-apiserver at its start: a file that is not an AdmissionConfiguration,
// or a plugin whose configuration is in another file (path:), which the
// cluster's copy of the file could not reach.
func checkAdmissionConfig(data []byte) error {
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Plugins    []struct {
			Name          string          `json:"name"`
			Path          string          `json:"path"`
			Configuration json.RawMessage `json:"configuration"`
		} `json:"plugins"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	if cfg.Kind != "AdmissionConfiguration" || !slices.Contains(admissionConfigVersions, cfg.APIVersion) {
		return fmt.Errorf("want kind AdmissionConfiguration of apiVersion %s, got kind %q of apiVersion %q",
			admissionConfigVersions[0], cfg.Kind, cfg.APIVersion)
	}
	for _, p := range cfg.Plugins {
		if p.Name == "" {
			return fmt.Errorf("a plugin without a name")
		}
		if p.Path != "" {
			return fmt.Errorf("plugin %s: its configuration is in another file (path: %s): put it inline, under \"configuration\"", p.Name, p.Path)
		}
		if len(p.Configuration) == 0 {
			return fmt.Errorf("plugin %s has no configuration", p.Name)
		}
	}
	return nil
}

// Runs reports whether comp is part of the cluster.
func (c Config) Runs(comp string) bool { return !slices.Contains(c.Without, comp) }

// network holds the addresses derived from the CIDRs.
type network struct {
	hostIP, nodeIP net.IP
	linkPrefix     int
	nodePodCIDR    *net.IPNet // the first /24 of the pod CIDR
	apiServiceIP   net.IP     // first address of the service CIDR
}

func (c Config) network() network {
	link := mustCIDR(c.LinkCIDR)
	ones, _ := link.Mask.Size()
	pod := mustCIDR(c.PodCIDR)
	return network{
		hostIP:       addIP(link.IP, 1),
		nodeIP:       addIP(link.IP, 2),
		linkPrefix:   ones,
		nodePodCIDR:  &net.IPNet{IP: pod.IP, Mask: net.CIDRMask(24, 32)},
		apiServiceIP: addIP(mustCIDR(c.ServiceCIDR).IP, 1),
	}
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(fmt.Sprintf("CIDR %q was validated but does not parse: %v", s, err))
	}
	return n
}

func overlap(a, b *net.IPNet) bool { return a.Contains(b.IP) || b.Contains(a.IP) }

func addIP(ip net.IP, n int) net.IP {
	v4 := ip.To4()
	out := make(net.IP, 4)
	copy(out, v4)
	for i := 3; i >= 0 && n > 0; i-- {
		sum := int(out[i]) + n
		out[i] = byte(sum % 256)
		n = sum / 256
	}
	return out
}
