// Package pki makes the certificate authorities, certificates and keys a
// cluster needs, in Go, with ECDSA P-256 keys (fast to generate, accepted by
// every Kubernetes component). Private keys are written with mode 0600.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity of every certificate we issue: long enough for any test run, short
// enough that a forgotten directory holds nothing useful for long.
const Validity = 365 * 24 * time.Hour

// CA is a certificate authority that can issue certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// KeyPair is a PEM-encoded certificate and its private key.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// Usage says what a certificate is for.
type Usage int

const (
	ClientAuth Usage = 1 << iota
	ServerAuth
)

// Request describes a certificate to issue.
type Request struct {
	CommonName    string
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	Usage         Usage
}

// NewCA creates a self-signed CA.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA %q: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA %q: %w", commonName, err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// CertPEM returns the CA certificate in PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPair returns the CA's own certificate and key in PEM.
func (ca *CA) KeyPair() (KeyPair, error) {
	keyPEM, err := EncodeKey(ca.Key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: ca.CertPEM(), KeyPEM: keyPEM}, nil
}

// Issue creates a key and a certificate signed by the CA.
func (ca *CA) Issue(req Request) (KeyPair, error) {
	if req.Usage == 0 {
		return KeyPair{}, errors.New("certificate request without usage")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate key for %q: %w", req.CommonName, err)
	}
	serial, err := serialNumber()
	if err != nil {
		return KeyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: req.CommonName, Organization: req.Organizations},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPs,
	}
	if req.Usage&ClientAuth != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if req.Usage&ServerAuth != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("sign certificate for %q: %w", req.CommonName, err)
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  keyPEM,
	}, nil
}

// NewSigningKey returns a fresh private key (PEM) and its public key (PEM),
// for service account token signing.
func NewSigningKey() (privPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate signing key: %w", err)
	}
	privPEM, err = EncodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, fmt.Errorf("encode public key: %w", err)
	}
	return privPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// EncodeKey encodes a private key as PKCS#8 PEM.
func EncodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Write stores the pair as dir/name.crt (0644) and dir/name.key (0600).
func (kp KeyPair) Write(dir, name string) error {
	if err := WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM, 0o644); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, name+".key"), kp.KeyPEM, 0o600)
}

// WriteFile writes data with exactly mode perm, even if the file existed with
// looser permissions.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	return nil
}

// LoadCA reads a CA written by KeyPair.Write.
func LoadCA(dir, name string) (*CA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, fmt.Errorf("read CA key: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	if cb == nil {
		return nil, fmt.Errorf("CA certificate %s: no PEM block", name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate %s: %w", name, err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, fmt.Errorf("CA key %s: no PEM block", name)
	}
	key, err := parsePrivateKey(kb)
	if err != nil {
		return nil, fmt.Errorf("parse CA key %s: %w", name, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key %s cannot sign", name)
	}
	return &CA{Cert: cert, Key: signer}, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return n, nil
}

// parsePrivateKey reads PKCS#8 (ours) and the PKCS#1 RSA and SEC 1 EC keys
// other tools write (kubeadm's CA key is PKCS#1).
func parsePrivateKey(b *pem.Block) (any, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	default:
		return x509.ParsePKCS8PrivateKey(b.Bytes)
	}
}
