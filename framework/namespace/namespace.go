// Package namespace creates and removes the throwaway namespaces that
// specs and traces work in.
package namespace

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework/observe"
)

// Delete deletes namespace name and waits until it is gone (its objects
// with it), so that a namespace that never finishes deleting is an error,
// not a silent leak. A namespace that is already gone is not an error.
func Delete(ctx context.Context, client kubernetes.Interface, name string, timeout time.Duration) error {
	if err := StartDelete(ctx, client, name); err != nil {
		return err
	}
	return waitGone(ctx, client, "namespace "+name+" to be deleted", func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(name)
	}, timeout)
}

// StartDelete deletes namespace name without waiting for it to go; one that
// is already gone is not an error.
func StartDelete(ctx context.Context, client kubernetes.Interface, name string) error {
	err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// AllGone waits until no namespace matches labelSelector; the error names
// those still there, with their phase and conditions.
func AllGone(ctx context.Context, client kubernetes.Interface, labelSelector string, timeout time.Duration) error {
	return waitGone(ctx, client, "every namespace with labels "+labelSelector+" to be deleted", func(o *metav1.ListOptions) {
		o.LabelSelector = labelSelector
	}, timeout)
}

func waitGone(ctx context.Context, client kubernetes.Interface, what string, selector func(*metav1.ListOptions), timeout time.Duration) error {
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "namespaces", "", selector)
	_, err := observe.Gone(ctx, timeout, what, lw, describe)
	return err
}

// describe says why a namespace is still there: its phase, the finalizers
// it waits on, and the deletion conditions that report a problem.
func describe(ns *corev1.Namespace) string {
	out := fmt.Sprintf("namespace %s (%s", ns.Name, ns.Status.Phase)
	if len(ns.Finalizers) > 0 {
		out += fmt.Sprintf(", finalizers %v", ns.Finalizers)
	}
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out += fmt.Sprintf(", %s: %s", c.Type, c.Message)
		}
	}
	return out + ")"
}
