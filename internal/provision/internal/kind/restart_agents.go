package kind

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/controlplane"
)

// The kubelet's files on a kubeadm node: its flags (an environment file the
// systemd unit reads) and its configuration.
const (
	kubeletFlagsFile  = "/var/lib/kubelet/kubeadm-flags.env"
	kubeletConfigFile = "/var/lib/kubelet/config.yaml"
)

var kubeletArgsRE = regexp.MustCompile(`(?m)^KUBELET_KUBEADM_ARGS="(.*)"$`)

// restartKubelets changes the kubelet's flags and configuration on each
// node and restarts it there; restoring writes the files back as they
// were and restarts it again.
func restartKubelets(ctx context.Context, client kubernetes.Interface, on []nodes.Node, change cluster.ComponentChange) (func(context.Context) error, error) {
	type files struct{ flags, config []byte }
	saved := map[string]files{}
	healthy := func(ctx context.Context, n nodes.Node) error {
		_, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.String(), "proxy/healthz").DoRaw(ctx)
		return err
	}
	write := func(n nodes.Node, path string, data []byte) error {
		if err := n.Command("sh", "-c", `cat > "$1"`, "sh", path).SetStdin(bytes.NewReader(data)).Run(); err != nil {
			return fmt.Errorf("write %s on %s: %w", path, n, err)
		}
		return nil
	}
	changeFiles := func(n nodes.Node) error {
		var f files
		var buf bytes.Buffer
		if err := n.Command("cat", kubeletFlagsFile).SetStdout(&buf).Run(); err != nil {
			return fmt.Errorf("read %s on %s: %w", kubeletFlagsFile, n, err)
		}
		f.flags = bytes.Clone(buf.Bytes())
		buf.Reset()
		if err := n.Command("cat", kubeletConfigFile).SetStdout(&buf).Run(); err != nil {
			return fmt.Errorf("read %s on %s: %w", kubeletConfigFile, n, err)
		}
		f.config = bytes.Clone(buf.Bytes())
		saved[n.String()] = f
		m := kubeletArgsRE.FindSubmatch(f.flags)
		if m == nil {
			return fmt.Errorf("%s on %s has no KUBELET_KUBEADM_ARGS", kubeletFlagsFile, n)
		}
		args := controlplane.ChangeArgs(strings.Fields(string(m[1])), change, true)
		flags := kubeletArgsRE.ReplaceAll(f.flags, []byte(`KUBELET_KUBEADM_ARGS="`+strings.Join(args, " ")+`"`))
		if err := write(n, kubeletFlagsFile, flags); err != nil {
			return err
		}
		config, err := controlplane.PatchConfig(f.config, change)
		if err != nil {
			return fmt.Errorf("the kubelet's configuration on %s: %w", n, err)
		}
		return write(n, kubeletConfigFile, config)
	}
	err := restartUnits(ctx, on, Kubelet, changeFiles, healthy)
	// Puts back the files of the nodes whose files were changed, and
	// restarts those kubelets (also after a restart that failed half-way).
	putBack := func(ctx context.Context) error {
		var changed []nodes.Node
		for _, n := range on {
			f, ok := saved[n.String()]
			if !ok {
				continue
			}
			if err := write(n, kubeletFlagsFile, f.flags); err != nil {
				return err
			}
			if err := write(n, kubeletConfigFile, f.config); err != nil {
				return err
			}
			changed = append(changed, n)
		}
		return restartUnits(ctx, changed, Kubelet, nil, healthy)
	}
	if err != nil {
		if perr := putBack(ctx); perr != nil {
			err = fmt.Errorf("%w (and putting it back: %v)", err, perr)
		}
		return nil, fmt.Errorf("restart the kubelet: %w", err)
	}
	return putBack, nil
}

// restartKubeProxy changes kube-proxy's DaemonSet (its command, and a
// mark that makes it roll out) and its ConfigMap, and waits for the
// rollout; restoring puts both back and waits again.
func restartKubeProxy(ctx context.Context, client kubernetes.Interface, change cluster.ComponentChange) (func(context.Context) error, error) {
	dss := client.AppsV1().DaemonSets(metav1.NamespaceSystem)
	cms := client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	ds, err := dss.Get(ctx, KubeProxy, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kube-proxy's DaemonSet: %w", err)
	}
	cm, err := cms.Get(ctx, KubeProxy, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kube-proxy's ConfigMap: %w", err)
	}
	origTemplate := ds.Spec.Template.DeepCopy()
	origConfig := cm.Data["config.conf"]
	i := slices.IndexFunc(ds.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == KubeProxy })
	if i < 0 {
		return nil, fmt.Errorf("kube-proxy's DaemonSet has no %s container", KubeProxy)
	}
	if len(change.Config) > 0 || len(change.FeatureGates) > 0 {
		patched, err := controlplane.PatchConfig([]byte(origConfig), change)
		if err != nil {
			return nil, fmt.Errorf("kube-proxy's configuration: %w", err)
		}
		cm.Data["config.conf"] = string(patched)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("update kube-proxy's ConfigMap: %w", err)
		}
	}
	c := &ds.Spec.Template.Spec.Containers[i]
	c.Command = controlplane.ChangeArgs(c.Command, change, true)
	if ds.Spec.Template.Annotations == nil {
		ds.Spec.Template.Annotations = map[string]string{}
	}
	ds.Spec.Template.Annotations["kubeproof.io/restarted"] = time.Now().UTC().Format(time.RFC3339Nano)
	restore := func(ctx context.Context) error {
		cur, err := cms.Get(ctx, KubeProxy, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("kube-proxy's ConfigMap: %w", err)
		}
		if cur.Data["config.conf"] != origConfig {
			cur.Data["config.conf"] = origConfig
			if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("put kube-proxy's ConfigMap back: %w", err)
			}
		}
		return rollout(ctx, client, func(ds *appsv1.DaemonSet) { ds.Spec.Template = *origTemplate.DeepCopy() })
	}
	if err := rollout(ctx, client, func(d *appsv1.DaemonSet) { d.Spec.Template = ds.Spec.Template }); err != nil {
		if rerr := restore(ctx); rerr != nil {
			err = fmt.Errorf("%w (and putting it back: %v)", err, rerr)
		}
		return nil, fmt.Errorf("restart kube-proxy: %w", err)
	}
	return restore, nil
}

// rollout updates kube-proxy's DaemonSet with set and waits until every
// node runs an available Pod of the new template.
func rollout(ctx context.Context, client kubernetes.Interface, set func(*appsv1.DaemonSet)) error {
	dss := client.AppsV1().DaemonSets(metav1.NamespaceSystem)
	ds, err := dss.Get(ctx, KubeProxy, metav1.GetOptions{})
	if err != nil {
		return err
	}
	set(ds)
	updated, err := dss.Update(ctx, ds, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update kube-proxy's DaemonSet: %w", err)
	}
	gen := updated.Generation
	var last appsv1.DaemonSetStatus
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, restartTimeout, true, func(ctx context.Context) (bool, error) {
		d, err := dss.Get(ctx, KubeProxy, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // the API server is asked again
		}
		last = d.Status
		s := d.Status
		return s.ObservedGeneration >= gen && s.UpdatedNumberScheduled == s.DesiredNumberScheduled &&
			s.NumberAvailable == s.DesiredNumberScheduled && s.NumberUnavailable == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for kube-proxy's rollout (generation %d); last status %+v: %w", restartTimeout, gen, last, err)
	}
	return nil
}
