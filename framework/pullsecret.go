package framework

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// pullSecretName is the Secret each of the run's namespaces gets when the
// run is given a registry's credentials (--kubeproof.image-pull-secret).
const pullSecretName = "kubeproof-pull"

// usePullSecret gives namespace ns the run's registry credentials: a Secret
// from the docker config file, named in the namespace's default
// ServiceAccount, so that every Pod there pulls with it (nothing else in a
// spec has to know).
func usePullSecret(ctx context.Context, client kubernetes.Interface, ns string) error {
	path := TestContext.ImagePullSecret
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the registry credentials: %w", err)
	}
	_, err = client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecretName},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: data},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create the pull secret: %w", err)
	}
	patch := fmt.Sprintf(`{"imagePullSecrets":[{"name":%q}]}`, pullSecretName)
	if _, err := client.CoreV1().ServiceAccounts(ns).Patch(ctx, "default", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("name the pull secret in the default ServiceAccount: %w", err)
	}
	return nil
}
