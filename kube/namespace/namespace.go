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

	"github.com/kubeproof/kubeproof/kube/observe"
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
//
// It also ends the namespace's Pods with a one-second grace period. Left to
// itself, the namespace controller starts 5 s after the delete, deletes the
// Pods with their own grace period (30 s by default) and, while any remain,
// looks again only after half of the largest one: a namespace of Pods that
// stop at once still takes over 20 s to go. These Pods are the harness's
// own and their work is done; the grace is one second, not zero, so that
// the kubelet stops their containers before the objects go. A spec that
// checks termination deletes its Pods itself, before its namespace.
func StartDelete(ctx context.Context, client kubernetes.Interface, name string) error {
	err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	grace := int64(1)
	err = client.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{})
	// A user allowed to delete the namespace but not its Pods (Forbidden)
	// only waits longer: the namespace controller removes them anyway.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("end the Pods of namespace %s: %w", name, err)
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
	namespaces := client.CoreV1().Namespaces()
	lw := observe.Selected(namespaces.List, namespaces.Watch, selector)
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
