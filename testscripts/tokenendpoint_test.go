package testscripts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/rogpeppe/go-internal/testscript"
)

// serveTokenEndpoint NAME LOG serves a stand-in for Claude's OAuth token
// endpoint on a loopback port until the script ends, over https with a
// certificate for the real endpoint's host signed by a CA of its own (its
// PEM in the file $NAME_CA names, for SSL_CERT_FILE); $NAME_ADDR is its
// host:port, for an upstream proxy stand-in to send tunnels to. Every
// refresh gets SECRET-REFRESHED-ACCESS and SECRET-REFRESHED-REFRESH for 8
// hours; the refresh token it was given is appended to LOG.
func serveTokenEndpoint(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve-token-endpoint NAME LOG")
	}
	endpoint, err := url.Parse(authproxy.TokenURL)
	ts.Check(err)
	caPEM, cert, err := tokenEndpointCert(endpoint.Hostname())
	ts.Check(err)
	ca := ts.MkAbs(args[0] + ".ca.pem")
	ts.Check(os.WriteFile(ca, caPEM, 0o644))
	log := ts.MkAbs(args[1])
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+endpoint.Path, func(w http.ResponseWriter, r *http.Request) {
		var req map[string]string
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req["grant_type"] != "refresh_token" {
			http.Error(w, "not a refresh", http.StatusBadRequest)
			return
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err == nil {
			fmt.Fprintf(f, "refresh_token=%s\n", req["refresh_token"])
			f.Close()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"token_type":"Bearer","access_token":"SECRET-REFRESHED-ACCESS","refresh_token":"SECRET-REFRESHED-REFRESH","expires_in":28800}`)
	})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	ts.Check(err)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(args[0]+"_ADDR", ln.Addr().String())
	ts.Setenv(args[0]+"_CA", ca)
}

// tokenEndpointCert makes a CA and a certificate for host it signed.
func tokenEndpointCert(host string) ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "claude-sandbox test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
