// Package forge lets a sandbox's git and forge API clients work on the
// forges the admin names while the user's credential for them stays
// outside (ADR 0042). The egress proxy hands it the tunnels to those hosts;
// it ends their TLS with a certificate of a per-launch authority the
// sandbox trusts (Authority), drops whatever credential the request
// carries, adds the user's (Credential, found outside as git would find
// it), and masks the credential in every answer before it reaches the
// sandbox (Server).
package forge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// validity is how long the authority and its certificates are valid: a
// session may run for weeks, and the key lives only as long as the
// launcher's process.
const validity = 90 * 24 * time.Hour

// Authority is the launch's own certificate authority. Its key exists only
// in the launcher's memory. It carries X.509 name constraints naming
// exactly the forge hosts (and no IP address), so a client that trusts it
// accepts it for those names only, and it issues for those hosts alone.
type Authority struct {
	hosts []string
	cert  *x509.Certificate
	key   *ecdsa.PrivateKey
	pem   []byte

	leafKey *ecdsa.PrivateKey
	mu      sync.Mutex
	leaves  map[string]*tls.Certificate
}

// NewAuthority makes an authority for hosts (DNS names, not addresses).
func NewAuthority(hosts []string) (*Authority, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("a forge authority needs at least one host")
	}
	a := &Authority{leaves: map[string]*tls.Certificate{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if h == "" || net.ParseIP(h) != nil {
			return nil, fmt.Errorf("%q is not a host name", h)
		}
		if !slices.Contains(a.hosts, h) {
			a.hosts = append(a.hosts, h)
		}
	}
	var err error
	if a.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	if a.leafKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	now := time.Now()
	_, all4, _ := net.ParseCIDR("0.0.0.0/0")
	_, all6, _ := net.ParseCIDR("::/0")
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: "claude-sandbox forge authority of one launch", Organization: []string{"claude-sandbox"}},
		NotBefore:                   now.Add(-time.Hour),
		NotAfter:                    now.Add(validity),
		IsCA:                        true,
		BasicConstraintsValid:       true,
		MaxPathLenZero:              true,
		KeyUsage:                    x509.KeyUsageCertSign,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         a.hosts,
		ExcludedIPRanges:            []*net.IPNet{all4, all6},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &a.key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	if a.cert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	a.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return a, nil
}

// PEM is the authority's certificate, which the sandbox trusts.
func (a *Authority) PEM() []byte { return slices.Clone(a.pem) }

// Hosts are the names the authority vouches for.
func (a *Authority) Hosts() []string { return slices.Clone(a.hosts) }

// Certificate is the server certificate for host, made once; a host the
// authority was not made for gets none.
func (a *Authority) Certificate(host string) (*tls.Certificate, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if !slices.Contains(a.hosts, host) {
		return nil, fmt.Errorf("the forge authority does not vouch for %q", host)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.leaves[host]; ok {
		return c, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &a.leafKey.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: a.leafKey}
	a.leaves[host] = c
	return c, nil
}

// serial is a random 127-bit serial number; crypto/rand does not fail.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
