package config

import "testing"

func TestShapeDefaults(t *testing.T) {
	s := Shape{KubernetesVersion: "v1.34.1"}.WithDefaults()
	if s.Name != DefaultName || s.EtcdVersion != "v3.6.16" || s.PodCIDR != "10.244.0.0/16" || s.ServiceCIDR != "10.96.0.0/16" || s.CacheDir == "" {
		t.Errorf("defaults %+v", s)
	}
}
