// Package controllers observes what happens after `kubectl apply -f
// deployment.yaml` (seeds 001 and 004): the Deployment controller makes a
// ReplicaSet, the ReplicaSet controller makes Pods, each owned by the one
// before; scaling, self-healing, cascading deletion and rollouts.
package controllers

import (
	"context"
	"io"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
)

// Identities of the controllers, as the API server authenticates them
// (kube-controller-manager runs with --use-service-account-credentials).
const (
	deploymentController = "system:serviceaccount:kube-system:deployment-controller"
	replicaSetController = "system:serviceaccount:kube-system:replicaset-controller"
	garbageCollector     = "system:serviceaccount:kube-system:generic-garbage-collector"
	scheduler            = "system:kube-scheduler"
)

const deploymentName = "nginx-deployment"

// deployment is deployment.yaml with another name and replica count.
func deployment(name string, replicas int32) *appsv1.Deployment {
	var d appsv1.Deployment
	if err := yaml.Unmarshal(framework.Manifest("deployment.yaml"), &d); err != nil {
		panic(err)
	}
	d.Name = name
	d.Spec.Replicas = &replicas
	return &d
}

func create(ctx context.Context, f *framework.Framework, d *appsv1.Deployment) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, d, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Deployment %s", d.Name)
}

// kubectl runs kubectl in the spec's namespace; an argument that is an
// io.Reader is its standard input.
func kubectl(ctx context.Context, f *framework.Framework, args ...any) {
	ginkgo.GinkgoHelper()
	var stdin io.Reader
	var argv []string
	for _, a := range args {
		switch v := a.(type) {
		case string:
			argv = append(argv, v)
		case io.Reader:
			stdin = v
		}
	}
	res, err := f.Kubectl.Run(ctx, stdin, append(argv, "--namespace", f.Namespace)...)
	framework.ExpectNoError(err, "run kubectl %v", argv)
	gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
}

// ownerRef is a controller owner reference's fields.
type ownerRef struct {
	apiVersion, kind, name, uid    string
	controller, blockOwnerDeletion bool
}

// controllerRef returns the controller owner reference (zero if none).
func controllerRef(refs []metav1.OwnerReference) ownerRef {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return ownerRef{apiVersion: r.APIVersion, kind: r.Kind, name: r.Name, uid: string(r.UID),
				controller: true, blockOwnerDeletion: r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion}
		}
	}
	return ownerRef{}
}
