package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// A certificate is asked of the cluster's CSR API for the user (CN) in
// its groups (O), for client authentication by the API server's client
// signer, approved, taken once issued, and the CSR deleted after; the key
// returned is the one the request was signed with.
func TestIssueClientCertificate(t *testing.T) {
	// The fake serves no streamed list (watch-list), which client-go's
	// reflectors ask for first by default.
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	client := fake.NewClientset()
	var requested *x509.CertificateRequest
	var approved, deleted bool
	client.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		csr := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		block, _ := pem.Decode(csr.Spec.Request)
		var err error
		if requested, err = x509.ParseCertificateRequest(block.Bytes); err != nil {
			t.Error(err)
		}
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || !slices.Equal(csr.Spec.Usages, []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}) {
			t.Errorf("CSR spec %+v", csr.Spec)
		}
		if csr.Labels["kubeproof.io/run"] != "r1" || csr.GenerateName != "kubeproof-system-node-n1-" {
			t.Errorf("CSR meta %+v", csr.ObjectMeta)
		}
		csr.Name = "csr-1"
		return false, nil, nil
	})
	client.PrependReactor("update", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "approval" {
			return false, nil, nil
		}
		csr := a.(k8stesting.UpdateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		approved = slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
			return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue
		})
		// The signer: a certificate as soon as it is approved.
		csr.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\nissued\n-----END CERTIFICATE-----\n")
		return false, nil, nil
	})
	client.PrependReactor("delete", "certificatesigningrequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		deleted = true
		return false, nil, nil
	})
	cert, key, err := IssueClientCertificate(context.Background(), client, "system:node:n1", []string{"system:nodes"}, map[string]string{"kubeproof.io/run": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if requested.Subject.CommonName != "system:node:n1" || !slices.Equal(requested.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %+v", requested.Subject)
	}
	if !approved || !deleted || string(cert) != "-----BEGIN CERTIFICATE-----\nissued\n-----END CERTIFICATE-----\n" {
		t.Errorf("approved %t, deleted %t, cert %q", approved, deleted, cert)
	}
	block, _ := pem.Decode(key)
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.(*ecdsa.PrivateKey).PublicKey.Equal(requested.PublicKey) {
		t.Error("the key returned is not the one the request was signed with")
	}
}

// The configurations keep the server and its CA and carry one credential.
func TestConfigs(t *testing.T) {
	base := &rest.Config{Host: "https://h:6443", BearerToken: "admin", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("c"), KeyData: []byte("k")}}
	if a := Anonymous(base); a.BearerToken != "" || a.CertData != nil || string(a.CAData) != "ca" || a.Host != base.Host {
		t.Errorf("anonymous %+v", a)
	}
	if b := Bearer(base, "t"); b.BearerToken != "t" || b.CertData != nil {
		t.Errorf("bearer %+v", b)
	}
	if c := Certificate(base, []byte("c2"), []byte("k2")); c.BearerToken != "" || string(c.CertData) != "c2" || string(c.KeyData) != "k2" {
		t.Errorf("certificate %+v", c)
	}
	if got := sanitize("system:serviceaccount:ns:Sa_1"); got != "system-serviceaccount-ns--a-1" {
		t.Errorf("sanitize %q", got)
	}
}

// WhoAmI is the API server's SelfSubjectReview of the configuration.
func TestWhoAmI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews" || r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(authenticationv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"},
			Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "jisoo", Groups: []string{"dev"}}}})
	}))
	defer srv.Close()
	who, err := WhoAmI(context.Background(), &rest.Config{Host: srv.URL, BearerToken: "t"})
	if err != nil || who.Username != "jisoo" || !slices.Equal(who.Groups, []string{"dev"}) {
		t.Errorf("who %+v, %v", who, err)
	}
	if _, err := WhoAmI(context.Background(), &rest.Config{Host: srv.URL, BearerToken: "other"}); err == nil {
		t.Error("a refused review: no error")
	}
}

// A ServiceAccount's token comes from the TokenRequest API.
func TestServiceAccountToken(t *testing.T) {
	client := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns"}})
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		if tr.Spec.ExpirationSeconds == nil || *tr.Spec.ExpirationSeconds != 3600 {
			t.Errorf("token request %+v", tr.Spec)
		}
		tr.Status.Token = "jwt"
		return true, tr, nil
	})
	if got, err := ServiceAccountToken(context.Background(), client, "ns", "sa"); err != nil || got != "jwt" {
		t.Errorf("token %q, %v", got, err)
	}
}
