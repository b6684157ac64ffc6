package probes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/observer"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/framework"
)

// DefaultTimeout bounds a probe that gives none; DefaultWait a wait.
const (
	DefaultTimeout = 3 * time.Minute
	DefaultWait    = time.Minute
)

// run is one probe's run: its clients, its observers, and the time its
// first step began (every time in its evidence is relative to it).
type run struct {
	f     *framework.Framework
	p     probe.LoadedProbe
	env   *observer.Env
	obs   map[string]observer.Recorder
	steps map[string]probe.StepResult
	// started starts again the components a step stopped; restored
	// restarts as they were those a step restarted with a change.
	started, restored map[string]func(context.Context) error
	// down are the components a step stopped and none started again.
	down map[string]bool
}

// runProbe runs p in f's namespace: it starts the observers, takes the steps
// and records the evidence of both. A step that fails (and does not allow
// failure) stops the probe as an unmet precondition: its claims are not
// checkable, naming the step, and the evidence seen until then is kept;
// unless the API server no longer answers: then the spec fails, and its
// claims are in error (an unreachable cluster).
func runProbe(ctx context.Context, f *framework.Framework, p probe.LoadedProbe) {
	timeout, err := probe.ParseTimeout(p.Timeout, DefaultTimeout)
	framework.ExpectNoError(err, "probe %s", p.ID)
	ctx, cancel := context.WithTimeout(ctx, framework.Scale(timeout))
	defer cancel()

	refused := refusedScope(f, p)
	for _, c := range p.Requires {
		if refused == "" && !f.Cluster.Has(c) {
			refused = fmt.Sprintf("probe %s requires %s: %s", p.ID, c, f.Cluster.Missing(c))
		}
	}
	if refused != "" {
		for _, d := range p.Evidence(evidence.Source{}) {
			framework.ProbeUnobservable(d.Name, refused)
		}
		return
	}
	r := &run{f: f, p: p, obs: map[string]observer.Recorder{}, steps: map[string]probe.StepResult{},
		started: map[string]func(context.Context) error{}, restored: map[string]func(context.Context) error{}, down: map[string]bool{}}
	r.env = &observer.Env{Client: f.Client, RESTConfig: f.RESTConfig, Namespace: f.Namespace, Cluster: f.Cluster,
		APITimeout: framework.Timeout.API, AuditTimeout: framework.Timeout.Audit}
	r.env.Dynamic, err = dynamic.NewForConfig(f.RESTConfig)
	framework.ExpectNoError(err, "dynamic client")
	dc, err := discovery.NewDiscoveryClientForConfig(f.RESTConfig)
	framework.ExpectNoError(err, "discovery client")
	r.env.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	r.env.Start = time.Now()
	r.env.StepStarts = map[string]time.Time{}
	for _, o := range p.Observe {
		ob, err := r.startObserver(ctx, o)
		if err != nil {
			framework.ProbeUnobservable(o.Name, err.Error())
			continue
		}
		r.obs[o.Name] = ob
	}
	// The evidence is recorded however the probe ends: what was seen
	// before a step failed still decides the claims about it.
	defer r.record()
	names := p.StepNames()
	starts := map[string]time.Time{}
	for i, s := range p.Steps {
		res, err := r.step(ctx, s)
		starts[names[i]] = res.startedAt
		r.env.StepStarts[names[i]] = res.startedAt
		// A wait's since may name the wait itself (its own start, said on
		// purpose), so its start is known by now.
		res.At = r.env.Millis(res.startedAt)
		if s.Wait != nil && s.Wait.Since != "" {
			// Validated: an earlier step, so it has started.
			res.Took = ms(starts[s.Wait.Since], res.endedAt)
		}
		if res.Dropped == nil {
			res.Dropped = []string{}
		}
		r.steps[names[i]] = res.StepResult
		for _, ob := range r.obs {
			if w, ok := ob.(observer.StepReader); ok {
				w.AfterStep(ctx, names[i])
			}
		}
		if err != nil {
			if lost := r.clusterLost(ctx); lost != nil {
				// The spec fails with nothing recorded: its claims are in
				// error (an unreachable cluster), not judged on what a
				// dead connection left in the steps and observers.
				r.discard()
				framework.ExpectNoError(lost, "probe %s, step %s failed (%v)", p.ID, names[i], err)
			}
		}
		if err != nil && !s.AllowFailure {
			r.record()
			framework.Unmet("probe "+p.ID, "step "+names[i], err.Error())
		}
	}
}

// record records the steps and every observer's evidence (once).
func (r *run) record() {
	if r.obs == nil {
		return
	}
	framework.RecordProbeEvidence(probe.StepsEvidence, r.steps)
	for _, o := range r.p.Observe {
		ob, ok := r.obs[o.Name]
		if !ok {
			continue
		}
		v, err := ob.Evidence()
		ob.Stop()
		if err != nil {
			framework.ProbeUnobservable(o.Name, err.Error())
			continue
		}
		framework.RecordProbeEvidence(o.Name, v)
	}
	r.obs = nil
}

// discard stops the observers and records nothing of the probe.
func (r *run) discard() {
	for _, ob := range r.obs {
		ob.Stop()
	}
	r.obs = nil
}

type stepResult struct {
	probe.StepResult
	startedAt, endedAt time.Time
}

// step takes one step; the result's code is that of its last request.
func (r *run) step(ctx context.Context, s probe.Step) (res stepResult, err error) {
	res.startedAt = time.Now()
	defer func() {
		res.endedAt = time.Now()
		res.Took = ms(res.startedAt, res.endedAt)
		if err != nil {
			// A command's message is its output; a request's, its error.
			if res.Message == "" {
				res.Message = err.Error()
			}
			var st apierrors.APIStatus
			if errors.As(err, &st) {
				res.Code = int(st.Status().Code)
				res.Reason = string(st.Status().Reason)
			}
		}
	}()
	switch {
	case s.Apply != nil:
		res.Code, res.Dropped, err = r.apply(ctx, s.Apply)
	case s.Patch != nil:
		res.Code, err = r.patch(ctx, s.Patch)
	case s.Delete != nil:
		res.Code, err = r.delete(ctx, s.Delete)
	case s.Wait != nil:
		err = r.wait(ctx, s.Wait)
	case s.Kubectl != nil:
		res, err = r.kubectlStep(ctx, s, s.Kubectl, res)
	case s.StopComponent != "":
		// The framework starts it again when the spec ends, if no step did.
		r.started[s.StopComponent] = r.f.StopComponent(ctx, s.StopComponent)
		r.down[s.StopComponent] = true
	case s.StartComponent != "":
		if err = r.started[s.StartComponent](ctx); err == nil {
			delete(r.down, s.StartComponent)
		}
	case s.RestartComponent != nil:
		err = r.restartComponent(ctx, s.RestartComponent)
	case s.RestoreComponent != "":
		if restore, ok := r.restored[s.RestoreComponent]; ok {
			err = restore(ctx)
		} else {
			err = fmt.Errorf("%s was not restarted by an earlier step", s.RestoreComponent)
		}
	case s.AddComponent != nil:
		err = r.f.StartExtraComponent(ctx, s.AddComponent.Component, s.AddComponent.Name, s.AddComponent.Args)
	case s.Signal != nil:
		err = r.signal(ctx, s.Signal)
	case s.Exec != nil:
		args := []string{"exec", s.Exec.Pod}
		if s.Stdin != "" || s.StdinFile != "" {
			args = append(args, "-i")
		}
		args = append(append(args, containerArg(s.Exec.Container)...), "--")
		res, err = r.kubectlStep(ctx, s, append(args, s.Exec.Command...), res)
	}
	return res, err
}

// kubectlStep runs a kubectl or exec step, keeping res's start.
func (r *run) kubectlStep(ctx context.Context, s probe.Step, args []string, res stepResult) (stepResult, error) {
	out, err := r.kubectl(ctx, s, args)
	out.startedAt = res.startedAt
	return out, err
}

func containerArg(c string) []string {
	if c == "" {
		return nil
	}
	return []string{"-c", c}
}

// startObserver starts an observer once the cluster has what its kind
// needs.
func (r *run) startObserver(ctx context.Context, o probe.Observer) (observer.Recorder, error) {
	if o.Spec == nil {
		return nil, fmt.Errorf("observer %s has no kind", o.Name)
	}
	for _, c := range o.Needs() {
		if !r.f.Cluster.Has(c) {
			return nil, fmt.Errorf("the observer needs %s: %s", c, r.f.Cluster.Missing(c))
		}
	}
	return o.Spec.Start(ctx, r.env)
}

// kubectl runs the cluster's kubectl in the probe's namespace, in the
// claims file's directory, as the run's user or as the step says, with its
// standard input and environment.
func (r *run) kubectl(ctx context.Context, s probe.Step, args []string) (res stepResult, err error) {
	k := r.f.Kubectl
	if s.As != nil {
		if k, err = r.kubectlAs(ctx, *s.As); err != nil {
			return res, err
		}
	}
	k.Dir = filepath.Dir(r.p.Path)
	if len(s.Env) > 0 {
		// kubectl looks in $HOME for a configuration of its own: an empty
		// one, unless the step sets it, so that a variable unset does not
		// turn to the user's files on this machine.
		k.Env = append(k.Env, "HOME="+ginkgo.GinkgoT().TempDir())
	}
	for name, v := range s.Env {
		if v == nil {
			k.Unset = append(k.Unset, name)
			continue
		}
		k.Env = append(k.Env, name+"="+*v)
	}
	var stdin io.Reader
	switch {
	case s.Stdin != "":
		stdin = strings.NewReader(s.Stdin)
	case s.StdinFile != "":
		data, err := os.ReadFile(r.p.Relative(s.StdinFile))
		if err != nil {
			return res, fmt.Errorf("stdinFile: %w", err)
		}
		stdin = bytes.NewReader(data)
	}
	out, err := k.Run(ctx, stdin, append([]string{"-n", r.f.Namespace}, args...)...)
	if err != nil {
		return res, err
	}
	res.Code, res.Stdout, res.Stderr = out.ExitCode, out.Stdout, out.Stderr
	res.Message = strings.TrimSpace(out.Stdout + out.Stderr)
	if out.ExitCode != 0 {
		return res, fmt.Errorf("kubectl %s: exit %d: %s", strings.Join(args, " "), out.ExitCode, res.Message)
	}
	return res, nil
}

// wait waits on an object observer until its field meets the condition
// (or the object is deleted).
func (r *run) wait(ctx context.Context, w *probe.Wait) error {
	timeout, err := probe.ParseTimeout(w.Timeout, DefaultWait)
	if err != nil {
		return err
	}
	ob, ok := r.obs[w.Observer].(observer.Waiter)
	if !ok {
		return fmt.Errorf("observer %s is not watching (see its evidence)", w.Observer)
	}
	timeout = framework.Scale(timeout)
	if w.Deleted {
		return ob.WaitDeleted(ctx, timeout, w.Observer+": deleted")
	}
	c := *w.Condition
	return ob.WaitField(ctx, timeout, fmt.Sprintf("%s: %s %s", w.Observer, w.Field, c.Want()), w.Field, c.Holds)
}

// ms is the time from start to t in milliseconds.
func ms(start, t time.Time) float64 { return framework.Millis(t.Sub(start)) }
