package local

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
	"golang.org/x/sync/errgroup"
)

var _ cluster.ComponentStopper = (*Provider)(nil)

// stoppable are the components StopComponent stops: the control plane
// behind the API server (each etcd member by its name). The API server
// itself is not among them (the specs talk to it), nor the node's agents.
func (c Config) stoppable() []string {
	return append(c.etcdNames(), ControllerManager, Scheduler)
}

// stopGrace is how long a component StopComponent stops may take to exit
// after SIGTERM before it is killed. All of etcd ("etcd") gets none: its
// graceful stop waits its request timeout (5 s plus two election timeouts,
// 7 s here) for open client streams to end, and the API server's watches
// never end, so every stop took the full 7 s. etcd refuses new requests
// from the first moment of that wait and every commit is in its fsynced
// WAL, so a kill stops it as surely and at once. One member of several
// ("etcd-1") stops gracefully: a leader hands its leadership over first,
// where a killed leader loses the proposals in flight, and a write waits
// etcd's request timeout before it fails; what a spec observes is then
// the election, not the majority.
func stopGrace(component string) time.Duration {
	if component == Etcd {
		return 0
	}
	return 10 * time.Second
}

// StopComponent stops a control-plane process of the cluster, or all of
// etcd's members for "etcd" (with one member, that member), and returns
// what starts them again as they were.
func (p *Provider) StopComponent(ctx context.Context, name string) (func(context.Context) error, error) {
	names := []string{name}
	if name == Etcd {
		names = p.cfg.etcdNames()
	}
	var starts []func(context.Context) error
	for _, n := range names {
		start, err := p.stopProcess(n, stopGrace(name))
		if err != nil {
			return nil, err
		}
		starts = append(starts, start)
	}
	return func(ctx context.Context) error {
		// All at once: an etcd member is healthy only with a majority up.
		g, gctx := errgroup.WithContext(ctx)
		for _, start := range starts {
			g.Go(func() error { return start(gctx) })
		}
		return g.Wait()
	}, nil
}

// restartMu orders the state file's updates of processes started again
// together (etcd's members).
var restartMu sync.Mutex

// stopProcess stops one control-plane process of the cluster and returns
// what starts it again, with the command line and log it had, and waits
// until it answers its health check. The state file follows, so that
// `down` knows the new process.
func (p *Provider) stopProcess(name string, grace time.Duration) (func(context.Context) error, error) {
	if stoppable := p.cfg.stoppable(); !slices.Contains(stoppable, name) {
		return nil, fmt.Errorf("the local provider stops only %s, not %s", strings.Join(stoppable, ", "), name)
	}
	st, err := loadState(p.l.stateFile())
	if err != nil {
		return nil, fmt.Errorf("stop %s: read the cluster's state: %w", name, err)
	}
	rec, ok := st.process(name)
	if !ok || !rec.Alive() {
		return nil, fmt.Errorf("stop %s: it is not running in local cluster %q", name, p.cfg.Name)
	}
	if err := process.Terminate(rec.PID, grace); err != nil {
		return nil, fmt.Errorf("stop %s: %w", name, err)
	}
	start := func(ctx context.Context) error {
		proc, err := process.Start(name, rec.Args, rec.Log, rec.Env)
		if err != nil {
			return fmt.Errorf("start %s again: %w", name, err)
		}
		if err := p.recordRestart(name, proc.Record); err != nil {
			return fmt.Errorf("start %s again: %w", name, err)
		}
		s := &starter{st: st, l: p.l, procs: map[string]*process.Proc{name: proc}}
		return s.waitReady(ctx, name, componentTimeout, p.healthCheck(name))
	}
	return start, nil
}

// recordRestart puts a process started again into the state file, in place
// of the one it replaces.
func (p *Provider) recordRestart(name string, rec process.Record) error {
	restartMu.Lock()
	defer restartMu.Unlock()
	st, err := loadState(p.l.stateFile())
	if err != nil {
		return err
	}
	for i := range st.Processes {
		if st.Processes[i].Name == name {
			st.Processes[i] = rec
		}
	}
	return st.save(p.l.stateFile())
}

// healthCheck is how `up` knows that a stoppable component is ready.
func (p *Provider) healthCheck(name string) func(context.Context) (string, error) {
	c := p.cfg
	host := c.network().hostIP.String()
	for _, m := range c.etcdMembers(p.l) {
		if m.name == name {
			return etcdHealthy(c, m)
		}
	}
	switch name {
	case ControllerManager:
		return httpsHealthy(net.JoinHostPort(host, strconv.Itoa(c.ControllerManagerPort)))
	default:
		return httpsHealthy(net.JoinHostPort(host, strconv.Itoa(c.SchedulerPort)))
	}
}
