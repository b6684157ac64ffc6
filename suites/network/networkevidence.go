package network

import "github.com/kubeproof/kubeproof/framework"

// Evidence: what the specs of network.go record, under the names the claims files use.

// Two Pods' IPs, and whether each reaches the other by it.
type podIPsEvidence struct {
	// Distinct: alpha and beta have different IPs.
	Distinct bool `json:"distinct"`
	// InNodePodCIDR: each IP is in the podCIDR of its Pod's node.
	InNodePodCIDR bool `json:"inNodePodCIDR"`
	// AlphaReachesBeta and BetaReachesAlpha: 3 of 3 requests from one to the
	// other's IP were answered by it.
	AlphaReachesBeta bool `json:"alphaReachesBeta"`
	BetaReachesAlpha bool `json:"betaReachesAlpha"`
	// Eth0HasPodIP: beta's eth0, as it reports it, has beta's Pod IP.
	Eth0HasPodIP bool `json:"eth0HasPodIP"`
	// PodCIDR is alpha's node's podCIDR.
	PodCIDR string `json:"podCIDR"`
}

// The host end of a Pod's veth pair: the link on the Pod's node whose
// index is the iflink of the Pod's eth0.
type hostVethEvidence struct {
	// PodEth0IsPair: beta's eth0 is one end of a pair (it has a peer index);
	// PeerIndex is the peer's interface index.
	PodEth0IsPair bool `json:"podEth0IsPair"`
	PeerIndex     int  `json:"peerIndex"`
	// Found: the node has a link of that index.
	Found bool `json:"found"`
	// Name, Kind and Master are that link's name, kind (e.g. veth) and master
	// (e.g. a bridge), from ip -d link.
	Name   string `json:"name,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Master string `json:"master,omitempty"`
}

// How server-b's endpoint followed its readiness, from the EndpointSlice
// watch (windows of Timeout.Endpoint).
type readinessEvidence struct {
	// NotReadyBeforeFirstPass: no EndpointSlice marked server-b's endpoint
	// ready before its Pod was Ready (in etcd's order of writes).
	NotReadyBeforeFirstPass bool `json:"notReadyBeforeFirstPass"`
	// ListedNotReadyBeforePass: the endpoint was listed, marked not
	// ready, before the Pod was Ready.
	ListedNotReadyBeforePass bool `json:"listedNotReadyBeforePass"`
	// NotReadyInSlice: the endpoint was marked not ready within WindowSeconds
	// of server-b's readiness turned off; NotReadyInSliceAfterMs is how long
	// that took.
	NotReadyInSlice        bool    `json:"notReadyInSlice"`
	NotReadyInSliceAfterMs float64 `json:"notReadyInSliceAfterMs"`
	// ReadyAgainInSlice: it was marked ready again within WindowSeconds of
	// readiness turned back on; ReadyInSliceAfterMs is how long that took.
	ReadyAgainInSlice   bool    `json:"readyAgainInSlice"`
	ReadyInSliceAfterMs float64 `json:"readyInSliceAfterMs"`
	// WindowSeconds is each wait's limit (Timeout.Endpoint).
	WindowSeconds float64 `json:"windowSeconds"`
}

// Who answered requests to the Service's ClusterIP, at each stage.
type trafficEvidence struct {
	// Reached: some request through the ClusterIP reached a Pod of the
	// Service within Timeout.Traffic.
	Reached bool `json:"reached"`
	// BothReady is the answers by Pod to 60 requests through the ClusterIP
	// with both servers ready; BothServed: both answered some.
	BothReady  string `json:"bothReady"`
	BothServed bool   `json:"bothServed"`
	// WhileBNotReady is the same once server-b was not ready;
	// OnlyReadyServed: server-a answered all of them.
	WhileBNotReady  string `json:"whileBNotReady"`
	OnlyReadyServed bool   `json:"onlyReadyServed"`
	// AfterBReadyAgain is the same once server-b was ready again;
	// BothServedAgain: both answered some.
	AfterBReadyAgain string `json:"afterBReadyAgain"`
	BothServedAgain  bool   `json:"bothServedAgain"`
	// ProxyLagDownMs and ProxyLagUpMs are how long traffic took to leave
	// server-b after it turned not ready, and to come back after it turned
	// ready.
	ProxyLagDownMs float64 `json:"proxyLagDownMs"`
	ProxyLagUpMs   float64 `json:"proxyLagUpMs"`
	// UnknownResponders counts answers from no Pod of the Service;
	// FailedRequests the requests that failed; LastError the last failure.
	UnknownResponders int    `json:"unknownResponders"`
	FailedRequests    int    `json:"failedRequests"`
	LastError         string `json:"lastError,omitempty"`
}

var (
	podIPs    = framework.DeclareEvidence[podIPsEvidence]("podIPs", specPodIPs)
	hostVeth  = framework.DeclareEvidence[hostVethEvidence]("hostVeth", specPodIPs)
	readiness = framework.DeclareEvidence[readinessEvidence]("readiness", specReadiness)
	traffic   = framework.DeclareEvidence[trafficEvidence]("traffic", specReadiness)
)
