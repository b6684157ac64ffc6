// Package identity makes the users checks act as: x509 client certificates
// issued through the cluster's own CSR API, ServiceAccount tokens from the
// TokenRequest API, bearer tokens, and no credentials at all.
package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// Anonymous is cfg with every credential removed.
func Anonymous(cfg *rest.Config) *rest.Config { return rest.AnonymousClientConfig(cfg) }

// Bearer is cfg authenticating with token only.
func Bearer(cfg *rest.Config, token string) *rest.Config {
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token
	return c
}

// Certificate is cfg authenticating with a client certificate only.
func Certificate(cfg *rest.Config, certPEM, keyPEM []byte) *rest.Config {
	c := rest.AnonymousClientConfig(cfg)
	c.CertData, c.KeyData = certPEM, keyPEM
	return c
}

// IssueClientCertificate gets a client certificate for user (CN) in groups
// (O) from the cluster itself: a CertificateSigningRequest for the
// kube-apiserver-client signer, approved by admin. The CSR is deleted after.
func IssueClientCertificate(ctx context.Context, admin kubernetes.Interface, user string, groups []string, labels map[string]string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: user, Organization: groups},
	}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CSR: %w", err)
	}
	expiry := int32(3600)
	csr, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kubeproof-" + sanitize(user) + "-", Labels: labels},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			ExpirationSeconds: &expiry,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("create CertificateSigningRequest: %w", err)
	}
	defer func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.WithoutCancel(ctx), csr.Name, metav1.DeleteOptions{})
	}()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "KubeproofCheck", Message: "approved by kubeproof for a check",
	})
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("approve CertificateSigningRequest %s: %w", csr.Name, err)
	}
	csrs := admin.CertificatesV1().CertificateSigningRequests()
	lw := observe.Named(csrs.List, csrs.Watch, csr.Name)
	issued, err := observe.Until(ctx, time.Minute, "the certificate of CSR "+csr.Name, lw, func(c *certificatesv1.CertificateSigningRequest) (bool, error) {
		return len(c.Status.Certificate) > 0, nil
	}, func(c *certificatesv1.CertificateSigningRequest) string {
		return fmt.Sprintf("CSR %s conditions %v", c.Name, c.Status.Conditions)
	})
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return issued.Status.Certificate, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// ServiceAccountToken asks the TokenRequest API for a token of the
// ServiceAccount (which must exist).
func ServiceAccountToken(ctx context.Context, client kubernetes.Interface, namespace, name string) (string, error) {
	expiry := int64(3600)
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// WhoAmI asks the API server who cfg authenticates as (SelfSubjectReview).
func WhoAmI(ctx context.Context, cfg *rest.Config) (authenticationv1.UserInfo, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("SelfSubjectReview: %w", err)
	}
	return r.Status.UserInfo, nil
}

func sanitize(s string) string {
	out := make([]byte, 0, len(s))
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
		default:
			out = append(out, '-')
		}
	}
	return string(out)
}
