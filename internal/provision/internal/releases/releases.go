// Package releases is the table of the Kubernetes and etcd releases
// kubeproof builds and runs the clusters it makes with. Only provisioning
// needs it: a spec reads the release of the cluster it checks from that
// cluster's Info.
package releases

import (
	"sort"
	"strconv"
	"strings"
)

// DefaultKubernetesVersion is the release a cluster kubeproof makes runs
// when none is given: the newest kubeproof is tested with.
const DefaultKubernetesVersion = "v1.37.2"

// etcdReleases is the etcd kubeproof builds for each Kubernetes minor
// release: the newest patch of the etcd minor that release's kubeadm
// installs (its constants.DefaultEtcdVersion: 3.6 up to 1.36, 3.7 from 1.37).
var etcdReleases = map[string]string{
	"v1.34": "v3.6.16",
	"v1.35": "v3.6.16",
	"v1.36": "v3.6.16",
	"v1.37": "v3.7.3",
}

// SupportedKubernetesMinors are the minor releases kubeproof can build and
// run, oldest first.
func SupportedKubernetesMinors() []string {
	minors := make([]string, 0, len(etcdReleases))
	for m := range etcdReleases {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(i, j int) bool { return minorNumber(minors[i]) < minorNumber(minors[j]) })
	return minors
}

// EtcdVersionFor is the etcd release that goes with a Kubernetes release
// (v1.37.2 -> v3.7.3); a release kubeproof does not know gets the newest's.
func EtcdVersionFor(kubernetesVersion string) string {
	if v, ok := etcdReleases[kubernetesMinor(kubernetesVersion)]; ok {
		return v
	}
	return etcdReleases[kubernetesMinor(DefaultKubernetesVersion)]
}

// kubernetesMinor is "v1.37" of "v1.37.2".
func kubernetesMinor(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

func minorNumber(minor string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(minor, "v1."))
	return n
}
