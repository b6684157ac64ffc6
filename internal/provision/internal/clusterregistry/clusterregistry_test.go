package clusterregistry

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestSpec(t *testing.T) {
	s := Spec{Host: "10.250.0.1", Port: 5000, Rate: DefaultRate, Dir: "/var/lib/kubeproof/x/registry", AccessLog: "/var/lib/kubeproof/x/logs/a.jsonl", Link: "a veth", Args: []string{"--verbose"}}
	args, err := s.Command()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{" registry serve ", "--listen 10.250.0.1:5000", "--shaped-listen 10.250.0.1:5001", "--shaped-rate 524288",
		"--dir /var/lib/kubeproof/x/registry", "--access-log /var/lib/kubeproof/x/logs/a.jsonl"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if args[len(args)-1] != "--verbose" || !IsCommand(args) || IsCommand([]string{"/k/etcd", "--name=x"}) {
		t.Errorf("command %q: extra flags last, and found again by IsCommand", line)
	}
	r := s.PullRegistry()
	if r.Address != "10.250.0.1:5000" || r.Shaped != "10.250.0.1:5001" || r.ShapedRate != DefaultRate ||
		r.Link != "a veth, the registry sending as fast as it can" || r.ShapedLink != "a veth, the registry sending at most 524288 bytes/s" ||
		r.Base != "10.250.0.1:5000/kubeproof/testapp:v1" || r.AccessLog != s.AccessLog {
		t.Errorf("pull registry %+v", r)
	}
	// A registry slowed everywhere says so in its link: a time measured
	// over it is not one over a link without a limit.
	s.Args = []string{"--rate=512k"}
	if r := s.PullRegistry(); r.Link != "a veth, the registry sending at most 512k bytes/s (--rate)" {
		t.Errorf("link with --rate: %q", r.Link)
	}
}

// Another server on the registry's port is not taken for it.
func TestAnswers(t *testing.T) {
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	}))
	defer registry.Close()
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer other.Close()
	spec := func(url string) Spec {
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
		p, _ := strconv.Atoi(port)
		return Spec{Host: host, Port: p}
	}
	if _, err := spec(registry.URL).Answers(context.Background()); err != nil {
		t.Errorf("a registry: %v", err)
	}
	if _, err := spec(other.URL).Answers(context.Background()); err == nil {
		t.Error("a server without the registry API header taken for a registry")
	}
}

// FreePort skips a port in use, and one whose next port is in use.
func TestFreePort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	p, err := FreePort("127.0.0.1", busy-1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p == busy-1 || p == busy {
		t.Errorf("FreePort from %d = %d, with %d in use", busy-1, p, busy)
	}
}

// The port of a registry of the user's on this machine (--image-registry
// at a loopback address, or at the nodes' way to this machine) is left to
// it: the cluster's registry takes neither it nor the port before it.
func TestUserPortIsLeftOut(t *testing.T) {
	for _, c := range []struct {
		image, host string
		want        int
	}{
		{"127.0.0.1:5001/kubeproof", "172.18.0.1", 5001},
		{"localhost:5000/kubeproof", "", 5000},
		{"[::1]:5002/x", "10.250.0.1", 5002},
		{"172.18.0.1:5003/kubeproof", "172.18.0.1", 5003},
		{"172.18.0.1:5003/kubeproof", "", 0},
		{"registry.example:5000/kubeproof", "172.18.0.1", 0},
		{"127.0.0.1/kubeproof", "172.18.0.1", 0},
		{"", "172.18.0.1", 0},
	} {
		if got := UserPort(c.image, c.host); got != c.want {
			t.Errorf("UserPort(%q, %q) = %d, want %d", c.image, c.host, got, c.want)
		}
	}
	for avoid, want := range map[int]int{0: DefaultPort, 5000: 5002, 5001: 5002, 5002: 5000, 4999: 5000} {
		if got := FirstPort(DefaultPort, avoid); got != want {
			t.Errorf("FirstPort(%d, avoid %d) = %d, want %d", DefaultPort, avoid, got, want)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close() // free, but named as the user's registry: FreePort passes it over
	user := l.Addr().(*net.TCPAddr).Port
	if p, err := FreePort("127.0.0.1", user, user); err != nil || p == user || p+1 == user {
		t.Errorf("FreePort from %d avoiding %d = %d, %v", user, user, p, err)
	}
}
