package pki

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestIssuedCertificateVerifiesAgainstCA(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(Request{CommonName: "system:node:n1", Organizations: []string{"system:nodes"},
		IPs: []net.IP{net.ParseIP("10.0.0.2")}, Usage: ClientAuth | ServerAuth})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(kp.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Fatalf("verify for usage %v: %v", usage, err)
		}
	}
	if cert.Subject.CommonName != "system:node:n1" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:nodes" {
		t.Fatalf("subject = %v", cert.Subject)
	}
	if err := cert.VerifyHostname("10.0.0.2"); err != nil {
		t.Fatalf("IP SAN: %v", err)
	}
}

func TestKeysAreWrittenPrivate(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.KeyPair()
	if err != nil {
		t.Fatal(err)
	}
	// A pre-existing, world-readable file must be tightened too.
	if err := os.WriteFile(filepath.Join(dir, "ca.key"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kp.Write(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"ca.key": 0o600, "ca.crt": 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	loaded, err := LoadCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Cert.Equal(ca.Cert) {
		t.Fatal("loaded CA differs")
	}
}
