//go:build e2e

package incluster_test

// Users of the in-cluster test: one without RBAC, one with a token and
// every permission, and what a user without what a run needs gets.

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// badInput checks, on the real cluster, what a user who may not do what a
// run needs gets, and a registry that does not answer: a one-line error,
// its exit code, and no object made.
func (e *env) badInput(t *testing.T) {
	ctx := context.Background()
	// A user the cluster authenticates and RBAC grants nothing.
	sa, err := e.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: "kp-nobody-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.CoreV1().ServiceAccounts("default").Delete(ctx, sa.Name, metav1.DeleteOptions{}) })
	tok, err := e.client.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nobody := e.kubeconfigWithToken(t, tok.Status.Token)
	refused := e.kubeconfigWithToken(t, "not-a-token-of-this-cluster")
	before := e.namespaces(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"a user without RBAC", append([]string{"run"}, e.runFlags(nobody)...), 11, []string{"may not create namespaces, delete namespaces"}},
		{"a user without RBAC, in the cluster", append([]string{"run", "--in-cluster"}, e.runFlags(nobody)...), 11,
			[]string{"create namespaces", "create clusterroles", "create jobs.batch", "create pods/exec", "grant every permission"}},
		{"credentials refused", append([]string{"run"}, e.runFlags(refused)...), 15, []string{"401"}},
		{"a context that does not exist", append([]string{"run", "--context", "nope"}, e.runFlags(e.kubeconfig)...), 6, []string{`"nope"`}},
		{"a registry that does not answer, in the cluster", append([]string{"run", "--in-cluster", "--image-registry", "127.0.0.1:1/kubeproof"}, e.runFlags(e.kubeconfig)[:4]...), 12, []string{"image registry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := e.run(t, append(tc.args, "--report-dir", filepath.Join(t.TempDir(), "r"))...)
			errs := regexp.MustCompile(`(?m)^kubeproof: error: .*$`).FindAllString(out, -1)
			t.Logf("exit %d: %v", code, errs)
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, tail(out))
			}
			if len(errs) != 1 || strings.Contains(out, "kubeproof: error: ") && strings.Count(out, "\n    ") > 0 {
				t.Errorf("want one error line:\n%s", tail(out))
			}
			for _, s := range tc.says {
				if len(errs) == 1 && !strings.Contains(errs[0], s) {
					t.Errorf("the error does not say %q: %s", s, errs[0])
				}
			}
			if got := e.namespaces(t); !slices.Equal(got, before) {
				t.Errorf("namespaces changed: %v, were %v", got, before)
			}
			e.clean(t)
		})
	}
}

// kubeconfigWithToken is the test cluster's kubeconfig with its user's
// credentials replaced by a bearer token.
func (e *env) kubeconfigWithToken(t *testing.T, token string) string {
	t.Helper()
	cfg, err := cluster.RESTConfig(e.kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q, certificate-authority-data: %q}\nusers:\n- name: u\n  user: {token: %q}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n",
		cfg.Host, b64(cfg.CAData, cfg.CAFile, t), token)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// adminWithToken is a kubeconfig of a ServiceAccount bound to
// cluster-admin, with a token for two hours; both go when the test ends.
func (e *env) adminWithToken(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	sa, err := e.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: "kp-admin-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.CoreV1().ServiceAccounts("default").Delete(ctx, sa.Name, metav1.DeleteOptions{}) })
	b, err := e.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: "default"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{}) })
	tok, err := e.client.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7200)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e.kubeconfigWithToken(t, tok.Status.Token)
}

// b64 is a CA for a kubeconfig: its data, or its file's.
func b64(data []byte, file string, t *testing.T) string {
	t.Helper()
	if len(data) == 0 {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
	}
	return base64.StdEncoding.EncodeToString(data)
}

func (e *env) namespaces(t *testing.T) []string {
	t.Helper()
	list, err := e.client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	slices.Sort(out)
	return out
}
