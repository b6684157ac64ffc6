package observer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/kube/metrics"
)

// FeatureGates reads which feature gates a component runs with, from the
// metric every component exposes on its /metrics,
// kubernetes_feature_enabled{name, stage}: when the probe starts and after
// every step (a step may restart the component with other gates).
type FeatureGates struct {
	// Component is kube-apiserver, kubelet, kube-scheduler or
	// kube-controller-manager (the last two where the provider names their
	// endpoint: local; kind's scheduler).
	Component string `json:"component"`
	Where     `json:",inline"`
	// Gates are the gates to read, by name (SidecarContainers).
	Gates []string `json:"gates"`
}

// GateEvidence is what a featureGates observer records of one gate.
type GateEvidence struct {
	// Known: the component lists the gate (a gate that was removed, or
	// that the component does not have, is not listed).
	Known bool `json:"known"`
	// AtStart is whether it was enabled when first read (the probe's
	// start; a kubelet named by a Pod: once the Pod is on a node); Enabled
	// when last read.
	AtStart bool `json:"atStart"`
	Enabled bool `json:"enabled"`
	// Values are its distinct successive states (true, false).
	Values []bool `json:"values"`
	// Stage is ALPHA, BETA, or empty for a gate that is GA or deprecated.
	Stage string `json:"stage"`
}

var gateNameRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

var gateComponents = []string{"kube-apiserver", "kubelet", "kube-scheduler", "kube-controller-manager"}

func (g *FeatureGates) Validate() []string {
	var errs []string
	if !slices.Contains(gateComponents, g.Component) {
		errs = append(errs, fmt.Sprintf("featureGates component %q is not one of %v", g.Component, gateComponents))
	}
	if (g.Pod != "" || g.Node != "") && g.Component != "kubelet" {
		errs = append(errs, "featureGates: a pod or node names a kubelet's node, for component kubelet")
	}
	if len(g.Gates) == 0 {
		errs = append(errs, "featureGates needs the gates to read")
	}
	for _, n := range g.Gates {
		if !gateNameRE.MatchString(n) {
			errs = append(errs, fmt.Sprintf("featureGates: %q is not a gate's name (SidecarContainers)", n))
		}
	}
	return errs
}

func (g *FeatureGates) Evidence() reflect.Type {
	return structOf(g.Gates, reflect.TypeFor[GateEvidence]())
}

func (g *FeatureGates) Explain(n string, put Explainer) {
	put(n, "Feature gates of %s, from its metric kubernetes_feature_enabled, at the probe's start and after every step.", g.Component)
	for _, gate := range g.Gates {
		p := n + "." + gate
		put(p, "The gate %s of %s.", gate, g.Component)
		put(p+".known", "Whether %s lists the gate %s at all.", g.Component, gate)
		put(p+".atStart", "Whether %s was enabled when first read: the probe's start (a kubelet named by a Pod: once the Pod was on a node).", gate)
		put(p+".enabled", "Whether %s was enabled when last read.", gate)
		put(p+".values", "Its distinct successive states.")
		put(p+".values.0", "One state.")
		put(p+".stage", "Its stage: ALPHA, BETA, or empty once GA or deprecated.")
	}
}

type gatesRecorder struct {
	env   *Env
	spec  FeatureGates
	place placeTracker
	ev    map[string]*GateEvidence
	err   error
}

func (g *FeatureGates) Start(ctx context.Context, env *Env) (Recorder, error) {
	r := &gatesRecorder{env: env, spec: *g, place: placeTracker{where: g.Where}, ev: map[string]*GateEvidence{}}
	if err := r.read(ctx, true); err != nil {
		return nil, err
	}
	return r, nil
}

// read reads the component's gates; at the start, a kubelet whose Pod is
// not bound yet is read once it is.
func (r *gatesRecorder) read(ctx context.Context, start bool) error {
	samples, ok, err := r.scrape(ctx)
	if err != nil || !ok {
		return err
	}
	for _, gate := range r.spec.Gates {
		e := r.ev[gate]
		first := e == nil
		if first {
			e = &GateEvidence{Values: []bool{}}
			r.ev[gate] = e
		}
		for _, s := range samples {
			if s.Name == "kubernetes_feature_enabled" && s.Labels["name"] == gate {
				e.Known, e.Enabled, e.Stage = true, s.Value == 1, s.Labels["stage"]
			}
		}
		if first && start {
			e.AtStart = e.Enabled
		}
		if e.Known && (len(e.Values) == 0 || e.Values[len(e.Values)-1] != e.Enabled) {
			e.Values = append(e.Values, e.Enabled)
		}
	}
	return nil
}

func (r *gatesRecorder) scrape(ctx context.Context) (metrics.Samples, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.env.APITimeout)
	defer cancel()
	client := r.env.Client.CoreV1().RESTClient()
	switch r.spec.Component {
	case "kube-apiserver":
		s, err := metrics.Scrape(ctx, client)
		return s, err == nil, err
	case "kubelet":
		node, _, ok, err := r.place.place(ctx, r.env)
		if r.place.where.Pod == "" {
			node, err = r.place.onlyNode(ctx, r.env)
			ok = err == nil
		}
		if err != nil || !ok {
			return nil, false, err
		}
		s, err := metrics.Kubelet(ctx, client, node)
		return s, err == nil, err
	}
	base, ok := r.env.Cluster.Endpoints[r.spec.Component]
	if !ok {
		return nil, false, fmt.Errorf("the %s provider names no endpoint of %s that this machine reaches", r.env.Cluster.Provider, r.spec.Component)
	}
	body, err := componentGet(ctx, r.env.RESTConfig, base+"/metrics")
	if err != nil {
		return nil, false, fmt.Errorf("%s's /metrics: %w", r.spec.Component, err)
	}
	return metrics.Parse(body), true, nil
}

// componentGet reads url of a control-plane component's secure endpoint
// with the probe's credentials; its serving certificate is self-signed, so
// it is not verified (what is judged is the content).
func componentGet(ctx context.Context, cfg *rest.Config, url string) ([]byte, error) {
	c := rest.CopyConfig(cfg)
	c.Insecure, c.CAFile, c.CAData = true, "", nil
	client, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	return body, nil
}

func (r *gatesRecorder) AfterStep(ctx context.Context, _ string) {
	if r.err == nil {
		r.err = r.read(ctx, len(r.ev) == 0)
	}
}

func (r *gatesRecorder) Evidence() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if len(r.ev) == 0 {
		return nil, fmt.Errorf("the kubelet of Pod %s was never read: the Pod was on no node", r.place.where.Pod)
	}
	out := map[string]any{}
	for _, g := range r.spec.Gates {
		out[g] = *r.ev[g]
	}
	return out, nil
}

func (r *gatesRecorder) Stop() {}
