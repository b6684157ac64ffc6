package podflow

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/kubectl"
)

// kubectl's own log of the requests it sent for pod.yaml (kubectl apply
// -v=8): what the client sent and what it got back, which a cluster
// without an audit log also shows.
type kubectlLogEvidence struct {
	// Sent are its requests in order, "METHOD path -> status" (paths
	// generalized, discovery and OpenAPI left out).
	Sent []string `json:"sent"`
	// Create is its request that wrote the Pod: the first POST, PUT or
	// PATCH to the namespace's Pods or to the Pod.
	Create kubectlLogRequest `json:"create"`
}

// One request as kubectl logged it.
type kubectlLogRequest struct {
	// Method, Path (generalized) and Code (the status code kubectl got).
	Method string `json:"method"`
	Path   string `json:"path"`
	Code   int    `json:"code"`
}

var kubectlLog = framework.DeclareEvidence[kubectlLogEvidence]("kubectlLog", specCreate)

// recordKubectlLog reads the requests out of kubectl's -v=8 log (its
// standard error). A log with no request kubeproof can read is a log it
// does not understand (another kubectl's format), not a kubectl that sent
// nothing: the Pod exists.
func recordKubectlLog(f *framework.Framework, stderr string) {
	ev, ok := readKubectlLog(stderr, func(path string) string {
		return f.Generalize(path, map[string]string{"/pods/" + podName: "/pods/{name}"})
	})
	if !ok {
		first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
		kubectlLog.Unobservable("kubectl apply -v=8 logged no request that kubeproof reads (first line of its log: %q)", first)
		return
	}
	kubectlLog.Record(ev)
}

// readKubectlLog is kubectlLog from kubectl's log, its paths generalized
// by generalize; ok is false when the log holds no request.
func readKubectlLog(stderr string, generalize func(string) string) (ev kubectlLogEvidence, ok bool) {
	exchanges := kubectl.Exchanges(stderr)
	for _, ex := range exchanges {
		u, err := url.Parse(ex.URL)
		if err != nil || strings.HasPrefix(u.Path, "/openapi") || u.Path == "/api" || u.Path == "/apis" {
			continue
		}
		path := generalize(u.Path)
		ev.Sent = append(ev.Sent, ex.Method+" "+path+" -> "+ex.Status)
		write := ex.Method == "POST" || ex.Method == "PUT" || ex.Method == "PATCH"
		if ev.Create.Method == "" && write && (strings.HasSuffix(path, "/pods") || strings.HasSuffix(path, "/pods/{name}")) {
			code, _ := strconv.Atoi(strings.Fields(ex.Status + " 0")[0])
			ev.Create = kubectlLogRequest{Method: ex.Method, Path: path, Code: code}
		}
	}
	return ev, len(exchanges) > 0
}
