// Package proxytest is an upstream HTTP proxy on loopback for tests: it
// carries CONNECT tunnels and absolute-URI requests, may require Basic
// credentials, sends every destination to one address the test serves, and
// logs what it carried. Like a corporate proxy, it names itself (Name) in
// what it adds to the answers it relays and in the pages of its own
// refusals, which also name the user.
package proxytest

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Name is the proxy's host name, as it names itself.
const Name = "proxy.corp.test"

// Server is the proxy. Start it with Serve.
type Server struct {
	// User and Password, when User is set, are the credentials it requires.
	User, Password string
	// Origin is where every tunnel and request goes, whatever its host:
	// the test's own server on loopback.
	Origin string
	// Refuse is a host the proxy refuses, by its own policy, with a page
	// of its own; NotHTTP one it answers with a line that is not HTTP.
	Refuse, NotHTTP string
	// EarlyHints sends a 103 naming the proxy before each relayed answer.
	EarlyHints bool
	// LogTo, when set, gets each log line as it is written.
	LogTo io.Writer

	mu  sync.Mutex
	log []string
}

// Log returns the lines logged so far: "CONNECT host:port auth=A" or
// "GET http://host/path auth=A", A being ok, none or wrong, then "-> 407"
// when it refused.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *Server) record(line string) {
	s.mu.Lock()
	s.log = append(s.log, line)
	s.mu.Unlock()
	if s.LogTo != nil {
		fmt.Fprintln(s.LogTo, line)
	}
}

// Serve answers on l until it is closed.
func (s *Server) Serve(l net.Listener) error {
	return http.Serve(l, http.HandlerFunc(s.serveHTTP))
}

func (s *Server) auth(r *http.Request) string {
	got := r.Header.Get("Proxy-Authorization")
	switch {
	case got == "":
		return "none"
	case got == "Basic "+base64.StdEncoding.EncodeToString([]byte(s.User+":"+s.Password)):
		return "ok"
	}
	return "wrong"
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	what := r.Method + " " + r.RequestURI
	auth := s.auth(r)
	if s.User != "" && auth != "ok" {
		s.record(what + " auth=" + auth + " -> 407")
		w.Header().Set("Proxy-Authenticate", `Basic realm="`+Name+`"`)
		w.Header().Set("Proxy-Agent", Name)
		http.Error(w, Name+" requires credentials", http.StatusProxyAuthRequired)
		return
	}
	host := r.URL.Hostname()
	if r.Method == http.MethodConnect {
		host, _, _ = net.SplitHostPort(r.Host)
	}
	switch host {
	case s.Refuse:
		s.record(what + " auth=" + auth + " -> 403")
		s.raw(w, "HTTP/1.1 403 Forbidden by "+Name+"\r\nServer: squid\r\nProxy-Agent: "+Name+"\r\nX-Squid-Error: ERR_ACCESS_DENIED 0\r\nX-Cache: MISS from "+Name+
			"\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<p>"+Name+" denies "+host+" to "+s.User+"</p>\n")
		return
	case s.NotHTTP:
		s.record(what + " auth=" + auth + " -> not HTTP")
		s.raw(w, "SSH-2.0-"+Name+"\r\n")
		return
	}
	s.record(what + " auth=" + auth)
	if r.Method != http.MethodConnect {
		s.forward(w, r)
		return
	}
	up, err := net.Dial("tcp", s.Origin)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() {
		io.Copy(up, buf)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(c, up)
}

// raw answers with text as it is, then closes the connection.
func (s *Server) raw(w http.ResponseWriter, text string) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	io.WriteString(c, text)
	c.Close()
}

// forward sends an absolute-URI request on to Origin, adding headers that
// name the proxy (Via, X-Cache) as real proxies do.
func (s *Server) forward(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Host = s.Origin
	out.Header.Del("Proxy-Authorization")
	resp, err := (&http.Transport{}).RoundTrip(out) // never the environment's proxy
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if s.EarlyHints {
		w.Header().Set("X-Cache", "HIT from "+Name)
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("X-Cache")
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Via", "1.1 "+Name+" (proxytest-"+strings.ReplaceAll(s.Origin, ":", "-")+")")
	w.Header().Set("X-Cache", "MISS from "+Name)
	w.Header().Set("X-Cache-Lookup", "MISS from "+Name+":3128")
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
