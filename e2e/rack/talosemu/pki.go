package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CA is a Talos-style Ed25519 certificate authority (one per cluster, plus throw-away ones
// for maintenance-mode server certificates).
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     ed25519.PrivateKey
	Pool    *x509.CertPool
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

// NewCA creates a self-signed Ed25519 CA, as `talosctl gen secrets` does (organization = cluster).
func NewCA(org string) (*CA, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{org}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:     priv,
		Pool:    pool,
	}, nil
}

// Leaf is an issued certificate with its Ed25519 key.
type Leaf struct {
	CertPEM []byte
	KeyPEM  []byte // PKCS#8 under the label "ED25519 PRIVATE KEY", like Talos writes it
	TLS     tls.Certificate
}

// Issue signs a leaf certificate. ips/dns become SANs; orgs the subject organizations
// (Talos puts the role there, e.g. "os:admin").
func (ca *CA) Issue(cn string, orgs []string, ips []net.IP, dns []string, server bool) (*Leaf, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return nil, err
	}
	pk8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	leaf, _ := x509.ParseCertificate(der)
	return &Leaf{
		CertPEM: certPEM,
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "ED25519 PRIVATE KEY", Bytes: pk8}),
		TLS:     tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: priv, Leaf: leaf},
	}, nil
}

// LoadTalosKeyPair parses a talosconfig crt/key pair (accepts both PEM labels for the key).
func LoadTalosKeyPair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	fixed := []byte(strings.ReplaceAll(string(keyPEM), "ED25519 PRIVATE KEY", "PRIVATE KEY"))
	return tls.X509KeyPair(certPEM, fixed)
}

// Talosconfig is the on-disk client configuration, in the real talosconfig format.
type Talosconfig struct {
	Context  string                         `json:"context"`
	Contexts map[string]*TalosconfigContext `json:"contexts"`
}

// TalosconfigContext is one context of a talosconfig (ca/crt/key are base64 of PEM).
type TalosconfigContext struct {
	Endpoints []string `json:"endpoints"`
	Nodes     []string `json:"nodes,omitempty"`
	CA        string   `json:"ca"`
	Crt       string   `json:"crt"`
	Key       string   `json:"key"`
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// renderTalosconfig writes YAML by hand (stable key order, no dependency on a YAML emitter).
func renderTalosconfig(tc *Talosconfig) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "context: %s\ncontexts:\n", tc.Context)
	for name, c := range tc.Contexts {
		fmt.Fprintf(&sb, "    %s:\n        endpoints:\n", name)
		for _, e := range c.Endpoints {
			fmt.Fprintf(&sb, "            - %s\n", e)
		}
		if len(c.Nodes) > 0 {
			sb.WriteString("        nodes:\n")
			for _, n := range c.Nodes {
				fmt.Fprintf(&sb, "            - %s\n", n)
			}
		}
		fmt.Fprintf(&sb, "        ca: %s\n        crt: %s\n        key: %s\n", c.CA, c.Crt, c.Key)
	}
	return sb.String()
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
