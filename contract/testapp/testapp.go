// Package testapp is the wire format of kubeproof-testapp: what its server
// answers and what its fetch mode prints. The program and the specs that
// read its output share it, so the two cannot drift apart.
package testapp

import (
	"strings"
	"time"
)

// Identity is the server's answer to GET /.
type Identity struct {
	App          string    `json:"app"`
	Hostname     string    `json:"hostname"`
	PodName      string    `json:"podName,omitempty"`
	PodNamespace string    `json:"podNamespace,omitempty"`
	PodIP        string    `json:"podIP"`
	Ready        bool      `json:"ready"`
	Healthy      bool      `json:"healthy"`
	Started      bool      `json:"started"`
	StartedAt    time.Time `json:"startedAt"`
	Path         string    `json:"path"`
	// Interfaces are the network interfaces the process sees, with their
	// addresses: a Pod's own network namespace.
	Interfaces map[string][]string `json:"interfaces,omitempty"`
	// PeerIndex maps each interface that is one end of a pair (a veth) to
	// the index of the other end, which lives in another network
	// namespace (the interface's iflink).
	PeerIndex map[string]int `json:"peerIndex,omitempty"`
}

// FetchResult is what `kubeproof-testapp fetch` prints: who answered how often. Only answers that
// identify as kubeproof-testapp count as responses; anything else is an
// error, because an unknown responder is not the workload under test.
type FetchResult struct {
	URL       string         `json:"url"`
	Requests  int            `json:"requests"`
	Responses map[string]int `json:"responses"`
	// Errors are requests that got no answer from a test app: no
	// connection, a timeout, or an unknown responder.
	Errors int `json:"errors"`
	// Unknown are the answers from something that is not a test app.
	Unknown   int    `json:"unknown"`
	LastError string `json:"lastError,omitempty"`
	// Last is the last identity received.
	Last *Identity `json:"last,omitempty"`
}

// HasAddr reports whether addrs (CIDR notation, as Interfaces lists them)
// hold ip.
func HasAddr(addrs []string, ip string) bool {
	for _, a := range addrs {
		if ip != "" && strings.HasPrefix(a, ip+"/") {
			return true
		}
	}
	return false
}

// HasAddr reports whether any of the server's interfaces holds ip.
func (i *Identity) HasAddr(ip string) bool {
	for _, addrs := range i.Interfaces {
		if HasAddr(addrs, ip) {
			return true
		}
	}
	return false
}

// Proc is what `kubeproof-testapp proc` reports about its own process.
type Proc struct {
	// Namespaces maps a namespace kind (net, ipc, uts, pid, mnt, cgroup)
	// to its /proc/self/ns link, e.g. "ipc:[4026532281]".
	Namespaces map[string]string `json:"namespaces"`
	// Seccomp is the Seccomp field of /proc/self/status: 0 disabled, 1
	// strict, 2 filter.
	Seccomp    string `json:"seccomp"`
	NoNewPrivs string `json:"noNewPrivs"`
	Hostname   string `json:"hostname"`
	Error      string `json:"error,omitempty"`
}
