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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/observer"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/kubectl"
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
	// started starts again the components a step stopped.
	started map[string]func(context.Context) error
}

// runProbe runs p in f's namespace: it starts the observers, takes the steps
// and records the evidence of both. A step that fails (and does not allow
// failure) stops the probe as an unmet precondition: its claims are not
// checkable, naming the step, and the evidence seen until then is kept.
func runProbe(ctx context.Context, f *framework.Framework, p probe.LoadedProbe) {
	timeout, err := probe.ParseTimeout(p.Timeout, DefaultTimeout)
	framework.ExpectNoError(err, "probe %s", p.ID)
	ctx, cancel := context.WithTimeout(ctx, framework.Scale(timeout))
	defer cancel()

	for _, c := range p.Requires {
		if !f.Cluster.Has(c) {
			reason := fmt.Sprintf("probe %s requires %s: %s", p.ID, c, f.Cluster.Missing(c))
			for _, d := range p.Evidence(evidence.Source{}) {
				framework.ProbeUnobservable(d.Name, reason)
			}
			return
		}
	}
	r := &run{f: f, p: p, obs: map[string]observer.Recorder{}, steps: map[string]probe.StepResult{}, started: map[string]func(context.Context) error{}}
	r.env = &observer.Env{Client: f.Client, Namespace: f.Namespace, Cluster: f.Cluster,
		APITimeout: framework.Timeout.API, AuditTimeout: framework.Timeout.Audit}
	r.env.Dynamic, err = dynamic.NewForConfig(f.RESTConfig)
	framework.ExpectNoError(err, "dynamic client")
	dc, err := discovery.NewDiscoveryClientForConfig(f.RESTConfig)
	framework.ExpectNoError(err, "discovery client")
	r.env.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	r.env.Start = time.Now()
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
	for i, s := range p.Steps {
		res, err := r.step(ctx, s)
		res.At = r.env.Millis(res.startedAt)
		r.steps[names[i]] = res.StepResult
		for _, ob := range r.obs {
			if w, ok := ob.(observer.StepReader); ok {
				w.AfterStep(ctx, names[i])
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

type stepResult struct {
	probe.StepResult
	startedAt time.Time
}

// step takes one step; the result's code is that of its last request.
func (r *run) step(ctx context.Context, s probe.Step) (res stepResult, err error) {
	res.startedAt = time.Now()
	defer func() {
		res.Took = ms(res.startedAt, time.Now())
		if err != nil {
			res.Message = err.Error()
			var st apierrors.APIStatus
			if errors.As(err, &st) {
				res.Code = int(st.Status().Code)
				res.Reason = string(st.Status().Reason)
			}
		}
	}()
	switch {
	case s.Apply != nil:
		res.Code, err = r.apply(ctx, s.Apply)
	case s.Patch != nil:
		res.Code, err = r.patch(ctx, s.Patch)
	case s.Delete != nil:
		res.Code, err = r.delete(ctx, s.Delete)
	case s.Wait != nil:
		err = r.wait(ctx, s.Wait)
	case s.Kubectl != nil:
		res.Code, res.Message, err = r.kubectl(ctx, s.As, s.Kubectl)
	case s.StopComponent != "":
		// The framework starts it again when the spec ends, if no step did.
		r.started[s.StopComponent] = r.f.StopComponent(ctx, s.StopComponent)
	case s.StartComponent != "":
		err = r.started[s.StartComponent](ctx)
	case s.Exec != nil:
		res.Code, res.Message, err = r.kubectl(ctx, s.As, append(append([]string{"exec", s.Exec.Pod}, containerArg(s.Exec.Container)...), append([]string{"--"}, s.Exec.Command...)...))
	}
	return res, err
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

// apply creates every object of a manifest, with kubeproof's images taken
// from the run's registry and the run's ownership labels.
func (r *run) apply(ctx context.Context, a *probe.Apply) (int, error) {
	data, err := r.p.Manifest(*a)
	if err != nil {
		return 0, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(images.Rewrite(data)), 4096)
	code := 0
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return code, fmt.Errorf("manifest: %w", err)
		}
		if obj.Object == nil {
			continue
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range framework.RunLabels() {
			labels[k] = v
		}
		obj.SetLabels(labels)
		ri, err := r.env.Resource(obj.GetAPIVersion(), obj.GetKind())
		if err != nil {
			return code, err
		}
		if _, err := ri.Create(ctx, &obj, metav1.CreateOptions{}); err != nil {
			return code, fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		code = 201
	}
	return code, nil
}

func (r *run) patch(ctx context.Context, p *probe.Patch) (int, error) {
	ri, err := r.env.Resource(p.APIVersion, p.Kind)
	if err != nil {
		return 0, err
	}
	body, err := sigsyaml.YAMLToJSON(p.Patch)
	if err != nil {
		return 0, fmt.Errorf("patch: %w", err)
	}
	pt := map[string]types.PatchType{"": types.MergePatchType, "merge": types.MergePatchType, "strategic": types.StrategicMergePatchType, "json": types.JSONPatchType}[p.Type]
	var sub []string
	if p.Subresource != "" {
		sub = []string{p.Subresource}
	}
	if _, err := ri.Patch(ctx, p.Name, pt, body, metav1.PatchOptions{}, sub...); err != nil {
		return 0, fmt.Errorf("patch %s: %w", p.Object, err)
	}
	return 200, nil
}

func (r *run) delete(ctx context.Context, d *probe.Delete) (int, error) {
	ri, err := r.env.Resource(d.APIVersion, d.Kind)
	if err != nil {
		return 0, err
	}
	opts := metav1.DeleteOptions{GracePeriodSeconds: d.GracePeriodSeconds}
	if d.Propagation != "" {
		pp := metav1.DeletionPropagation(d.Propagation)
		opts.PropagationPolicy = &pp
	}
	if err := ri.Delete(ctx, d.Name, opts); err != nil {
		return 0, fmt.Errorf("delete %s: %w", d.Object, err)
	}
	return 200, nil
}

// kubectl runs the cluster's kubectl in the probe's namespace, as the
// run's user or as id.
func (r *run) kubectl(ctx context.Context, id *probe.Identity, args []string) (int, string, error) {
	k := r.f.Kubectl
	if id != nil {
		var err error
		if k, err = r.kubectlAs(ctx, *id); err != nil {
			return 0, "", err
		}
	}
	res, err := k.Run(ctx, nil, append([]string{"-n", r.f.Namespace}, args...)...)
	if err != nil {
		return 0, "", err
	}
	out := strings.TrimSpace(res.Stdout + res.Stderr)
	if res.ExitCode != 0 {
		return res.ExitCode, out, fmt.Errorf("kubectl %s: exit %d: %s", strings.Join(args, " "), res.ExitCode, out)
	}
	return 0, out, nil
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

// kubectlAs is kubectl with a kubeconfig of its own: the cluster's server
// and CA, and a client certificate the CSR API issued for id.
func (r *run) kubectlAs(ctx context.Context, id probe.Identity) (kubectl.Runner, error) {
	cert, key := r.f.ClientCertificate(ctx, id.User, id.Groups...)
	cfg := clientcmdapi.NewConfig()
	ca := r.f.RESTConfig.CAData
	if len(ca) == 0 && r.f.RESTConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(r.f.RESTConfig.CAFile); err != nil {
			return kubectl.Runner{}, fmt.Errorf("the cluster's CA: %w", err)
		}
	}
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: r.f.RESTConfig.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[id.User] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: id.User}
	cfg.CurrentContext = "c"
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return kubectl.Runner{}, fmt.Errorf("write a kubeconfig for %s: %w", id.User, err)
	}
	return kubectl.Runner{Path: r.f.Kubectl.Path, Kubeconfig: path}, nil
}
