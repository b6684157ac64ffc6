package observer

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubeproof/kubeproof/kube/etcd"
)

// Etcd reads an object of the probe from etcd after every step: its key
// and how it is encoded (needs the EtcdAccess capability).
type Etcd struct {
	Ref `json:",inline"`
}

// EtcdEvidence is what an etcd observer records: it reads the object
// after every step, so that an object the probe deletes was still seen.
type EtcdEvidence struct {
	// Found: etcd held the object after some step.
	Found bool `json:"found"`
	// FoundAfter names the steps after which etcd held it.
	FoundAfter []string `json:"foundAfter"`
	// Key is the key it was last stored under (/registry/pods/<ns>/<name>),
	// with the probe's namespace as {namespace}.
	Key string `json:"key"`
	// Encoding is how it was last stored: protobuf, json or other.
	Encoding string `json:"encoding"`
}

func (e *Etcd) Validate() []string {
	if !e.complete() {
		return []string{"etcd needs apiVersion, kind and name"}
	}
	return nil
}

func (e *Etcd) Evidence() reflect.Type { return reflect.TypeFor[EtcdEvidence]() }

func (e *Etcd) Explain(n string, put Explainer) {
	obj := e.Ref.String()
	put(n, "%s as etcd held it after each step.", obj)
	put(n+".found", "Whether etcd held %s after some step.", obj)
	put(n+".foundAfter", "The steps after which etcd held %s.", obj)
	put(n+".foundAfter.0", "One step's name.")
	put(n+".key", "The key %s was last stored under, the probe's namespace as {namespace}.", obj)
	put(n+".encoding", "How it was last stored: protobuf, json or other.")
}

// etcdRecorder reads an object from etcd after every step.
type etcdRecorder struct {
	env *Env
	obj Ref
	ev  EtcdEvidence
	err error
}

func (e *Etcd) Start(_ context.Context, env *Env) (Recorder, error) {
	return &etcdRecorder{env: env, obj: e.Ref, ev: EtcdEvidence{FoundAfter: []string{}}}, nil
}

// AfterStep reads the object as etcd holds it once step is done.
func (r *etcdRecorder) AfterStep(ctx context.Context, step string) {
	if r.err != nil {
		return
	}
	kv, found, err := r.find(ctx)
	if err != nil {
		r.err = err
		return
	}
	if found {
		r.ev.Found = true
		r.ev.FoundAfter = append(r.ev.FoundAfter, step)
		r.ev.Key = strings.ReplaceAll(kv.Key, r.env.Namespace, "{namespace}")
		r.ev.Encoding = kv.Encoding()
	}
}

func (r *etcdRecorder) find(ctx context.Context) (etcd.KeyValue, bool, error) {
	c, err := etcd.New(r.env.Cluster.Etcd)
	if err != nil {
		return etcd.KeyValue{}, false, fmt.Errorf("reach etcd: %w", err)
	}
	m, err := r.env.Mapping(r.obj.APIVersion, r.obj.Kind)
	if err != nil {
		return etcd.KeyValue{}, false, err
	}
	// Built-in resources are stored under their resource name, others
	// under their group too; Find also looks under another --etcd-prefix.
	path := m.Resource.Resource
	if m.Resource.Group != "" && strings.Contains(m.Resource.Group, ".") && !strings.HasSuffix(m.Resource.Group, ".k8s.io") {
		path = m.Resource.Group + "/" + path
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		path += "/" + r.env.Namespace
	}
	ctx, cancel := context.WithTimeout(ctx, r.env.APITimeout)
	defer cancel()
	kv, found, err := c.Find(ctx, path+"/"+r.obj.Name)
	if err != nil {
		return kv, false, fmt.Errorf("read %s from etcd: %w", r.obj, err)
	}
	return kv, found, nil
}

func (r *etcdRecorder) Evidence() (any, error) { return r.ev, r.err }

func (r *etcdRecorder) Stop() {}
