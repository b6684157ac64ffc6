package incluster

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// Where the Pod keeps what the run inside reads and writes.
const (
	// ReportDir is the report directory of the run inside, an emptyDir
	// both containers mount: the reports container keeps it after the run
	// ends, until it is retrieved.
	ReportDir = "/reports"
	// FilesDir is where the user's files are, each at its path here under
	// it (FilesDir + /home/me/claims.yaml), so that a claims file's
	// relative paths (a probe's manifest) still lead to their files.
	FilesDir = "/kubeproof/files"
	// SecretDir holds the pull secret's docker config, by the same rule.
	SecretDir = "/kubeproof/secret"
	// JobFile is what the run outside tells the run inside (Job).
	JobFile = "/kubeproof/job/job.json"
	// binDir is where kubeproof's image keeps its programs.
	binDir = "/usr/local/bin"
	// StopAnnotation on the Pod asks the run inside to stop: its value
	// counts the interrupts the run outside had (1: stop and judge what
	// was observed, 2: also skip the report).
	StopAnnotation = "kubeproof.io/interrupt"
)

// Names of the containers of the Pod.
const (
	runContainer     = "run"
	reportsContainer = "reports"
)

// Job is what the run outside tells the run inside about the cluster
// (JobFile), beside the flags both runs share.
type Job struct {
	// Cluster is the cluster's name as the run outside knows it.
	Cluster string `json:"cluster"`
	// Provider is the run outside's provider.
	Provider string `json:"provider"`
	// LoadedImages: the nodes have kubeproof's images (LoadImage).
	LoadedImages bool `json:"loadedImages,omitempty"`
	// Disposable: nobody but kubeproof uses the cluster.
	Disposable bool `json:"disposable,omitempty"`
}

// names are the objects of one run inside, all named after its run ID.
type names struct {
	// runID is the run inside's: its specs label what they make with it.
	runID string
	// owner labels what the run outside makes: not runID, whose
	// namespaces the specs wait to be gone before they end.
	owner     string
	namespace string
	// role names the ClusterRole and its binding.
	role string
}

func namesOf(runID string) names {
	owner := "in-cluster-" + runID
	return names{runID: runID, owner: owner, namespace: "kubeproof-" + owner, role: "kubeproof-" + owner}
}

const (
	serviceAccount = "kubeproof"
	jobName        = "kubeproof"
	jobConfigMap   = "kubeproof-job"
	filesConfigMap = "kubeproof-files"
	pullSecret     = "kubeproof-pull-secret"
)

func (n names) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: ownership.Labels(n.owner)}
}

func (n names) inNamespace(name string) metav1.ObjectMeta {
	m := n.meta(name)
	m.Namespace = n.namespace
	return m
}

// namespaceObject is the run's namespace: its Pod passes the restricted
// Pod Security Standard, which the label says.
func (n names) namespaceObject() *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: n.meta(n.namespace)}
	ns.Labels[podsecurity.EnforceLabel] = string(podsecurity.LevelRestricted)
	return ns
}

func (n names) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: n.inNamespace(serviceAccount)}
}

// clusterRole allows everything, as cluster-admin does: a run from outside
// has what its user has, and the specs need the whole API (namespaces,
// Nodes, RBAC, webhooks, CRDs, CSRs, impersonation). Only a user who may
// do all of it, or escalate and bind roles, can grant it (checkAccess).
func (n names) clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: n.meta(n.role), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
	}}
}

func (n names) clusterRoleBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: n.meta(n.role),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: n.role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: n.namespace}},
	}
}

func (n names) jobConfigMap(j Job) (*corev1.ConfigMap, error) {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the job: %w", err)
	}
	return &corev1.ConfigMap{ObjectMeta: n.inNamespace(jobConfigMap), Data: map[string]string{path.Base(JobFile): string(data)}}, nil
}

// fileVolume is a volume of the user's files: a ConfigMap's (or a
// Secret's) keys f0, f1... each at its file's path.
func fileVolume(name string, files []carried, secret bool) corev1.Volume {
	var items []corev1.KeyToPath
	for _, f := range files {
		items = append(items, corev1.KeyToPath{Key: f.key, Path: strings.TrimPrefix(f.local, "/")})
	}
	if secret {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: pullSecret, Items: items}}}
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: filesConfigMap}, Items: items}}}
}

// job is the Job that runs kubeproof in the cluster: one Pod, never
// retried (a run is not repeated behind the user's back), with two
// containers sharing the report directory: run, which runs `kubeproof run`
// with args and ends, and reports, which keeps the directory until the
// run outside has copied it.
func (n names) job(image string, args []string, files, secrets []carried, deadline int64) *batchv1.Job {
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
	}
	mounts := []corev1.VolumeMount{
		{Name: "reports", MountPath: ReportDir},
		{Name: "tmp", MountPath: "/tmp"},
		{Name: "job", MountPath: path.Dir(JobFile), ReadOnly: true},
	}
	volumes := []corev1.Volume{
		{Name: "reports", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "job", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: jobConfigMap}}}},
	}
	if len(files) > 0 {
		volumes = append(volumes, fileVolume("files", files, false))
		mounts = append(mounts, corev1.VolumeMount{Name: "files", MountPath: FilesDir, ReadOnly: true})
	}
	if len(secrets) > 0 {
		volumes = append(volumes, fileVolume("secret", secrets, true))
		mounts = append(mounts, corev1.VolumeMount{Name: "secret", MountPath: SecretDir, ReadOnly: true})
	}
	fieldEnv := func(name, field string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}}
	}
	pod := corev1.PodSpec{
		ServiceAccountName: serviceAccount,
		RestartPolicy:      corev1.RestartPolicyNever,
		// On SIGTERM (the Pod deleted) the run inside stops its specs,
		// which remove their namespaces: it gets the time for that.
		TerminationGracePeriodSeconds: ptr.To[int64](120),
		// Never root: kubeproof needs no privilege in the Pod, and a
		// cluster that enforces the restricted standard admits it.
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To(podsecurity.GID)},
		Containers: []corev1.Container{
			{
				Name: runContainer, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{binDir + "/kubeproof"},
				Args:    args,
				Env: []corev1.EnvVar{
					fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
					{Name: "HOME", Value: "/tmp"}, {Name: "KUBECONFIG", Value: Kubeconfig},
				},
				WorkingDir:      "/tmp",
				VolumeMounts:    mounts,
				SecurityContext: restricted,
			},
			{
				Name: reportsContainer, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{binDir + "/kubeproof-pause"},
				VolumeMounts:    []corev1.VolumeMount{{Name: "reports", MountPath: ReportDir}},
				SecurityContext: restricted,
			},
		},
		Volumes: volumes,
	}
	podsecurity.Restrict(&pod)
	return &batchv1.Job{
		ObjectMeta: n.inNamespace(jobName),
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			// A guard for a run outside that was killed: the Job ends
			// on its own; `kubeproof cleanup` removes what is left.
			ActiveDeadlineSeconds: ptr.To(deadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: ownership.Labels(n.owner)},
				Spec:       pod,
			},
		},
	}
}
