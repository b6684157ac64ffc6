// Package bringup runs a provider's bring-up as named, timed steps with one
// context: each step's progress line and its entry in the cluster's
// ComponentStatus (the times `kubeproof up` prints and the bench reads)
// come from the same record, so they cannot disagree.
package bringup

import (
	"context"
	"sync"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// Steps records the steps of one bring-up.
type Steps struct {
	pr    *progress.Printer
	begin time.Time
	mu    sync.Mutex
	done  []cluster.ComponentStatus
}

// New starts the record; times are from now.
func New(pr *progress.Printer) *Steps {
	return &Steps{pr: pr, begin: time.Now()}
}

// Step is one named step of a bring-up.
type Step struct {
	// Name is what the progress line and ComponentStatus call it.
	Name string
	Run  func(ctx context.Context) error
}

// Run runs steps in order, each printed and recorded with its time, and
// stops at the first that fails.
func (s *Steps) Run(ctx context.Context, steps ...Step) error {
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		started := time.Now()
		done := s.pr.Step("%s", st.Name)
		err := st.Run(ctx)
		done(err)
		if err != nil {
			return err
		}
		s.Record(cluster.ComponentStatus{Name: st.Name, Started: started, ReadyIn: time.Since(started)})
	}
	return nil
}

// Record adds a step that ran elsewhere (a component started as its own
// process and became ready), and prints when it started and was ready,
// counted from the beginning of the bring-up.
func (s *Steps) Record(cs cluster.ComponentStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, cs)
	if cs.Process != "" {
		s.pr.Infof("%-30s started +%-7s ready +%s", cs.Name, progress.Round(cs.Started.Sub(s.begin)), progress.Round(cs.Started.Add(cs.ReadyIn).Sub(s.begin)))
	}
}

// Status returns the steps recorded, in the order they finished.
func (s *Steps) Status() []cluster.ComponentStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cluster.ComponentStatus(nil), s.done...)
}

// Since is how long ago the bring-up began.
func (s *Steps) Since() time.Duration { return time.Since(s.begin) }
