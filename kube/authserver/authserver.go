// Package authserver is an identity provider the harness serves itself, for
// API servers configured to trust it: an OIDC issuer (discovery document and
// signing keys, tokens as ES256 JWTs) and a webhook token authenticator
// (TokenReview). It listens on 127.0.0.1 with a certificate from its own CA.
package authserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/kubeproof/kubeproof/internal/pki"
)

// Server is the running identity provider.
type Server struct {
	// URL is the issuer URL (https://127.0.0.1:port).
	URL string
	// CAPEM verifies the server's certificate.
	CAPEM []byte

	key    *ecdsa.PrivateKey
	kid    string
	tokens map[string]authenticationv1.UserInfo
	srv    *http.Server

	mu       sync.Mutex
	webhooks []string // users the webhook answered for, in order
	grants   []Grant
	asked    []string // requests the authorizer was asked about, in order
}

// Grant is a request the authorization webhook allows: User doing Verb on
// Resource (in any namespace).
type Grant struct{ User, Verb, Resource string }

// Start serves the issuer and the webhook. tokens are the opaque tokens the
// webhook authenticator accepts, with the user each stands for.
func Start(tokens map[string]authenticationv1.UserInfo) (*Server, error) {
	ca, err := pki.NewCA("kubeproof-authserver-ca")
	if err != nil {
		return nil, err
	}
	kp, err := ca.Issue(pki.Request{CommonName: "kubeproof-authserver", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usage: pki.ServerAuth})
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("authserver certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{
		URL: "https://" + lis.Addr().String(), CAPEM: ca.CertPEM(),
		key: key, kid: "kubeproof-1", tokens: tokens,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("/keys", s.jwks)
	mux.HandleFunc("/authenticate", s.webhook)
	mux.HandleFunc("/authorize", s.authorize)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer": s.URL, "jwks_uri": s.URL + "/keys",
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	// The uncompressed point: 0x04, then X and Y, 32 bytes each on P-256.
	point, err := s.key.PublicKey.Bytes()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": s.kid,
		"x": b64(point[1:33]), "y": b64(point[33:65]),
	}}})
}

// webhook answers a TokenReview for the tokens it knows.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	var review authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	user, ok := s.tokens[review.Spec.Token]
	review.Status = authenticationv1.TokenReviewStatus{Authenticated: ok}
	if ok {
		review.Status.User = user
		s.mu.Lock()
		s.webhooks = append(s.webhooks, user.Username)
		s.mu.Unlock()
	}
	writeJSON(w, review)
}

// WebhookAnswers lists the users the webhook authenticated, in order.
func (s *Server) WebhookAnswers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.webhooks...)
}

// Allow makes the authorization webhook allow g. It has no opinion on
// anything else, so that the next authorizer of the chain decides.
func (s *Server) Allow(g Grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants = append(s.grants, g)
}

// authorize answers a SubjectAccessReview: allowed for a grant, no opinion
// otherwise.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	var review authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	asked := Grant{User: review.Spec.User}
	if ra := review.Spec.ResourceAttributes; ra != nil {
		asked.Verb, asked.Resource = ra.Verb, ra.Resource
	}
	s.mu.Lock()
	s.asked = append(s.asked, asked.User+" "+asked.Verb+" "+asked.Resource)
	allowed := slices.Contains(s.grants, asked)
	s.mu.Unlock()
	review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Reason: "kubeproof authorization webhook: no opinion"}
	if allowed {
		review.Status.Reason = "kubeproof authorization webhook: granted"
	}
	writeJSON(w, review)
}

// AuthorizerAsked lists the requests the authorization webhook was asked
// about ("user verb resource"), in order.
func (s *Server) AuthorizerAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// Token issues a signed ID token (ES256 JWT) for subject in groups.
func (s *Server) Token(subject string, groups []string, audience string, ttl time.Duration) (string, error) {
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": s.kid})
	claims, _ := json.Marshal(map[string]any{
		"iss": s.URL, "sub": subject, "aud": audience, "groups": groups,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(ttl).Unix(),
	})
	signingInput := b64(header) + "." + b64(claims)
	digest := sha256.Sum256([]byte(signingInput))
	r, sig, err := ecdsa.Sign(rand.Reader, s.key, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	// JWS ES256 signatures are r||s, each 32 bytes.
	return signingInput + "." + b64(append(pad32(r), pad32(sig)...)), nil
}

// AuthenticationConfig is a structured AuthenticationConfiguration that
// trusts this issuer for audience, mapping sub to the user name and the
// groups claim to groups, both without prefix.
func (s *Server) AuthenticationConfig(audience string) []byte {
	ca := strings.ReplaceAll(strings.TrimSpace(string(s.CAPEM)), "\n", "\n        ")
	return []byte(fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
        %s
  claimMappings:
    username:
      claim: sub
      prefix: ""
    groups:
      claim: groups
      prefix: ""
`, s.URL, audience, ca))
}

// WebhookKubeconfig is the kubeconfig kube-apiserver's
// --authentication-token-webhook-config-file takes to reach the webhook.
func (s *Server) WebhookKubeconfig() []byte { return s.kubeconfig("/authenticate") }

// AuthorizerKubeconfig is the kubeconfig kube-apiserver's
// --authorization-webhook-config-file takes to reach the authorizer.
func (s *Server) AuthorizerKubeconfig() []byte { return s.kubeconfig("/authorize") }

func (s *Server) kubeconfig(path string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubeproof-authserver
  cluster:
    server: %s%s
    certificate-authority-data: %s
users:
- name: kube-apiserver
contexts:
- name: webhook
  context: {cluster: kubeproof-authserver, user: kube-apiserver}
current-context: webhook
`, s.URL, path, base64.StdEncoding.EncodeToString(s.CAPEM)))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func pad32(n *big.Int) []byte {
	b := n.Bytes()
	out := make([]byte, 32)
	copy(out[32-len(b):], b)
	return out
}
