package cluster

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A kubeconfig whose user authenticates with kubectl's oidc auth-provider
// works as it does with kubectl: the API server gets the user's ID token
// as its bearer token. (Without the plugins linked in, client-go refuses
// the kubeconfig: no Auth Provider found for name "oidc".)
func TestOIDCAuthProvider(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	// An ID token that is still valid: the plugin reads its expiry and
	// uses it without asking the issuer (the signature is the server's
	// business, and this server only reads the header).
	idToken := enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc(fmt.Appendf(nil, `{"iss":"https://issuer.invalid","sub":"alice","exp":%d}`, time.Now().Add(time.Hour).Unix())) + "." + enc([]byte("sig"))
	var got string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// client-go reads a user's credentials only for a server it reaches
	// over TLS.
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, certificate-authority-data: %s}
contexts:
- name: oidc
  context: {cluster: c, user: alice}
current-context: oidc
users:
- name: alice
  user:
    auth-provider:
      name: oidc
      config:
        idp-issuer-url: https://issuer.invalid
        client-id: kubeproof-test
        id-token: %s
`, srv.URL, ca, idToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Connect(context.Background(), kubeconfig, "", 10*time.Second); err != nil {
		t.Fatalf("connect through the oidc auth-provider: %v", err)
	}
	if got != "Bearer "+idToken {
		t.Errorf("the API server got Authorization %q, want the ID token", got)
	}
}
