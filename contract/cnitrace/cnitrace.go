// Package cnitrace is the log format of kubeproof-cni-trace, the CNI plugin
// the clusters kubeproof makes have first and last in their plugin chain:
// the plugin writes it, the specs read it. It imports nothing of the
// project, so that the plugin stays small and quick to start.
package cnitrace

import "time"

// Plugin is the plugin's binary name in a node's CNI bin directory.
const Plugin = "kubeproof-cni-trace"

// Call is one call of the plugin: one JSON line of the log that
// cluster.Info.CNITraceLog names.
type Call struct {
	Command      string    `json:"command"`
	Position     string    `json:"position"`
	ContainerID  string    `json:"containerID"`
	PodNamespace string    `json:"podNamespace,omitempty"`
	PodName      string    `json:"podName,omitempty"`
	At           time.Time `json:"at"`
	// The process that ran the plugin: its PID, name and executable.
	CallerPID  int    `json:"callerPID"`
	CallerComm string `json:"callerComm"`
	CallerExe  string `json:"callerExe,omitempty"`
	// What the plugin received: the network's name in its configuration,
	// the network namespace (CNI_NETNS) and the interface name
	// (CNI_IFNAME) it was given, and, at the last position of an ADD, the
	// addresses the plugins before it returned (prevResult's ips).
	Network string   `json:"network,omitempty"`
	Netns   string   `json:"netns,omitempty"`
	IfName  string   `json:"ifName,omitempty"`
	IPs     []string `json:"ips,omitempty"`
	// Exe is the plugin's own program, as the runtime ran it.
	Exe string `json:"exe,omitempty"`
}
