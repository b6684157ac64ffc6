package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cnitrace"
)

// First in the chain it answers ADD with an empty result of the network's
// version; later it passes the previous result on unchanged; every call is
// one line of its log, naming the Pod from CNI_ARGS and the caller.
func TestTracePassesResultsAndLogsCalls(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.jsonl")
	env := func(cmd string) func(string) string {
		return func(k string) string {
			return map[string]string{"CNI_COMMAND": cmd, "CNI_CONTAINERID": "abc",
				"CNI_ARGS":  "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=web;K8S_POD_INFRA_CONTAINER_ID=abc",
				"CNI_NETNS": "/var/run/netns/cni-1", "CNI_IFNAME": "eth0"}[k]
		}
	}
	var out bytes.Buffer
	first := `{"cniVersion":"0.4.0","name":"n","type":"kubeproof-cni-trace","position":"first","log":"` + log + `"}`
	if err := run(strings.NewReader(first), &out, env("ADD"), os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"cniVersion":"0.4.0"}` {
		t.Errorf("first ADD printed %s", got)
	}
	out.Reset()
	prev := `{"cniVersion":"0.4.0","ips":[{"version":"4","address":"10.244.0.5/24"}]}`
	last := `{"cniVersion":"0.4.0","name":"n","type":"kubeproof-cni-trace","position":"last","log":"` + log + `","prevResult":` + prev + `}`
	if err := run(strings.NewReader(last), &out, env("ADD"), os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if out.String() != prev {
		t.Errorf("last ADD printed %s, want the previous result %s", out.String(), prev)
	}
	out.Reset()
	if err := run(strings.NewReader(first), &out, env("DEL"), os.Getpid()); err != nil || out.Len() != 0 {
		t.Errorf("DEL: %v, printed %q", err, out.String())
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3: %s", len(lines), data)
	}
	var c cnitrace.Call
	if err := json.Unmarshal([]byte(lines[1]), &c); err != nil {
		t.Fatal(err)
	}
	if c.Command != "ADD" || c.Position != "last" || c.PodNamespace != "ns" || c.PodName != "web" || c.CallerPID != os.Getpid() || c.CallerComm == "" {
		t.Errorf("logged %+v", c)
	}
	// What it received: the network, namespace and interface, the
	// addresses the chain returned, and its own program.
	if c.Network != "n" || c.Netns != "/var/run/netns/cni-1" || c.IfName != "eth0" || len(c.IPs) != 1 || c.IPs[0] != "10.244.0.5/24" || c.Exe == "" {
		t.Errorf("logged %+v", c)
	}
}
