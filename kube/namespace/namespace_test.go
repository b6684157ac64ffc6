package namespace

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func ns(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// StartDelete deletes the namespace and ends its Pods with a one-second
// grace; a namespace already gone, or Pods the user may not delete, are no
// error; another failure is, naming the namespace.
func TestStartDelete(t *testing.T) {
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	client := fake.NewClientset(ns("kp-a", nil))
	var grace *int64
	client.PrependReactor("delete-collection", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		grace = a.(k8stesting.DeleteCollectionActionImpl).DeleteOptions.GracePeriodSeconds
		if a.GetNamespace() == "kp-b" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
		}
		return false, nil, nil
	})
	if err := Delete(context.Background(), client, "kp-a", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if grace == nil || *grace != 1 {
		t.Errorf("the Pods' grace %v, want 1s", grace)
	}
	if err := StartDelete(context.Background(), client, "kp-a"); err != nil {
		t.Errorf("a namespace already gone: %v", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns("kp-b", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := StartDelete(context.Background(), client, "kp-b"); err != nil {
		t.Errorf("Pods the user may not delete: %v", err)
	}
	client.PrependReactor("delete", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is gone")
	})
	if err := StartDelete(context.Background(), client, "kp-c"); err == nil || !strings.Contains(err.Error(), "delete namespace kp-c: etcd is gone") {
		t.Errorf("a failed delete: %v", err)
	}
}

// AllGone waits for the namespaces with the labels only, and when one
// stays, names it with its phase, finalizers and the conditions that
// report a problem.
func TestAllGone(t *testing.T) {
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	stuck := ns("kp-stuck", map[string]string{"run": "r1"})
	stuck.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{
		{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue, Message: "a finalizer of a custom resource"},
		{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionFalse, Message: "fine"},
	}}
	stuck.Finalizers = []string{"example.com/hold"}
	client := fake.NewClientset(stuck, ns("kp-other", map[string]string{"run": "r2"}))
	err := AllGone(context.Background(), client, "run=r1", time.Second)
	if err == nil || !strings.Contains(err.Error(), "namespace kp-stuck (Terminating, finalizers [example.com/hold], NamespaceDeletionContentFailure: a finalizer of a custom resource)") ||
		strings.Contains(err.Error(), "fine") || strings.Contains(err.Error(), "kp-other") {
		t.Errorf("a stuck namespace: %v", err)
	}
	if err := AllGone(context.Background(), client, "run=r3", 10*time.Second); err != nil {
		t.Errorf("no namespace with the labels: %v", err)
	}
}
