package cni

import (
	"encoding/json"
	"net"
	"reflect"
	"testing"
)

func TestConflist(t *testing.T) {
	data, err := Conflist(Network{Name: "n", Bridge: "b0", PodCIDR: "10.244.1.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	bridge := conf.Plugins[0]
	if bridge["bridge"] != "b0" || bridge["ipMasq"] != false {
		t.Errorf("bridge plugin = %v", bridge)
	}
	if _, ok := bridge["ipam"].(map[string]any)["dataDir"]; ok {
		t.Error("dataDir set without IPAMDataDir")
	}
	if _, err := Conflist(Network{PodCIDR: "nope"}); err == nil {
		t.Error("bad CIDR accepted")
	}
}

func TestRoutes(t *testing.T) {
	_, kind, _ := net.ParseCIDR("172.18.0.0/16")
	peers := []Peer{
		{Name: "self", PodCIDR: "10.244.0.0/24", Address: "172.18.0.2"},
		{Name: "w2", PodCIDR: "10.244.2.0/24", Address: "172.18.0.4"},
		{Name: "w1", PodCIDR: "10.244.1.0/24", Address: "172.18.0.3"},
		{Name: "sim", PodCIDR: "10.244.9.0/24", Address: "10.250.9.9"}, // not attached
		{Name: "new", Address: "172.18.0.5"},                           // no pod CIDR yet
	}
	got := Routes("self", peers, []*net.IPNet{kind})
	want := []Route{{"10.244.1.0/24", "172.18.0.3"}, {"10.244.2.0/24", "172.18.0.4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Routes = %v, want %v", got, want)
	}
}
