package incluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// jobNameLabel is the label the Job controller puts on the Job's Pods.
const jobNameLabel = "batch.kubernetes.io/job-name"

// follow waits for the Pod to start, streams the run's output to stdout
// until it ends and returns its exit code. A Ctrl-C here goes on to the run
// inside (StopAnnotation): after the first, the run stops its specs,
// judges what they observed and ends, and follow waits for that (at most
// stopTimeout); after the second it waits no more.
func (in *inside) follow(ctx context.Context, image string, timeout time.Duration) (exitcode.Code, error) {
	ints := runner.InterruptsOf(ctx)
	// Past the start, the waits outlive the first Ctrl-C: the run inside
	// still has a report to write.
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var mu sync.Mutex
	pod := ""
	pass := func(n int) {
		mu.Lock()
		name := pod
		mu.Unlock()
		if name != "" {
			in.interrupt(context.WithoutCancel(ctx), name, n)
		}
		if n == 1 {
			time.AfterFunc(stopTimeout, stop)
		} else {
			stop()
		}
	}
	defer ints.Watch(func(n int) { go pass(n) })()

	started, err := in.awaitStart(ctx, image)
	if err != nil {
		return exitcode.OK, err
	}
	mu.Lock()
	pod, in.pod = started.Name, started.Name
	mu.Unlock()
	in.pr.Infof("kubeproof runs in Pod %s/%s on node %s; its output follows", in.namespace, pod, started.Spec.NodeName)
	logs, err := in.client.CoreV1().Pods(in.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: runContainer, Follow: true}).Stream(wctx)
	if err == nil {
		_, err = io.Copy(os.Stdout, logs)
		logs.Close()
	}
	if err != nil && wctx.Err() == nil {
		in.pr.Infof("the run's output stopped (%v): waiting for the run to end", err)
	}
	wait := timeout + stopTimeout
	if ints.Interrupted() {
		wait = stopTimeout
	}
	ended, err := in.awaitEnd(wctx, pod, wait)
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.OK, fmt.Errorf("%w (the run in the cluster did not stop in time: %v)", ctx.Err(), err)
		}
		return exitcode.OK, err
	}
	return exitcode.Code(ended.ExitCode), nil
}

// interrupt asks the run inside to stop as n Ctrl-Cs would.
func (in *inside) interrupt(ctx context.Context, pod string, n int) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, StopAnnotation, strconv.Itoa(n))
	if _, err := in.client.CoreV1().Pods(in.namespace).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		in.pr.Infof("could not pass the interrupt on to the run in the cluster: %v", err)
	}
}

func (in *inside) podsLW() cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(in.client.CoreV1().RESTClient(), "pods", in.namespace, func(o *metav1.ListOptions) {
		o.LabelSelector = jobNameLabel + "=" + jobName
	})
}

// awaitStart waits until the run container has started (or already ended);
// an image the nodes cannot pull, or a Pod that cannot start, ends the
// wait with what the kubelet said.
func (in *inside) awaitStart(ctx context.Context, image string) (*corev1.Pod, error) {
	var stuck error
	p, err := observe.Until(ctx, startTimeout, "kubeproof's Pod to start (Job "+in.namespace+"/"+jobName+")", in.podsLW(), func(p *corev1.Pod) (bool, error) {
		if s := container(p, runContainer); s != nil && (s.State.Running != nil || s.State.Terminated != nil) {
			return true, nil
		}
		switch {
		case podstate.ImageUnavailable(p):
			stuck = exitcode.Errorf(exitcode.Registry, "the nodes could not pull kubeproof's image %s: %s", image, podstate.StuckReason(p)+waitingOf(p))
		case podstate.StuckReason(p) != "":
			stuck = exitcode.Errorf(exitcode.ClusterSetup, "kubeproof's Pod %s/%s cannot start: %s", in.namespace, p.Name, podstate.StuckReason(p))
		}
		return stuck != nil, nil
	}, describePod)
	if err != nil {
		return nil, err
	}
	return p, stuck
}

// awaitEnd waits until the run container has ended.
func (in *inside) awaitEnd(ctx context.Context, pod string, timeout time.Duration) (*corev1.ContainerStateTerminated, error) {
	p, err := observe.Until(ctx, timeout, "the run in Pod "+in.namespace+"/"+pod+" to end", in.podsLW(), func(p *corev1.Pod) (bool, error) {
		s := container(p, runContainer)
		return s != nil && s.State.Terminated != nil, nil
	}, describePod)
	if err != nil {
		return nil, err
	}
	return container(p, runContainer).State.Terminated, nil
}

// podsGone waits until the Job's Pod is gone: its run has stopped.
func (in *inside) podsGone(ctx context.Context) error {
	_, err := observe.Gone(ctx, removeTimeout, "kubeproof's Pod to be deleted", in.podsLW(), describePod)
	return err
}

func container(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// waitingOf adds the kubelet's message about the image, if StuckReason
// had none.
func waitingOf(p *corev1.Pod) string {
	if s := container(p, runContainer); s != nil && s.State.Waiting != nil && s.State.Waiting.Message == "" {
		return " (" + s.State.Waiting.Reason + ")"
	}
	return ""
}

// describePod says where the Pod is: its phase, node, and each
// container's state.
func describePod(p *corev1.Pod) string {
	parts := []string{fmt.Sprintf("Pod %s %s", p.Name, p.Status.Phase)}
	if p.Spec.NodeName != "" {
		parts = append(parts, "on "+p.Spec.NodeName)
	}
	if c := podstate.Condition(p.Status.Conditions, corev1.PodScheduled); c != nil && c.Status != corev1.ConditionTrue {
		parts = append(parts, fmt.Sprintf("not scheduled: %s %s", c.Reason, c.Message))
	}
	for _, s := range p.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("%s waiting: %s %s", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message))
		case s.State.Running != nil:
			parts = append(parts, s.Name+" running")
		case s.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s ended with %d", s.Name, s.State.Terminated.ExitCode))
		}
	}
	return strings.Join(parts, ", ")
}
