package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// fakeProvider is a provider whose cluster is up or not, counting the
// bring-ups and removals asked of it.
type fakeProvider struct {
	up         bool
	ups, downs int
	// kubeconfig is the Info's kubeconfig once up.
	kubeconfig string
}

func (f *fakeProvider) Name() string { return "fake" }
func (f *fakeProvider) Up(context.Context) (*cluster.Info, error) {
	f.ups++
	f.up = true
	return &cluster.Info{Kubeconfig: f.kubeconfig}, nil
}
func (f *fakeProvider) Down(context.Context) error {
	f.downs++
	f.up = false
	return nil
}
func (f *fakeProvider) Info(context.Context) (*cluster.Info, error) {
	if !f.up {
		return nil, errors.New("not up")
	}
	return &cluster.Info{}, nil
}
func (f *fakeProvider) Status(context.Context) (cluster.Status, error) {
	return cluster.Status{Up: f.up}, nil
}

// The run removes only a cluster it brought up itself without --keep, and
// says so (the suites then skip their final namespace wait).
func TestClusterForRemovesOnlyWhatItMade(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                 string
		provider             string
		upBefore, keep       bool
		wantErr, wantRemoves bool
		wantUps, wantDowns   int
	}{
		{name: "up already", provider: "local", upBefore: true},
		{name: "made and removed", provider: "local", wantRemoves: true, wantUps: 1, wantDowns: 1},
		{name: "made and kept", provider: "local", keep: true, wantUps: 1},
		{name: "someone else's, unreachable", provider: "kubeconfig", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakeProvider{up: tc.upBefore}
			_, down, removes, err := ClusterFor(ctx, provision.Request{Provider: tc.provider}, p, tc.keep)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %t", err, tc.wantErr)
			}
			if err := down(); err != nil {
				t.Fatalf("down: %v", err)
			}
			if removes != tc.wantRemoves || p.ups != tc.wantUps || p.downs != tc.wantDowns {
				t.Errorf("removes %t, ups %d, downs %d; want %t, %d, %d", removes, p.ups, p.downs, tc.wantRemoves, tc.wantUps, tc.wantDowns)
			}
		})
	}
}
