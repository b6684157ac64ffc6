package framework

import (
	"testing"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// A spec's level comes from its labels: restricted unless it declares more.
func TestPodSecurityOf(t *testing.T) {
	if l := PodSecurityOf([]string{"spec:x", "claim:Y"}); l != podsecurity.LevelRestricted {
		t.Errorf("a spec that declares nothing needs %s", l)
	}
	for _, level := range []podsecurity.Level{podsecurity.LevelBaseline, podsecurity.LevelPrivileged} {
		if l := PodSecurityOf(append([]string{"spec:x"}, NeedsPodSecurity(level)...)); l != level {
			t.Errorf("a spec that declares %s needs %s", level, l)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("declaring restricted, which every spec gets, is accepted")
		}
	}()
	NeedsPodSecurity(podsecurity.LevelRestricted)
}

// Who is to blame for a refusal by PodSecurity: the cluster, when it
// enforced a stricter level than the spec needs (not checkable); kubeproof,
// when its Pod breaks the level the spec declared (a harness bug).
func TestStricterThanNeeded(t *testing.T) {
	for _, c := range []struct {
		need, enforced podsecurity.Level
		cluster        bool
	}{
		{podsecurity.LevelBaseline, podsecurity.LevelRestricted, true},
		{podsecurity.LevelPrivileged, podsecurity.LevelRestricted, true},
		{podsecurity.LevelPrivileged, podsecurity.LevelBaseline, true},
		{podsecurity.LevelRestricted, podsecurity.LevelRestricted, false},
		{podsecurity.LevelBaseline, podsecurity.LevelBaseline, false},
	} {
		if got := stricterThanNeeded(c.need, c.enforced); got != c.cluster {
			t.Errorf("need %s, %s enforced: the cluster's doing = %t, want %t", c.need, c.enforced, got, c.cluster)
		}
	}
}

func TestDescribe(t *testing.T) {
	if d := describe([]any{"create Pod %s", "web"}); d != "create Pod web" {
		t.Errorf("format and argument: %q", d)
	}
	if d := describe([]any{"read 100% of it"}); d != "read 100% of it" {
		t.Errorf("a description without arguments is formatted: %q", d)
	}
}
