package probes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
)

// apply creates every object of a manifest, with kubeproof's images taken
// from the run's registry and the run's ownership labels.
// Every field of the manifest the created object lacks is returned as
// dropped: the API server drops a field it does not serve (one behind a
// disabled feature gate) without refusing the object.
func (r *run) apply(ctx context.Context, a *probe.Apply) (int, []string, error) {
	var dropped []string
	data, err := r.p.Manifest(*a)
	if err != nil {
		return 0, nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(images.Rewrite(data)), 4096)
	code := 0
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return code, dropped, fmt.Errorf("manifest: %w", err)
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
			return code, dropped, err
		}
		made, err := r.clusterScoped(&obj, ri)
		if err != nil {
			return code, dropped, err
		}
		sent := obj.DeepCopy().Object
		created, err := ri.Create(ctx, &obj, metav1.CreateOptions{})
		if err != nil {
			return code, dropped, fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		made()
		code = 201
		for _, f := range Dropped(sent, created.Object) {
			dropped = append(dropped, obj.GetKind()+" "+obj.GetName()+": "+f)
		}
	}
	return code, dropped, nil
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

// Dropped lists the fields of sent (an object as a manifest wrote it)
// that got (the object as the API server returned it) does not have,
// dotted (spec.containers.0.lifecycle.stopSignal). A value the server
// changed (a default filled in, a quantity normalised) is not dropped;
// an empty or null value, which encoding leaves out, is not looked at;
// nor is status, which a create ignores.
func Dropped(sent, got map[string]any) []string {
	var out []string
	var walk func(path string, s, g any)
	walk = func(path string, s, g any) {
		switch sv := s.(type) {
		case map[string]any:
			gm, ok := g.(map[string]any)
			if !ok {
				return
			}
			for k, v := range sv {
				if path == "" && k == "status" || empty(v) {
					continue
				}
				p := k
				if path != "" {
					p = path + "." + k
				}
				gv, ok := gm[k]
				if !ok {
					out = append(out, p)
					continue
				}
				walk(p, v, gv)
			}
		case []any:
			gl, ok := g.([]any)
			if !ok || len(gl) != len(sv) {
				return
			}
			for i := range sv {
				walk(fmt.Sprintf("%s.%d", path, i), sv[i], gl[i])
			}
		}
	}
	walk("", sent, got)
	slices.Sort(out)
	return out
}

// empty is a value encoding leaves out: null, {}, [] or "".
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}
