package noproxy

import (
	"net/url"
	"testing"

	"golang.org/x/net/http/httpproxy"
)

func clearProxies(t *testing.T) {
	for _, v := range append(proxyVars, "NO_PROXY", "no_proxy") {
		t.Setenv(v, "")
	}
}

func TestExemptWithoutAProxyChangesNothing(t *testing.T) {
	clearProxies(t)
	Exempt(Local...)
	if got := httpproxy.FromEnvironment().NoProxy; got != "" {
		t.Errorf("NO_PROXY = %q with no proxy named, want it untouched", got)
	}
}

// The cluster's addresses go direct; anything else still goes through the
// proxy the user named, as Go's own clients decide it.
func TestExemptKeepsTheClustersAddressesOffTheProxy(t *testing.T) {
	clearProxies(t)
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("NO_PROXY", "corp.example, 10.250.0.0/16")
	Exempt(Local...)
	cfg := httpproxy.FromEnvironment()
	for _, c := range []struct {
		url    string
		direct bool
	}{
		{"http://10.250.0.1:5000/v2/", true}, // the registry beside a local cluster
		{"http://127.0.0.1:6443/", true},     // a kind cluster's API server, published here
		{"http://corp.example/", true},       // the user's own entry, kept
		{"http://10.96.0.10:80/", false},     // a range only a local cluster adds (below)
		{"http://172.18.0.2:6443/", false},   // a cluster kubeproof did not make: as kubectl
		{"http://203.0.113.7/", false},       // elsewhere: the user's proxy
	} {
		u, _ := url.Parse(c.url)
		p, err := cfg.ProxyFunc()(u)
		if err != nil {
			t.Fatal(err)
		}
		if (p == nil) != c.direct {
			t.Errorf("%s: proxy %v, want direct %t", c.url, p, c.direct)
		}
	}
	if n := len(cfg.NoProxy); n == 0 || cfg.NoProxy[:len("corp.example,10.250.0.0/16")] != "corp.example,10.250.0.0/16" {
		t.Errorf("NO_PROXY = %q: the user's entries first, once each", cfg.NoProxy)
	}

	// The local provider adds its cluster's ranges before it starts it.
	Exempt("10.96.0.0/16", "10.244.0.0/16")
	u, _ := url.Parse("http://10.96.0.10:80/")
	if p, _ := httpproxy.FromEnvironment().ProxyFunc()(u); p != nil {
		t.Errorf("a ClusterIP of a local cluster goes through the proxy %v", p)
	}
}
