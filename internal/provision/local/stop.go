package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/process"
)

var _ cluster.ComponentStopper = (*Provider)(nil)

// stoppable are the components StopComponent stops: the control plane
// behind the API server. The API server itself is not among them (the
// specs talk to it), nor the node's agents.
var stoppable = []string{Etcd, ControllerManager, Scheduler}

// StopComponent stops a control-plane process of the cluster and returns
// what starts it again, with the command line and log it had, and waits
// until it answers its health check. The state file follows, so that
// `down` knows the new process.
func (p *Provider) StopComponent(ctx context.Context, name string) (func(context.Context) error, error) {
	if !slices.Contains(stoppable, name) {
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
	if err := process.Terminate(rec.PID, 10*time.Second); err != nil {
		return nil, fmt.Errorf("stop %s: %w", name, err)
	}
	start := func(ctx context.Context) error {
		proc, err := process.Start(name, rec.Args, rec.Log, os.Environ())
		if err != nil {
			return fmt.Errorf("start %s again: %w", name, err)
		}
		if st, err := loadState(p.l.stateFile()); err == nil {
			for i := range st.Processes {
				if st.Processes[i].Name == name {
					st.Processes[i] = proc.Record
				}
			}
			if err := st.save(p.l.stateFile()); err != nil {
				return fmt.Errorf("start %s again: %w", name, err)
			}
		}
		s := &starter{st: st, l: p.l, procs: map[string]*process.Proc{name: proc}}
		return s.waitReady(ctx, name, componentTimeout, p.healthCheck(name))
	}
	return start, nil
}

// healthCheck is how `up` knows that a stoppable component is ready.
func (p *Provider) healthCheck(name string) func(context.Context) (string, error) {
	c := p.cfg
	host := c.network().hostIP.String()
	switch name {
	case Etcd:
		return etcdHealthy(c)
	case ControllerManager:
		return httpsHealthy(net.JoinHostPort(host, strconv.Itoa(c.ControllerManagerPort)))
	default:
		return httpsHealthy(net.JoinHostPort(host, strconv.Itoa(c.SchedulerPort)))
	}
}
