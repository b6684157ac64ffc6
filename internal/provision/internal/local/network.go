package local

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
)

// ipCmd runs `ip args...` and wraps its output into the error.
func ipCmd(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setupNetwork makes the node namespace and joins it to the host:
//
//	host: <hostVeth> hostIP/30, routes podCIDR and serviceCIDR via nodeIP
//	node: eth0 nodeIP/30, lo, a sink interface holding the serviceCIDR route,
//	      IP forwarding on, bridged traffic through iptables (for Services)
//
// The node has no default route, so nothing from a pod leaves the machine.
func setupNetwork(ctx context.Context, c Config, l layout) error {
	nw := c.network()
	ns := l.netns()
	hostAddr := fmt.Sprintf("%s/%d", nw.hostIP, nw.linkPrefix)
	nodeAddr := fmt.Sprintf("%s/%d", nw.nodeIP, nw.linkPrefix)
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", l.hostVeth(), "type", "veth", "peer", "name", nodeVeth, "netns", ns},
		{"addr", "add", hostAddr, "dev", l.hostVeth()},
		{"link", "set", l.hostVeth(), "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", nodeAddr, "dev", nodeVeth},
		{"-n", ns, "link", "set", nodeVeth, "up"},
		{"-n", ns, "link", "add", serviceSink, "type", "ifb"},
		{"-n", ns, "link", "set", serviceSink, "up"},
		{"-n", ns, "route", "add", c.ServiceCIDR, "dev", serviceSink},
		{"route", "add", c.PodCIDR, "via", nw.nodeIP.String(), "dev", l.hostVeth()},
		{"route", "add", c.ServiceCIDR, "via", nw.nodeIP.String(), "dev", l.hostVeth()},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			return fmt.Errorf("set up node network: %w", err)
		}
	}
	return inNetns(l.netnsPath(), func() error {
		// Without br_netfilter's hook (hostModules), replies between two
		// pods on the bridge bypass kube-proxy's DNAT and Service traffic
		// between them breaks.
		sysctls := map[string]string{"net/ipv4/ip_forward": "1", "net/bridge/bridge-nf-call-iptables": "1"}
		for key, value := range sysctls {
			if err := os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0o644); err != nil {
				return fmt.Errorf("set %s in the node namespace: %w", key, err)
			}
		}
		return nil
	})
}

// teardownNetwork deletes the node namespace (and with it the veth pair, the
// bridge, its routes and every iptables rule made inside).
func teardownNetwork(ctx context.Context, l layout) error {
	var errs []string
	if _, err := os.Stat(l.netnsPath()); err == nil {
		if err := ipCmd(ctx, "netns", "del", l.netns()); err != nil {
			errs = append(errs, err.Error())
		}
	}
	// Deleting the namespace deletes the veth pair, asynchronously: the host
	// side may still be listed, then gone by the time we delete it.
	if _, err := net.InterfaceByName(l.hostVeth()); err == nil {
		// ip says "Cannot find device" when it cannot look the name up,
		// "No such device" when it is gone between its lookup and the delete.
		if err := ipCmd(ctx, "link", "del", l.hostVeth()); err != nil && !strings.Contains(err.Error(), "Cannot find device") && !strings.Contains(err.Error(), "No such device") {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove node network: %s", strings.Join(errs, "; "))
	}
	return nil
}

// checkRoutes fails with a Conflict when a host route overlaps one of the
// cluster's CIDRs: the cluster would either capture someone's traffic or
// send its own elsewhere.
func checkRoutes(c Config) error {
	routes, err := hostRoutes()
	if err != nil {
		return err
	}
	for _, want := range []struct{ flag, cidr string }{{"--pod-cidr", c.PodCIDR}, {"--service-cidr", c.ServiceCIDR}, {"the host-node link", c.LinkCIDR}} {
		n := mustCIDR(want.cidr)
		for _, r := range routes {
			if r.dst.IP.Equal(net.IPv4zero) {
				continue // the default route overlaps everything and is fine
			}
			if overlap(n, r.dst) {
				if owner := clusterOfLink(r.dev); owner != "" {
					return exitcode.Errorf(exitcode.Conflict, "%s %s overlaps the host route %s dev %s of local cluster %q: remove it (`kubeproof down --name %s`) or choose another %s", want.flag, want.cidr, r.dst, r.dev, owner, owner, want.flag)
				}
				return exitcode.Errorf(exitcode.Conflict, "%s %s overlaps the host route %s dev %s: choose another %s", want.flag, want.cidr, r.dst, r.dev, want.flag)
			}
		}
	}
	return nil
}

// linkPool is where links between host and node are taken from.
const linkPool = "10.250.0.0/16"

// chooseLink returns the first /30 of linkPool that overlaps neither a host
// route nor the cluster's own CIDRs.
func chooseLink(c Config, routes []route) (string, error) {
	taken := []*net.IPNet{mustCIDR(c.PodCIDR), mustCIDR(c.ServiceCIDR)}
	for _, r := range routes {
		if !r.dst.IP.Equal(net.IPv4zero) {
			taken = append(taken, r.dst)
		}
	}
	pool := mustCIDR(linkPool)
	for ip := pool.IP; pool.Contains(ip); ip = addIP(ip, 4) {
		link := &net.IPNet{IP: ip, Mask: net.CIDRMask(30, 32)}
		free := true
		for _, t := range taken {
			if overlap(link, t) {
				free = false
				break
			}
		}
		if free {
			return link.String(), nil
		}
	}
	return "", exitcode.Errorf(exitcode.Conflict, "no free /30 left in %s for the host-node link", linkPool)
}

type route struct {
	dst *net.IPNet
	dev string
}

// hostRoutes reads the main IPv4 routing table from /proc/net/route.
func hostRoutes() ([]route, error) {
	rows, err := hostchange.ProcFields("/proc/net/route", 1)
	if err != nil {
		return nil, err
	}
	var out []route
	for _, f := range rows {
		if len(f) < 8 {
			continue
		}
		dst, err1 := hexIPv4(f[1])
		mask, err2 := hexIPv4(f[7])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, route{dst: &net.IPNet{IP: dst, Mask: net.IPMask(mask)}, dev: f[0]})
	}
	return out, nil
}

// hexIPv4 decodes /proc/net's little-endian hex IPv4 notation.
func hexIPv4(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return nil, fmt.Errorf("bad address %q", s)
	}
	return net.IPv4(b[3], b[2], b[1], b[0]).To4(), nil
}

// listener is a listening TCP socket on the host.
type listener struct {
	ip    net.IP
	port  int
	inode string
}

// checkPorts fails with a Conflict when something already listens on a port
// the control plane needs, on its address or on every address.
func checkPorts(c Config) error {
	nw := c.network()
	ls, err := listeners()
	if err != nil {
		return err
	}
	want := []struct {
		what string
		port int
	}{
		{"kube-apiserver (--apiserver-port)", c.APIServerPort},
		{"kube-controller-manager", c.ControllerManagerPort},
		{"kube-scheduler", c.SchedulerPort},
	}
	if c.Runs(Registry) {
		want = append(want, []struct {
			what string
			port int
		}{{"the cluster's registry", c.RegistryPort}, {"the cluster's registry (its slow link)", c.RegistryPort + 1}}...)
	}
	for _, m := range c.etcdMembers(layout{name: c.Name}) {
		want = append(want, []struct {
			what string
			port int
		}{{m.name + " client", m.client}, {m.name + " peer", m.peer}, {m.name + " metrics", m.metrics}}...)
	}
	for _, w := range want {
		for _, l := range ls {
			if l.port != w.port || (!l.ip.IsUnspecified() && !l.ip.Equal(nw.hostIP)) {
				continue
			}
			owner := ""
			if pid := socketOwner(l.inode); pid > 0 {
				if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
					owner = fmt.Sprintf(" by %s (pid %d)", strings.TrimSpace(string(comm)), pid)
				}
			}
			return exitcode.Errorf(exitcode.Conflict, "port %d for %s is already in use on %s%s", w.port, w.what, l.ip, owner)
		}
	}
	return nil
}

func listeners() ([]listener, error) {
	var out []listener
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		rows, err := hostchange.ProcFields(file, 1)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		for _, f := range rows {
			if len(f) < 10 || f[3] != "0A" { // 0A = LISTEN
				continue
			}
			addr, portHex, ok := strings.Cut(f[1], ":")
			if !ok {
				continue
			}
			port, err := strconv.ParseUint(portHex, 16, 16)
			if err != nil {
				continue
			}
			var ip net.IP
			if len(addr) == 8 {
				ip, _ = hexIPv4(addr)
			} else if b, err := hex.DecodeString(addr); err == nil && len(b) == 16 {
				ip = net.IP(b)
				if allZero(b) {
					ip = net.IPv6unspecified
				}
			}
			if ip == nil {
				continue
			}
			out = append(out, listener{ip: ip, port: int(port), inode: f[9]})
		}
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// socketOwner finds the process holding a socket inode (0 if none found).
func socketOwner(inode string) int {
	target := "socket:[" + inode + "]"
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && link == target {
				return pid
			}
		}
	}
	return 0
}

// clusterOfLink names the local cluster whose host-node link dev is, if
// any: a cluster a killed run left keeps its routes, and the user should
// be told which one to remove rather than to pick other CIDRs.
func clusterOfLink(dev string) string {
	for _, name := range otherClusters("") {
		if (layout{name: name}).hostVeth() == dev {
			return name
		}
	}
	return ""
}
