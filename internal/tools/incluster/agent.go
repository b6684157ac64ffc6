package incluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// serviceAccountDir is where a Pod finds its ServiceAccount's token and
// the cluster's CA.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Agent is the run inside the cluster: plan, as `kubeproof run` planned it
// from the arguments the run outside gave, on the cluster the Pod is in,
// reached with its ServiceAccount (a kubeconfig written for the specs and
// kubectl). jobFile is what the run outside knew of the cluster. An
// interrupt of the run outside reaches it through the Pod's
// StopAnnotation.
func Agent(ctx context.Context, jobFile string, plan runner.Plan) (report.Report, error) {
	data, err := os.ReadFile(jobFile)
	if err != nil {
		return report.Report{}, exitcode.Errorf(exitcode.Usage, "--in-cluster-job: %v", err)
	}
	var job Job
	if err := json.Unmarshal(data, &job); err != nil {
		return report.Report{}, exitcode.Errorf(exitcode.Usage, "--in-cluster-job %s: %v", jobFile, err)
	}
	if err := writeKubeconfig(Kubeconfig, job.Cluster); err != nil {
		return report.Report{}, err
	}
	plan.Cluster.Provider = "kubeconfig"
	plan.Cluster.Existing = provision.Existing{
		Kubeconfig: Kubeconfig, Disposable: job.Disposable,
		InCluster: &provision.InCluster{Provider: job.Provider, LoadedImages: job.LoadedImages},
	}
	// The run outside pushed the images from where it reaches the
	// registry; the Pod may not reach it there.
	plan.ImagesPushed = true
	stop, err := watchStop(ctx, os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME"))
	if err != nil {
		return report.Report{}, err
	}
	defer stop()
	return runner.Run(ctx, plan)
}

// writeKubeconfig writes a kubeconfig of the Pod's ServiceAccount: its
// token file (which the kubelet renews; client-go reads it again) and the
// cluster's CA, the API server at the address the kubelet gives every Pod.
func writeKubeconfig(path, name string) error {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return exitcode.Errorf(exitcode.Kubeconfig, "not in a Pod: no KUBERNETES_SERVICE_HOST and _PORT (--in-cluster-job is for the run kubeproof starts in the cluster)")
	}
	if name == "" {
		name = "in-cluster"
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + net.JoinHostPort(host, port), CertificateAuthority: filepath.Join(serviceAccountDir, "ca.crt")}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(serviceAccountDir, "token")}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write the Pod's kubeconfig: %w", err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write the Pod's kubeconfig: %w", err)
	}
	return nil
}

// watchStop raises an interrupt each time the run outside counts one more
// on the Pod (StopAnnotation), until the returned stop is called.
func watchStop(ctx context.Context, ns, pod string) (stop func(), err error) {
	if ns == "" || pod == "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--in-cluster-job: the Pod's name and namespace are not in $POD_NAME and $POD_NAMESPACE")
	}
	_, client, err := cluster.NewClient(Kubeconfig, "")
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ints := runner.InterruptsOf(ctx)
	go func() {
		raised := 0
		_, _ = watchtools.UntilWithSync(wctx, podLW(client, ns, pod), &corev1.Pod{}, nil, func(e watch.Event) (bool, error) {
			p, ok := e.Object.(*corev1.Pod)
			if !ok {
				return false, nil
			}
			n, _ := strconv.Atoi(p.Annotations[StopAnnotation])
			for ; raised < n; raised++ {
				ints.Raise(os.Interrupt)
			}
			return false, nil
		})
	}()
	return cancel, nil
}

func podLW(client kubernetes.Interface, ns, pod string) cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", ns, func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(pod)
	})
}
