package observe

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Selected is what a watch of some objects of one resource needs: list
// and watch are a client's (a clientset's Nodes().List and .Watch, a
// dynamic ResourceInterface's), and selector chooses the objects on every
// list and watch (a field or label selector). Through a typed client, not
// its REST client, so that a fake clientset serves it in unit tests.
func Selected[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), selector func(*metav1.ListOptions)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			selector(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			selector(&o)
			return watchFn(ctx, o)
		},
	}
}

// Named is Selected for one object, by name.
func Named[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), name string) *cache.ListWatch {
	sel := NameSelector(name)
	return Selected(list, watchFn, func(o *metav1.ListOptions) { o.FieldSelector = sel })
}
