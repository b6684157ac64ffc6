// Package noproxy keeps the traffic of kubeproof's clusters off a proxy the
// environment names. A CI runner or a laptop behind a company proxy sets
// HTTP_PROXY and HTTPS_PROXY; Go's clients (kubeproof's own, client-go's,
// the registry pushes) and the components kubeproof starts (containerd
// pulling from the registry beside the cluster, the kubelet) would then
// send requests for the addresses of a cluster kubeproof made (the node's
// link, Pod and Service ranges) to that proxy, off this machine, where they
// must never go. (kind passes its own network to its nodes' NO_PROXY.) NO_PROXY lists them, before any client reads
// the environment (Go's reads it once).
package noproxy

import (
	"os"
	"slices"
	"strings"
)

// Local are the addresses kubeproof uses on this machine whatever the
// cluster: loopback, and the local provider's node links (10.250.0.0/16),
// where its nodes, control plane and registries listen. A provider that
// makes a cluster adds that cluster's own ranges (Exempt) before it starts
// its components. Nothing else is exempted: a cluster kubeproof did not
// make is reached as kubectl reaches it, through the proxy if the
// environment says so.
var Local = []string{"localhost", "127.0.0.0/8", "::1", "10.250.0.0/16"}

var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}

// Exempt adds entries to NO_PROXY and no_proxy when the environment names
// a proxy; without one it changes nothing. Both get the user's entries of
// either and then the new ones, once each: programs differ in which of the
// two they read, and in which wins when both are set.
func Exempt(entries ...string) {
	if !slices.ContainsFunc(proxyVars, func(v string) bool { return os.Getenv(v) != "" }) {
		return
	}
	list := merge(merge(os.Getenv("NO_PROXY"), strings.Split(os.Getenv("no_proxy"), ",")), entries)
	_ = os.Setenv("NO_PROXY", list)
	_ = os.Setenv("no_proxy", list)
}

// merge returns list (comma-separated, as NO_PROXY is) with entries it
// lacks appended.
func merge(list string, entries []string) string {
	var have []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			have = append(have, e)
		}
	}
	for _, e := range entries {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(have, e) {
			have = append(have, e)
		}
	}
	return strings.Join(have, ",")
}
