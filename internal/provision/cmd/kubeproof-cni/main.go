//go:build linux

// Command kubeproof-cni is the pod network of kind clusters kubeproof makes
// (kind's own, kindnet, is not available offline). It runs on every node as
// a DaemonSet with the host's network: it writes the node's CNI
// configuration once the node has a pod CIDR, and keeps a route to every
// other node's pod CIDR through that node's address. It never masquerades:
// Pod traffic stays between the nodes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
)

func main() {
	confDir := flag.String("cni-conf-dir", "/etc/cni/net.d", "where the node's CNI configuration goes")
	bridge := flag.String("bridge", "kp-pods", "the node's Pod bridge")
	network := flag.String("network", "kubeproof", "the CNI network's name")
	resync := flag.Duration("resync", 30*time.Second, "how often routes are checked even without a change")
	traceLog := flag.String("trace-log", "", "if set, kubeproof-cni-trace goes first and last in the plugin chain, logging each call to this file on the node")
	flag.Parse()
	node := os.Getenv("NODE_NAME")
	if node == "" {
		log.Fatal("kubeproof-cni: NODE_NAME is not set (give it the Pod's spec.nodeName)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, node, *confDir, cni.Network{Name: *network, Bridge: *bridge, TraceLog: *traceLog}, *resync); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatalf("kubeproof-cni: %v", err)
	}
}

func run(ctx context.Context, self, confDir string, network cni.Network, resync time.Duration) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster configuration: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, resync)
	nodes := factory.Core().V1().Nodes()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		return ctx.Err()
	}
	log.Printf("kubeproof-cni on node %s: watching nodes", self)
	owned := map[string]cni.Route{}
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for {
		list, err := nodes.Lister().List(labels.Everything())
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		if err := reconcile(self, list, confDir, network, owned); err != nil {
			log.Printf("reconcile: %v", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick.C:
		}
	}
}

// reconcile writes this node's CNI configuration and brings the routes to
// the other nodes' pod CIDRs to what the Node objects say; owned are the
// routes it made before (it removes those no longer wanted, and no others).
func reconcile(self string, nodes []*corev1.Node, confDir string, network cni.Network, owned map[string]cni.Route) error {
	peers, podCIDR := peersOf(self, nodes)
	if podCIDR != "" {
		network.PodCIDR = podCIDR
		if err := writeConfig(confDir, network); err != nil {
			return err
		}
	}
	attached, err := attachedNetworks()
	if err != nil {
		return err
	}
	want := map[string]cni.Route{}
	for _, r := range cni.Routes(self, peers, attached) {
		want[r.Dst] = r
	}
	var errs []error
	for dst, r := range want {
		if owned[dst] == r {
			continue
		}
		if err := replaceRoute(r); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Printf("route %s via %s", r.Dst, r.Via)
		owned[dst] = r
	}
	for dst, r := range owned {
		if _, ok := want[dst]; ok {
			continue
		}
		if err := deleteRoute(r); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Printf("removed route %s via %s", r.Dst, r.Via)
		delete(owned, dst)
	}
	return errors.Join(errs...)
}

// peersOf are the nodes as routes to their pod CIDRs need them (each
// one's first IPv4 InternalIP), and podCIDR this node's, once it has one.
func peersOf(self string, nodes []*corev1.Node) (peers []cni.Peer, podCIDR string) {
	for _, n := range nodes {
		p := cni.Peer{Name: n.Name, PodCIDR: n.Spec.PodCIDR}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && net.ParseIP(a.Address).To4() != nil {
				p.Address = a.Address
				break
			}
		}
		peers = append(peers, p)
		if n.Name == self {
			podCIDR = n.Spec.PodCIDR
		}
	}
	return peers, podCIDR
}

// writeConfig writes the configuration if it differs from what is there;
// the container runtime picks up the file when it appears.
func writeConfig(dir string, n cni.Network) error {
	conf, err := cni.Conflist(n)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, cni.ConfigFile)
	if old, err := os.ReadFile(path); err == nil && string(old) == string(conf) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, conf, 0o644); err != nil {
		return fmt.Errorf("write CNI configuration: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write CNI configuration: %w", err)
	}
	log.Printf("wrote %s for pod CIDR %s", path, n.PodCIDR)
	return nil
}

// attachedNetworks are the IPv4 networks of this node's interfaces.
func attachedNetworks() ([]*net.IPNet, error) {
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var out []*net.IPNet
	for _, a := range addrs {
		if a.IPNet != nil && !a.IP.IsLoopback() {
			out = append(out, a.IPNet)
		}
	}
	return out, nil
}

func replaceRoute(r cni.Route) error {
	_, dst, err := net.ParseCIDR(r.Dst)
	if err != nil {
		return err
	}
	if err := netlink.RouteReplace(&netlink.Route{Dst: dst, Gw: net.ParseIP(r.Via)}); err != nil {
		return fmt.Errorf("route %s via %s: %w", r.Dst, r.Via, err)
	}
	return nil
}

func deleteRoute(r cni.Route) error {
	_, dst, err := net.ParseCIDR(r.Dst)
	if err != nil {
		return err
	}
	if err := netlink.RouteDel(&netlink.Route{Dst: dst, Gw: net.ParseIP(r.Via)}); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("delete route %s via %s: %w", r.Dst, r.Via, err)
	}
	return nil
}
