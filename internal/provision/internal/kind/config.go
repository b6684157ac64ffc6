package kind

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// Paths inside the control-plane node, each a mount of a host directory of
// the cluster's own (see layout).
const (
	nodeAuditDir = "/var/log/kubernetes/audit"
	nodeConfDir  = "/etc/kubeproof"
	nodePKIDir   = "/etc/kubernetes/pki"
)

// nodeSetup is what the node image needs from kind's configuration.
type nodeSetup struct {
	// ImageRepository holds kubeadm's images in the node image ("" for
	// kubeadm's default, registry.k8s.io).
	ImageRepository string
	// ContainerdPatches are merged into every node's containerd
	// configuration (a node image not ours: see foreign).
	ContainerdPatches []string
}

// kindConfig is the kind cluster configuration for c: one control plane and
// c.Workers workers of image, no default CNI (kubeproof-cni is installed
// after creation), the audit policy and log on host directories, kubeadm
// told to use the images already in the node, and the component flags.
func kindConfig(c Config, l layout, image string, setup nodeSetup) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     c.Name,
		Networking: v1alpha4.Networking{
			PodSubnet:         c.PodCIDR,
			ServiceSubnet:     c.ServiceCIDR,
			DisableDefaultCNI: true,
			KubeProxyMode:     v1alpha4.IPTablesProxyMode,
		},
	}
	if slices.Contains(c.Without, KubeProxy) {
		cfg.Networking.KubeProxyMode = "none" // kind leaves kube-proxy out
	}
	cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{
		Role:  v1alpha4.ControlPlaneRole,
		Image: image,
		ExtraMounts: []v1alpha4.Mount{
			{HostPath: l.auditDir(), ContainerPath: nodeAuditDir},
			{HostPath: l.confDir(), ContainerPath: nodeConfDir, Readonly: true},
			{HostPath: l.pkiDir(), ContainerPath: nodePKIDir},
		},
	})
	for i := 0; i < c.Workers; i++ {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: image})
	}
	patch, err := clusterConfigurationPatch(c, setup.ImageRepository)
	if err != nil {
		return nil, err
	}
	cfg.ContainerdConfigPatches = setup.ContainerdPatches
	cfg.KubeadmConfigPatchesJSON6902 = []v1alpha4.PatchJSON6902{{
		Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration", Patch: patch,
	}}
	if args := c.ComponentArgs[Kubelet]; len(args) > 0 {
		patch, err := kubeletArgsPatch(args)
		if err != nil {
			return nil, err
		}
		for _, kind := range []string{"InitConfiguration", "JoinConfiguration"} {
			cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902,
				v1alpha4.PatchJSON6902{Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: kind, Patch: patch})
		}
	}
	cfg.KubeadmConfigPatches = []string{kubeletPatch, kubeProxyPatch}
	return cfg, nil
}

// apiServerArgs are the flags the harness needs on every kube-apiserver
// (the audit log it reads), before the user's own.
var apiServerArgs = []string{
	"--audit-policy-file=" + nodeConfDir + "/audit-policy.yaml",
	"--audit-log-path=" + nodeAuditDir + "/audit.log",
	"--audit-log-format=json",
	"--audit-log-maxsize=200",
	"--audit-log-maxbackup=1",
	// Each event is written by the request itself, not batched for up to a
	// second; checks still wait for the events they need.
	"--audit-log-mode=blocking",
}

// clusterConfigurationPatch is a JSON 6902 patch of kubeadm's
// ClusterConfiguration (v1beta4, where extraArgs are lists of name/value):
// it appends flags to the ones kind sets and adds the volumes they need.
func clusterConfigurationPatch(c Config, imageRepository string) (string, error) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	var ops []op
	if imageRepository != "" {
		ops = append(ops, op{"add", "/imageRepository", imageRepository})
	}
	ops = append(ops,
		op{"add", "/apiServer/extraVolumes", []map[string]any{
			{"name": "kubeproof-conf", "hostPath": nodeConfDir, "mountPath": nodeConfDir, "readOnly": true, "pathType": "Directory"},
			{"name": "kubeproof-audit", "hostPath": nodeAuditDir, "mountPath": nodeAuditDir, "pathType": "DirectoryOrCreate"},
		}})
	sections := map[string]string{
		APIServer:         "/apiServer/extraArgs/-",
		ControllerManager: "/controllerManager/extraArgs/-",
		Scheduler:         "/scheduler/extraArgs",
	}
	for comp := range c.ComponentArgs {
		if _, ok := sections[comp]; !ok && comp != Kubelet {
			return "", fmt.Errorf("--component-arg %s: the kind provider sets flags of %s, %s, %s and %s", comp, APIServer, ControllerManager, Scheduler, Kubelet)
		}
	}
	for _, comp := range []string{APIServer, ControllerManager} {
		args := c.ComponentArgs[comp]
		if comp == APIServer {
			args = append(slices.Clone(apiServerArgs), args...)
		}
		for _, a := range args {
			name, value := splitFlag(a)
			ops = append(ops, op{"add", sections[comp], map[string]string{"name": name, "value": value}})
		}
	}
	// kind leaves the scheduler's extraArgs empty (null) unless it sets
	// feature gates or IPv6 addresses, neither of which kubeproof asks
	// for: nothing can be appended to it, so the list is set whole.
	var scheduler []map[string]string
	for _, a := range append(slices.Clone(schedulerArgs), c.ComponentArgs[Scheduler]...) {
		name, value := splitFlag(a)
		scheduler = append(scheduler, map[string]string{"name": name, "value": value})
	}
	ops = append(ops, op{"add", "/scheduler/extraArgs", scheduler})
	data, err := json.Marshal(ops)
	if err != nil {
		return "", fmt.Errorf("encode kubeadm patch: %w", err)
	}
	return string(data), nil
}

// schedulerArgs let this machine reach the scheduler's /metrics and
// /configz: kubeadm binds it to the node's loopback.
var schedulerArgs = []string{"--bind-address=0.0.0.0"}

// splitFlag turns "--name=value" into name and value ("--name" alone is
// "true", as for a boolean flag).
func splitFlag(arg string) (string, string) {
	name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	if !ok {
		return name, "true"
	}
	return name, value
}

// kubeletPatch lets the kubelet run on this machine's cgroup v1 and without
// CAP_SYS_RESOURCE (it cannot lower its oom_score_adj).
const kubeletPatch = `kind: KubeletConfiguration
failCgroupV1: false
oomScoreAdj: 0
`

// kubeletArgsPatch appends kubelet flags to a node's kubeletExtraArgs.
func kubeletArgsPatch(args []string) (string, error) {
	var ops []map[string]any
	for _, a := range args {
		name, value := splitFlag(a)
		ops = append(ops, map[string]any{"op": "add", "path": "/nodeRegistration/kubeletExtraArgs/-",
			"value": map[string]string{"name": name, "value": value}})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return "", fmt.Errorf("encode kubelet patch: %w", err)
	}
	return string(data), nil
}

// kubeProxyPatch: kube-proxy cannot lower its oom_score_adj either.
const kubeProxyPatch = `kind: KubeProxyConfiguration
oomScoreAdj: 0
`
