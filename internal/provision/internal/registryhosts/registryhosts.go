// Package registryhosts writes containerd's registry host configuration
// (one hosts.toml per registry, in the directory of the CRI plugin's
// registry.config_path) for the nodes of the clusters kubeproof makes.
//
// Two registries need one: the cluster's --image-registry, when it speaks
// plain HTTP or lives on this machine's loopback (which a kind node reaches
// at its gateway); and kubeproof.local, the name our images are loaded
// under, which no registry answers to. A pull of a kubeproof.local image
// that is not loaded (the kubelet spec's missing image, or images removed
// on purpose) must fail here, at a closed loopback port, rather than as a
// DNS query for kubeproof.local that leaves the machine.
package registryhosts

import (
	"cmp"
	"fmt"
	"net"
	"strings"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
)

// Nowhere is where pulls from kubeproof.local go: the discard port on
// loopback, where nothing of ours listens, so the pull is refused at once.
const Nowhere = "http://127.0.0.1:9"

// NodeAddress is where a node whose way to this machine is gateway reaches
// the cluster's registry when that registry is on this machine's loopback
// (host:port), or "" when it is elsewhere. A registry serving the nodes
// must listen there too.
func NodeAddress(s config.Shape, gateway string) string {
	host, _, _ := strings.Cut(s.ImageRegistry, "/")
	if h, port, err := net.SplitHostPort(host); err == nil && isLoopback(h) {
		return net.JoinHostPort(gateway, port)
	}
	if isLoopback(host) {
		return gateway
	}
	return ""
}

// Files are the hosts.toml files (registry host -> content) for a node
// whose way to this machine is gateway ("127.0.0.1" for a node that is this
// machine).
func Files(s config.Shape, gateway string) map[string]string {
	files := map[string]string{images.LoadedRegistry: hostsFile(Nowhere, false)}
	if s.ImageRegistry == "" {
		return files
	}
	host, _, _ := strings.Cut(s.ImageRegistry, "/")
	server := cmp.Or(NodeAddress(s, gateway), host)
	if server == host && !s.InsecureRegistry {
		return files // a secure registry the node reaches by its name: containerd's defaults do
	}
	scheme := "https"
	if s.InsecureRegistry {
		scheme = "http"
	}
	files[host] = hostsFile(scheme+"://"+server, s.InsecureRegistry)
	return files
}

// PlainHTTP is the hosts.toml of a registry on this machine that speaks
// plain HTTP at addr (host:port), as the one kubeproof serves beside a
// cluster does; containerd would speak HTTPS to it otherwise.
func PlainHTTP(addr string) string { return hostsFile("http://"+addr, true) }

func hostsFile(server string, insecure bool) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  skip_verify = %t\n", server, server, insecure)
}

// Server is the server line's value of a hosts file.
func Server(file string) string {
	first, _, _ := strings.Cut(file, "\n")
	return strings.Trim(strings.TrimPrefix(first, "server = "), `"`)
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
