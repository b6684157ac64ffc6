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
	err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "namespaces", "", func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(name)
	})
	// Until ignores deletions, so wait for the list to be empty instead: a
	// namespace that is gone is never listed again.
	_, err = observe.Gone(ctx, timeout, "namespace "+name+" to be deleted", lw, func(ns *corev1.Namespace) string {
		return fmt.Sprintf("namespace %s phase %s conditions %v", ns.Name, ns.Status.Phase, ns.Status.Conditions)
	})
	return err
}
