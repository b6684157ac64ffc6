// Package install runs kubeproof's webhook server in a namespace, the way
// users deploy webhooks (a Deployment with a readiness probe behind a
// Service, TLS from a CA whose bundle the configurations carry), installs
// webhook configurations that only see that namespace, and reads the
// server's record of the calls it received.
package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
	"github.com/kubeproof/kubeproof/webhooks"
)

// Name of the webhook server's Deployment, Service, Secret and app label.
const Name = "kubeproof-webhook"

// Options say how to run the server.
type Options struct {
	// Webhook is the server's image; TestApp the image of the containers
	// it injects.
	Webhook string
	TestApp string
	// Labels go on the webhook configurations (cluster-scoped), to mark
	// them as the run's.
	Labels map[string]string
	// Down deploys a server that never answers (it listens on another
	// port than its Service and probe use): kubeproof's own fault matrix
	// uses it to show what a cluster whose webhook server is down does.
	Down bool
}

// Server is a webhook server running in a namespace.
type Server struct {
	Namespace string
	CABundle  []byte
	client    kubernetes.Interface
	labels    map[string]string
}

// Deploy starts the webhook server in ns and waits until its Pod is Ready.
func Deploy(ctx context.Context, client kubernetes.Interface, ns string, img Options, timeout time.Duration) (*Server, error) {
	ca, err := pki.NewCA("kubeproof-webhook-ca")
	if err != nil {
		return nil, err
	}
	host := Name + "." + ns + ".svc"
	kp, err := ca.Issue(pki.Request{CommonName: host, DNSNames: []string{host, host + ".cluster.local", Name}, Usage: pki.ServerAuth})
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app": Name}
	one := int32(1)
	listen := "--listen=:8443"
	if img.Down {
		listen = "--listen=:9443"
	}
	objects := []func() error{
		func() error {
			_, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: Name},
				Type:       corev1.SecretTypeTLS,
				Data:       map[string][]byte{corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: Name, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: &one,
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       serverPod(img, listen),
					},
				},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: Name},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objects {
		if err := create(); err != nil {
			return nil, fmt.Errorf("deploy the webhook server: %w", err)
		}
	}
	lw := cache.NewFilteredListWatchFromClient(client.DiscoveryV1().RESTClient(), "endpointslices", ns, func(o *metav1.ListOptions) {
		o.LabelSelector = discoveryv1.LabelServiceName + "=" + Name
	})
	ctx, stuck := stopWhenStuck(ctx, client, ns, timeout)
	defer stuck()
	// A ready endpoint of the Service: the Pod passed its readiness probe
	// and the API server can route to it.
	if _, err := observe.Until(ctx, timeout, "a ready endpoint of Service "+ns+"/"+Name, lw, func(es *discoveryv1.EndpointSlice) (bool, error) {
		for _, e := range es.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				return true, nil
			}
		}
		return false, nil
	}, func(es *discoveryv1.EndpointSlice) string {
		return fmt.Sprintf("EndpointSlice %s with %d endpoints", es.Name, len(es.Endpoints))
	}); err != nil {
		var stuck *StuckError
		if errors.As(context.Cause(ctx), &stuck) {
			return nil, stuck
		}
		return nil, err
	}
	return &Server{Namespace: ns, CABundle: ca.CertPEM(), client: client, labels: img.Labels}, nil
}

// StuckError is the error of a Deploy whose server Pod will not start
// without outside help (its image cannot be pulled, say): waiting on would
// only run into the timeout.
type StuckError struct {
	Pod    *corev1.Pod
	Reason string
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("the webhook server's Pod %s is stuck: %s", e.Pod.Name, e.Reason)
}

// stopWhenStuck returns a context that ends, with a *StuckError as its
// cause, when a Pod of the server is stuck; the returned func stops
// watching.
func stopWhenStuck(ctx context.Context, client kubernetes.Interface, ns string, timeout time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", ns, func(o *metav1.ListOptions) {
		o.LabelSelector = "app=" + Name
	})
	go func() {
		p, err := observe.Until(ctx, timeout, "a stuck Pod of "+Name, lw, func(p *corev1.Pod) (bool, error) {
			return podstate.StuckReason(p) != "", nil
		}, nil)
		if err == nil {
			cancel(&StuckError{Pod: p, Reason: podstate.StuckReason(p)})
		}
	}()
	return ctx, func() { cancel(nil) }
}

// Webhook is one webhook of a configuration.
type Webhook struct {
	// Name is the webhook's name (a DNS name, e.g. sidecar.kubeproof.io).
	Name string
	// Path is the server path that handles it (see package webhooks).
	Path string
	// FailurePolicy defaults to Fail.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// TimeoutSeconds defaults to the API server's default (10).
	TimeoutSeconds int32
	// Reinvocation applies to mutating webhooks (default Never).
	Reinvocation admissionregistrationv1.ReinvocationPolicyType
	// Service overrides the Service the webhook calls (to point at one
	// that does not answer).
	Service string
	// Rules override what the webhook sees (default: Pods created or
	// updated).
	Rules []admissionregistrationv1.RuleWithOperations
}

// webhook is the registration of w: by default for Pod creates and updates in
// this server's namespace, except the server's own Pods; failing closed; called
// once per request (no reinvocation). It is a MutatingWebhook because that type
// has every field a ValidatingWebhook has, and one more.
func (s *Server) webhook(w Webhook) admissionregistrationv1.MutatingWebhook {
	rules := w.Rules
	if len(rules) == 0 {
		rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}}
	}
	fp := w.FailurePolicy
	if fp == "" {
		fp = admissionregistrationv1.Fail
	}
	var timeout *int32
	if w.TimeoutSeconds > 0 {
		t := w.TimeoutSeconds
		timeout = &t
	}
	reinv := w.Reinvocation
	if reinv == "" {
		reinv = admissionregistrationv1.NeverReinvocationPolicy
	}
	none := admissionregistrationv1.SideEffectClassNone
	return admissionregistrationv1.MutatingWebhook{
		Name: w.Name, ClientConfig: s.clientConfig(w), Rules: rules,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: s.Namespace}},
		ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{Name}},
		}},
		SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		FailurePolicy: &fp, TimeoutSeconds: timeout, ReinvocationPolicy: &reinv,
	}
}

func (s *Server) clientConfig(w Webhook) admissionregistrationv1.WebhookClientConfig {
	svc := w.Service
	if svc == "" {
		svc = Name
	}
	path := w.Path
	port := int32(443)
	return admissionregistrationv1.WebhookClientConfig{
		Service:  &admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: svc, Path: &path, Port: &port},
		CABundle: s.CABundle,
	}
}

// ConfigName is the cluster-wide name of a configuration of this server.
func (s *Server) ConfigName(name string) string { return "kubeproof-" + s.Namespace + "-" + name }

// Mutating creates a MutatingWebhookConfiguration, in the order given.
func (s *Server) Mutating(ctx context.Context, name string, hooks ...Webhook) error {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: s.ConfigName(name), Labels: s.labels}}
	for _, w := range hooks {
		cfg.Webhooks = append(cfg.Webhooks, s.webhook(w))
	}
	_, err := s.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create MutatingWebhookConfiguration %s: %w", cfg.Name, err)
	}
	return nil
}

// Validating creates a ValidatingWebhookConfiguration: the same
// registrations as Mutating, without reinvocation.
func (s *Server) Validating(ctx context.Context, name string, hooks ...Webhook) error {
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: s.ConfigName(name), Labels: s.labels}}
	for _, w := range hooks {
		m := s.webhook(w)
		cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: m.Name, ClientConfig: m.ClientConfig, Rules: m.Rules, FailurePolicy: m.FailurePolicy,
			MatchPolicy: m.MatchPolicy, NamespaceSelector: m.NamespaceSelector, ObjectSelector: m.ObjectSelector,
			SideEffects: m.SideEffects, TimeoutSeconds: m.TimeoutSeconds,
			AdmissionReviewVersions: m.AdmissionReviewVersions, MatchConditions: m.MatchConditions,
		})
	}
	_, err := s.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ValidatingWebhookConfiguration %s: %w", cfg.Name, err)
	}
	return nil
}

// Uninstall deletes the named configurations (those of this server).
func (s *Server) Uninstall(ctx context.Context, names ...string) error {
	for _, n := range names {
		full := s.ConfigName(n)
		_ = s.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, full, metav1.DeleteOptions{})
		_ = s.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, full, metav1.DeleteOptions{})
	}
	return nil
}

// serverPod is the webhook server's Pod: it passes the restricted Pod
// Security Standard, so that it runs on hardened clusters too (it listens
// above 1024 and only reads its certificate).
func serverPod(img Options, listen string) corev1.PodSpec {
	return podsecurity.Restricted(corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "webhook", Image: img.Webhook,
			Args:  []string{listen, "--image=" + img.TestApp},
			Ports: []corev1.ContainerPort{{ContainerPort: 8443}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/readyz", Port: intstr.FromInt32(8443), Scheme: corev1.URISchemeHTTPS}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: Name}}}},
	})
}

// Calls reads the server's record of admission calls for its namespace,
// through the API server's service proxy.
func (s *Server) Calls(ctx context.Context) ([]webhooks.Call, error) {
	raw, err := s.client.CoreV1().Services(s.Namespace).ProxyGet("https", Name, "443", "/calls", map[string]string{"namespace": s.Namespace}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the webhook server's calls: %w", err)
	}
	var calls []webhooks.Call
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("decode the webhook server's calls: %w", err)
	}
	return calls, nil
}

// WaitEffective waits until the API server calls the webhook at path: it
// creates dry-run Pods (nothing is stored) until the server has recorded
// one. A ready endpoint is not enough: the API server reaches the webhook
// through the Service, which kube-proxy programs a moment later.
func (s *Server) WaitEffective(ctx context.Context, path string, timeout time.Duration) error {
	last := "no attempt yet"
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		name := "kp-marker-" + rand.String(6)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "marker", Image: "kubeproof.local/marker:v1"}}})}
		if _, err := s.client.CoreV1().Pods(s.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			last = err.Error()
			return false, nil
		}
		calls, err := s.Calls(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range calls {
			if c.Name == name && c.Webhook == path {
				return true, nil
			}
		}
		last = "a dry-run Pod was admitted without calling " + path
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("waiting for the webhook %s to take effect: %w", path, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("the webhook %s did not take effect within %s; last seen: %s", path, timeout, last)
	}
	return nil
}
