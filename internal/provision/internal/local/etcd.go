package local

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// etcdMember is one member of the cluster's etcd: a process of its own with
// its ports and data directory.
type etcdMember struct {
	// name names the process and the member: etcd, etcd-1, etcd-2...
	name                  string
	client, peer, metrics int
	dataDir               string
}

// etcdMembers are the members of the cluster's etcd (--etcd-members): the
// first on EtcdPort, its peer and metrics ports after it, each next one
// three ports further.
func (c Config) etcdMembers(l layout) []etcdMember {
	n := max(c.EtcdMembers, 1)
	out := make([]etcdMember, n)
	for i := range out {
		m := etcdMember{name: Etcd, dataDir: l.etcdDataDir()}
		if i > 0 {
			m.name = fmt.Sprintf("%s-%d", Etcd, i)
			m.dataDir = filepath.Join(filepath.Dir(l.etcdDataDir()), m.name)
		}
		base := c.EtcdPort + 3*i
		m.client, m.peer, m.metrics = base, base+1, base+2
		out[i] = m
	}
	return out
}

// etcdNames are the process names of the etcd members.
func (c Config) etcdNames() []string {
	var names []string
	for _, m := range c.etcdMembers(layout{name: c.Name}) {
		names = append(names, m.name)
	}
	return names
}

// etcdClientURLs are the members' client URLs, as --etcd-servers takes them.
func (c Config) etcdClientURLs() []string {
	var urls []string
	for _, m := range c.etcdMembers(layout{name: c.Name}) {
		urls = append(urls, "https://"+net.JoinHostPort(c.network().hostIP.String(), strconv.Itoa(m.client)))
	}
	return urls
}

// etcdComponents are the etcd members as processes, with mutual TLS as
// kubeadm sets it up: a client without a certificate signed by the etcd CA
// is refused.
func etcdComponents(c Config, l layout, etcdBin string) []component {
	host := c.network().hostIP.String()
	url := func(scheme string, port int) string {
		return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
	}
	members := c.etcdMembers(l)
	var initial []string
	for i, m := range members {
		initial = append(initial, memberName(c, i)+"="+url("https", m.peer))
	}
	var out []component
	for i, m := range members {
		out = append(out, component{name: m.name, args: []string{etcdBin,
			"--name=" + memberName(c, i),
			"--data-dir=" + m.dataDir,
			"--listen-client-urls=" + url("https", m.client),
			"--advertise-client-urls=" + url("https", m.client),
			"--listen-peer-urls=" + url("https", m.peer),
			"--initial-advertise-peer-urls=" + url("https", m.peer),
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-state=new",
			"--initial-cluster-token=kubeproof-" + c.Name,
			"--listen-metrics-urls=" + url("http", m.metrics),
			"--client-cert-auth=true",
			"--trusted-ca-file=" + l.pki("etcd-ca.crt"),
			"--cert-file=" + l.pki("etcd-server.crt"),
			"--key-file=" + l.pki("etcd-server.key"),
			"--peer-client-cert-auth=true",
			"--peer-trusted-ca-file=" + l.pki("etcd-ca.crt"),
			"--peer-cert-file=" + l.pki("etcd-peer.crt"),
			"--peer-key-file=" + l.pki("etcd-peer.key"),
			"--snapshot-count=10000",
		}})
	}
	return out
}

// memberName is the etcd member name of member i (the cluster's name for
// the first, as with one member).
func memberName(c Config, i int) string {
	if i == 0 {
		return c.Name
	}
	return fmt.Sprintf("%s-%d", c.Name, i)
}
