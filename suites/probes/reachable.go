package probes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// reachTimeout bounds the question whether the API server still answers.
const reachTimeout = 10 * time.Second

// unreachable asks the API server behind c for /readyz until it answers
// anything at all (a refusal, a 500 while etcd is down, a 403 on a
// hardened cluster are answers), for reachTimeout, and returns why it did
// not. It asks again a second after a failed try: a refused connection
// fails at once, and an API server that restarts (a static Pod, one a
// kubelet brings back) is away for a moment. It uses a context of its
// own: a probe whose time ran out still asks.
func unreachable(ctx context.Context, c rest.Interface) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reachTimeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = c.Get().AbsPath("/readyz").DoRaw(ctx)
		var st apierrors.APIStatus
		return last == nil || errors.As(last, &st), nil
	})
	if err == nil {
		return nil
	}
	return fmt.Errorf("the API server did not answer GET /readyz within %s: %w", reachTimeout, cmp.Or(last, err))
}

// clusterLost says, once a step failed, whether the cluster itself stopped
// answering. A step's failure is evidence only while the cluster answers:
// a kubectl step that could not connect records no behaviour of the
// cluster, and claims judged on it would be refuted or not checkable for
// nothing the cluster did. A probe that stopped the API server itself
// expects its steps to fail, and is not asked about.
func (r *run) clusterLost(ctx context.Context) error {
	if r.down["kube-apiserver"] {
		return nil
	}
	return unreachable(ctx, r.f.Client.Discovery().RESTClient())
}
