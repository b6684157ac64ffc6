package create

import (
	"testing"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// fake is a provider that keeps the options it was made with.
type fake struct {
	cluster.Provider
	opts Options
}

func TestNewAppliesOptions(t *testing.T) {
	Register(Registration{Name: "test-fake", Makes: true, Reads: []Knob{KnobWorkers},
		New: func(o Options) (cluster.Provider, error) { return &fake{opts: o}, nil }})
	p, err := New("test-fake", WithShape(Shape{Name: "x"}), WithKind(Kind{Workers: 3}), WithLocal(Local{EtcdMembers: 3}))
	if err != nil {
		t.Fatal(err)
	}
	o := p.(*fake).opts
	if o.Shape.Name != "x" || o.Kind.Workers != 3 || o.Local.EtcdMembers != 3 || o.Progress == nil {
		t.Errorf("options %+v", o)
	}
	r, _ := Lookup("test-fake")
	if !r.ReadsKnob(KnobWorkers) || r.ReadsKnob(KnobKubeconfig) {
		t.Errorf("reads %v", r.Reads)
	}
	if _, err := New("no-such-provider"); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestShapeDefaults(t *testing.T) {
	s := Shape{KubernetesVersion: "v1.34.1"}.WithDefaults()
	if s.Name != DefaultName || s.EtcdVersion != "v3.6.16" || s.PodCIDR != "10.244.0.0/16" || s.ServiceCIDR != "10.96.0.0/16" || s.CacheDir == "" {
		t.Errorf("defaults %+v", s)
	}
}
