package podflow

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
)

// applyRun is what `kubectl apply` did.
type applyRun struct {
	began time.Time
	ms    float64
	// log is kubectl's standard error: its -v=8 log for pod.yaml's apply.
	log string
}

// apply runs `kubectl apply -f pod.yaml` in the spec's namespace, with the
// Pod named name.
func apply(ctx context.Context, f *framework.Framework, name string) applyRun {
	ginkgo.GinkgoHelper()
	return applyImage(ctx, f, name, "")
}

// applyImage is apply with the container's image set to image (if not "").
func applyImage(ctx context.Context, f *framework.Framework, name, image string) applyRun {
	ginkgo.GinkgoHelper()
	ginkgo.By("kubectl apply -f pod.yaml")
	manifest := framework.Manifest("pod.yaml")
	if name != podName || image != "" {
		var p corev1.Pod
		framework.ExpectNoError(yaml.Unmarshal(manifest, &p), "read pod.yaml")
		p.Name = name
		if image != "" {
			p.Spec.Containers[0].Image = image
		}
		var err error
		manifest, err = yaml.Marshal(&p)
		framework.ExpectNoError(err, "write pod.yaml with name %s", name)
	}
	args := []string{"apply", "-f", "-", "--namespace", f.Namespace}
	if name == podName {
		// pod.yaml's own apply logs its requests (-v=8: each request's
		// method, URL and headers, and the status it got) for kubectlLog;
		// the timing spec's applies, under other names, log nothing.
		args = append(args, "-v=8")
	}
	began := time.Now()
	res, err := f.Kubectl.Run(ctx, bytes.NewReader(manifest), args...)
	took := time.Since(began)
	framework.ExpectNoError(err, "run kubectl apply")
	if name == podName {
		applied.Record(applyEvidence{ExitCode: res.ExitCode, Stdout: strings.TrimSpace(res.Stdout), Ms: framework.Millis(took)})
	}
	gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
	return applyRun{began: began, ms: framework.Millis(took), log: res.Stderr}
}
