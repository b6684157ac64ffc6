package network

import (
	"encoding/json"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cnitrace"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
)

// The spec of this file.
const specCNICalls = "network-cni-calls"

var _ = ginkgo.Describe("CNI calls", func() {
	f := framework.New("cni")

	ginkgo.It("who runs the CNI plugin for a Pod's sandbox, and how long the plugin chain takes, seen from the plugin's side",
		framework.Checks(specCNICalls, framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			if !f.Has(cluster.NodeExec) || f.Cluster.CNITraceLog == "" {
				cniCalls.Unobservable("the pod network of this cluster has no call trace (kubeproof's clusters put kubeproof-cni-trace in its plugin chain)")
				return
			}
			pods := startReady(ctx, f, f.RecordPods(ctx), appPod("traced", nil))
			p := pods["traced"].Pod
			raw, err := f.Cluster.RunOnNode(ctx, p.Spec.NodeName, "cat", f.Cluster.CNITraceLog)
			framework.ExpectNoError(err, "read the CNI call trace on node %s", p.Spec.NodeName)
			ev := cniCallsEvidence{}
			var first, last *cnitrace.Call
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var c cnitrace.Call
				if json.Unmarshal([]byte(line), &c) != nil || c.PodNamespace != f.Namespace || c.PodName != p.Name || c.Command != "ADD" {
					continue
				}
				switch c.Position {
				case "first":
					ev.Adds++
					first = &c
				case "last":
					last = &c
				}
			}
			if first == nil || last == nil {
				cniCalls.Unobservable("the trace on node %s has no ADD for Pod %s/%s from both ends of the chain", p.Spec.NodeName, f.Namespace, p.Name)
				return
			}
			ev.CallerComm, ev.CallerExe, ev.ContainerID = first.CallerComm, first.CallerExe, first.ContainerID
			ev.AddMs = framework.Millis(last.At.Sub(first.At))
			if cs, err := f.RuntimeContainers(ctx, p.Name); err == nil && len(cs) > 0 && cs[0].Kind == "sandbox" {
				ev.SandboxCreatedToAddMs = framework.Millis(first.At.Sub(cs[0].CreatedAt))
				for _, c := range cs {
					if c.Kind == "container" {
						before := first.At.Before(c.CreatedAt)
						ev.AddBeforeAppContainer = &before
						break
					}
				}
			}
			cniCalls.Record(ev)
		})
})

// Evidence: what the specs above record, under the names the claims files use.

// The CNI ADD of one Pod's sandbox, from the trace plugin at both ends of
// the node's plugin chain.
type cniCallsEvidence struct {
	// Adds counts the ADD calls for the Pod (one per sandbox).
	Adds int `json:"adds"`
	// CallerComm and CallerExe name the process that ran the plugin.
	CallerComm string `json:"callerComm"`
	CallerExe  string `json:"callerExe"`
	// ContainerID is the sandbox's container ID the first ADD named.
	ContainerID string `json:"containerID"`
	// AddMs is the time from the first plugin of the chain to the last.
	AddMs float64 `json:"addMs"`
	// SandboxCreatedToAddMs is from the runtime's record of the sandbox
	// container to the ADD (negative: the network came first).
	SandboxCreatedToAddMs float64 `json:"sandboxCreatedToAddMs"`
	// AddBeforeAppContainer: the ADD came before the runtime created the
	// Pod's application container (unset when the runtime's record was
	// not read).
	AddBeforeAppContainer *bool `json:"addBeforeAppContainer,omitempty"`
}

var cniCalls = framework.DeclareEvidence[cniCallsEvidence]("cniCalls", specCNICalls)
