package kind

import (
	"context"
	"fmt"
	"time"

	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/contract/images"
)

// cniName names kubeproof-cni's objects in kube-system.
const cniName = "kubeproof-cni"

// cniTraceLog is where kubeproof-cni-trace logs each CNI call, on every
// node (the node image has the plugin, or copyPrograms puts it into the
// node's CNI bin directory).
const cniTraceLog = "/var/log/kubeproof-cni-calls.jsonl"

// nodeCNIBinDir is containerd's CNI bin directory on a kind node.
const nodeCNIBinDir = "/opt/cni/bin"

func adminClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kind kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// installNetwork runs kubeproof-cni on every node. It talks to the API
// server at the control plane's own address: the kubernetes Service needs
// kube-proxy, which may be left out (--without kube-proxy).
func installNetwork(ctx context.Context, client kubernetes.Interface, apiServerIP string) error {
	ns := metav1.NamespaceSystem
	meta := metav1.ObjectMeta{Name: cniName, Namespace: ns, Labels: map[string]string{"app": cniName}}
	sa := &corev1.ServiceAccount{ObjectMeta: meta}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: cniName},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: cniName},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cniName},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: cniName, Namespace: ns}},
	}
	hostPath := corev1.HostPathDirectoryOrCreate
	ds := &appsv1.DaemonSet{
		ObjectMeta: meta,
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: meta.Labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: cniName,
					HostNetwork:        true,
					PriorityClassName:  "system-node-critical",
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:            "cni",
						Image:           images.CNI.Ref,
						ImagePullPolicy: corev1.PullNever,
						Args:            []string{"--trace-log=" + cniTraceLog},
						Env: []corev1.EnvVar{
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
							{Name: "KUBERNETES_SERVICE_HOST", Value: apiServerIP},
							{Name: "KUBERNETES_SERVICE_PORT", Value: "6443"},
						},
						SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}},
						VolumeMounts:    []corev1.VolumeMount{{Name: "cni-conf", MountPath: "/etc/cni/net.d"}},
					}},
					Volumes: []corev1.Volume{{Name: "cni-conf", VolumeSource: corev1.VolumeSource{
						HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d", Type: &hostPath}}}},
				},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
		},
	}
	ds.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	create := func(what string, fn func() error) error {
		if err := fn(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install pod network: create %s: %w", what, err)
		}
		return nil
	}
	steps := []struct {
		what string
		fn   func() error
	}{
		{"ServiceAccount", func() error {
			_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRole", func() error {
			_, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRoleBinding", func() error {
			_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		}},
		{"DaemonSet", func() error {
			_, err := client.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{})
			return err
		}},
	}
	for _, s := range steps {
		if err := create(s.what, s.fn); err != nil {
			return err
		}
	}
	return nil
}

// waitNodesReady watches Nodes until want of them are Ready.
func waitNodesReady(ctx context.Context, client kubernetes.Interface, want int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "nodes", metav1.NamespaceAll, fields.Everything())
	ready := map[string]string{}
	summary := func() string {
		var parts []string
		for n, s := range ready {
			parts = append(parts, n+"="+s)
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	}
	count := func() int {
		k := 0
		for _, s := range ready {
			if s == "Ready" {
				k++
			}
		}
		return k
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		if !ok {
			return false, nil
		}
		if e.Type == watch.Deleted {
			delete(ready, n.Name)
			return false, nil
		}
		ready[n.Name] = "NotReady"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					ready[n.Name] = "Ready"
				} else {
					ready[n.Name] = fmt.Sprintf("NotReady(%s: %s)", c.Reason, c.Message)
				}
			}
		}
		return count() >= want, nil
	})
	if err != nil {
		return fmt.Errorf("timed out after %s waiting for %d nodes to be Ready; last seen: %s (%v)", timeout, want, summary(), err)
	}
	return nil
}
