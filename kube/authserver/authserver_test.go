package authserver

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/yaml"
)

func client(s *Server) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// A token verifies against the published key, found through discovery, the
// way an API server finds it.
func TestTokenVerifiesAgainstPublishedKey(t *testing.T) {
	s := start(t, nil)
	c := client(s)
	var disc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	get(t, c, s.URL+"/.well-known/openid-configuration", &disc)
	if disc.Issuer != s.URL {
		t.Fatalf("issuer %q, want %q", disc.Issuer, s.URL)
	}
	var set struct{ Keys []struct{ X, Y, Kid string } }
	get(t, c, disc.JWKSURI, &set)
	point := append(append([]byte{4}, decode(t, set.Keys[0].X)...), decode(t, set.Keys[0].Y)...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		t.Fatalf("the published key: %v", err)
	}

	token, err := s.Token("donghyun", []string{"dev-team"}, "kubeproof", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("signature does not verify with the published key")
	}
	var claims map[string]any
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(payload, &claims); err != nil || claims["sub"] != "donghyun" || claims["iss"] != s.URL {
		t.Fatalf("claims %v, %v", claims, err)
	}
}

func TestWebhookAnswersKnownTokensOnly(t *testing.T) {
	s := start(t, map[string]authenticationv1.UserInfo{"good": {Username: "jisoo"}})
	c := client(s)
	for token, want := range map[string]bool{"good": true, "bad": false} {
		review := post(t, c, s.URL+"/authenticate", authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}})
		if review.Status.Authenticated != want {
			t.Errorf("token %q: authenticated %t", token, review.Status.Authenticated)
		}
	}
	if got := s.WebhookAnswers(); len(got) != 1 || got[0] != "jisoo" {
		t.Errorf("answers %v", got)
	}
}

// The authorizer allows what it was granted and has no opinion on the rest
// (neither allowed nor denied), and remembers what it was asked.
func TestAuthorizerAllowsGrantsOnly(t *testing.T) {
	s := start(t, nil)
	s.Allow(Grant{User: "mina", Verb: "list", Resource: "configmaps"})
	c := client(s)
	for _, tc := range []struct {
		user, verb string
		want       bool
	}{{"mina", "list", true}, {"mina", "create", false}, {"jisoo", "list", false}} {
		review := post(t, c, s.URL+"/authorize", authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: tc.user, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: tc.verb, Resource: "configmaps", Namespace: "x"}}})
		if review.Status.Allowed != tc.want || review.Status.Denied {
			t.Errorf("%s %s: allowed %t denied %t, want allowed %t and no denial", tc.user, tc.verb, review.Status.Allowed, review.Status.Denied, tc.want)
		}
	}
	if got := s.AuthorizerAsked(); len(got) != 3 || got[0] != "mina list configmaps" {
		t.Errorf("asked %v", got)
	}
}

func TestConfigsParse(t *testing.T) {
	s := start(t, nil)
	var cfg map[string]any
	if err := yaml.UnmarshalStrict(s.AuthenticationConfig("kubeproof"), &cfg); err != nil {
		t.Fatalf("AuthenticationConfiguration: %v", err)
	}
	if err := yaml.UnmarshalStrict(s.WebhookKubeconfig(), &cfg); err != nil {
		t.Fatalf("webhook kubeconfig: %v", err)
	}
}

func get(t *testing.T, c *http.Client, url string, into any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start serves an auth server for the test, closed when the test ends.
func start(t *testing.T, tokens map[string]authenticationv1.UserInfo) *Server {
	t.Helper()
	s, err := Start(tokens)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends a review to the server and returns its answer, of the same type.
func post[T any](t *testing.T, c *http.Client, url string, review T) T {
	t.Helper()
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer T
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("decode the answer of %s: %v", url, err)
	}
	return answer
}
