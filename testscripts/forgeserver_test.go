package testscripts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// serveForge NAME ROOT serves the bare repositories under ROOT as a forge
// does: git's http-backend over https at https://localhost:$NAME_PORT, with
// a certificate of a CA the script makes ($NAME_CA, the PEM), answering
// only requests with Basic tester:$NAME_TOKEN, a token made for this run
// (so no file older than the script holds it). $NAME_TOKEN_RE and
// $NAME_BASIC_RE are regular expressions for the token and its Basic
// header's base64 that do not contain them. /echo answers 500 with the
// request's headers, the Basic password decoded: an error page that shows
// what it got. /redirect/PATH answers 302 to PATH on a second, plain http
// server at $NAME_OTHER_PORT, which appends each request's path and
// Authorization to $NAME_OTHER_LOG. /api/... stands for a forge's API
// below its host (GitHub Enterprise Server's /api/v3, /api/graphql): it
// appends each request's method, path and body to $NAME_API_LOG and
// answers 200 {"forge":"answered"}. REPO.git/info/lfs/... is git LFS's
// batch API with the basic transfer, as Gitea serves it: objects go up and
// come down at REPO.git/info/lfs/objects/OID on the forge's own host, and
// $NAME_LFS holds the stored ones, a file per OID.
func serveForge(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve-forge NAME ROOT")
	}
	name, root := args[0], ts.MkAbs(args[1])
	raw := make([]byte, 16)
	rand.Read(raw)
	token := "forgetok" + hex.EncodeToString(raw)
	basicValue := base64.StdEncoding.EncodeToString([]byte("tester:" + token))
	execPath, err := exec.Command("git", "--exec-path").Output()
	ts.Check(err)
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Root: "/",
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=tester"},
	}

	otherLog := ts.MkAbs(name + "-other.log")
	ts.Check(os.WriteFile(otherLog, nil, 0o644))
	var mu sync.Mutex
	other, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	otherSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(otherLog, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			fmt.Fprintf(f, "%s authorization=%s\n", r.URL.Path, r.Header.Get("Authorization"))
			f.Close()
		}
		http.Error(w, "not here", http.StatusNotFound)
	})}
	go otherSrv.Serve(other)
	ts.Defer(func() { otherSrv.Close() })
	otherPort := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)

	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s: %s\n", strings.ToLower(k), strings.Join(r.Header[k], ", "))
		}
		if _, pw, ok := r.BasicAuth(); ok {
			fmt.Fprintf(w, "password: %s\n", pw)
		}
	})
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		to := "http://localhost:" + otherPort + strings.TrimPrefix(r.URL.Path, "/redirect")
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	apiLog := ts.MkAbs(name + "-api.log")
	ts.Check(os.WriteFile(apiLog, nil, 0o644))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if f, err := os.OpenFile(apiLog, os.O_APPEND|os.O_WRONLY, 0); err == nil {
			fmt.Fprintf(f, "%s %s %s\n", r.Method, r.URL.Path, body)
			f.Close()
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"forge":"answered"}`)
	})
	lfsDir := ts.MkAbs(name + "-lfs")
	ts.Check(os.MkdirAll(lfsDir, 0o755))
	lfs := &lfsStandIn{dir: lfsDir}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if repo, rest, ok := strings.Cut(r.URL.Path, ".git/info/lfs/"); ok {
			lfs.serve(w, r, "https://"+r.Host+repo+".git/info/lfs/", rest)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	secure := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As GitHub takes a token for git: the password, under any user
		// name (a helper's tester, the Action's x-access-token); as
		// GitLab's API takes it below /api/: Bearer, never Basic.
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "a token is needed", http.StatusUnauthorized)
				return
			}
		} else if _, pw, ok := r.BasicAuth(); !ok || pw != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="forge"`)
			http.Error(w, "a token is needed", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})

	caPEM, cert := forgeCertificates(ts)
	ca := ts.MkAbs(name + ".ca.pem")
	ts.Check(os.WriteFile(ca, caPEM, 0o644))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: secure, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(ln, "", "")
	ts.Defer(func() { srv.Close() })
	ts.Setenv(name+"_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	ts.Setenv(name+"_CA", ca)
	ts.Setenv(name+"_TOKEN", token)
	ts.Setenv(name+"_TOKEN_RE", bracketLast(token))
	ts.Setenv(name+"_BASIC_RE", bracketLast(strings.TrimRight(basicValue, "=")))
	ts.Setenv(name+"_OTHER_PORT", otherPort)
	ts.Setenv(name+"_OTHER_LOG", otherLog)
	ts.Setenv(name+"_API_LOG", apiLog)
	ts.Setenv(name+"_LFS", lfsDir)
}

// bracketLast is s as a regular expression whose text is not s: its last
// character in brackets.
func bracketLast(s string) string {
	return s[:len(s)-1] + "[" + s[len(s)-1:] + "]"
}

// forgeCertificates are a CA made for the script (its PEM) and a server
// certificate it signed for localhost.
func forgeCertificates(ts *testscript.TestScript) ([]byte, tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test forge CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &key.PublicKey, key)
	ts.Check(err)
	caCert, err := x509.ParseCertificate(caDER)
	ts.Check(err)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, key)
	ts.Check(err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// lfsStandIn is git LFS's batch API and basic transfer over a directory.
type lfsStandIn struct{ dir string }

var lfsOID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// serve answers base+rest: objects/batch, or objects/OID for an object's
// PUT or GET; anything else (the locking API) is not found, which git-lfs
// takes for a forge without locks.
func (l *lfsStandIn) serve(w http.ResponseWriter, r *http.Request, base, rest string) {
	base += "objects"
	if rest == "objects/batch" && r.Method == http.MethodPost {
		l.batch(w, r, base)
		return
	}
	oid, ok := strings.CutPrefix(rest, "objects/")
	if !ok || !lfsOID.MatchString(oid) {
		http.NotFound(w, r)
		return
	}
	path := filepath.Join(l.dir, oid)
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil || fmt.Sprintf("%x", sha256.Sum256(body)) != oid {
			http.Error(w, "the object is not its OID", http.StatusUnprocessableEntity)
			return
		}
		os.WriteFile(path, body, 0o644)
	case http.MethodGet:
		http.ServeFile(w, r, path)
	default:
		http.Error(w, "no such method", http.StatusMethodNotAllowed)
	}
}

func (l *lfsStandIn) batch(w http.ResponseWriter, r *http.Request, base string) {
	var req struct {
		Operation string
		Objects   []struct {
			OID  string
			Size int64
		}
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "not a batch request", http.StatusBadRequest)
		return
	}
	type action struct {
		Href string `json:"href"`
	}
	type object struct {
		OID     string            `json:"oid"`
		Size    int64             `json:"size"`
		Actions map[string]action `json:"actions,omitempty"`
	}
	answer := struct {
		Transfer string   `json:"transfer"`
		Objects  []object `json:"objects"`
	}{Transfer: "basic"}
	for _, o := range req.Objects {
		out := object{OID: o.OID, Size: o.Size}
		_, err := os.Stat(filepath.Join(l.dir, o.OID))
		switch {
		case !lfsOID.MatchString(o.OID):
		case req.Operation == "upload" && err != nil:
			out.Actions = map[string]action{"upload": {base + "/" + o.OID}}
		case req.Operation == "download" && err == nil:
			out.Actions = map[string]action{"download": {base + "/" + o.OID}}
		}
		answer.Objects = append(answer.Objects, out)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	json.NewEncoder(w).Encode(answer)
}
