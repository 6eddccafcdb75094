package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// Proxy serves the allowlist to one sandbox.
type Proxy struct {
	Policy  Policy
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)      // nil: net.DefaultResolver
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error) // nil: net.Dialer with a 10 s timeout
	Log     *Log                                                              // nil: refusals are not recorded
}

// dialTimeout bounds each connection attempt of the default dialer.
const dialTimeout = 10 * time.Second

// DeniedHeader carries the reason of a refusal, for tools that show headers.
const DeniedHeader = "X-Claude-Sandbox-Denied"

// quiet drops the net/http servers' own error lines: the launcher's stderr is
// Claude's terminal.
var quiet = log.New(io.Discard, "", 0)

// Serve answers proxy requests on l until l is closed. Tunnels open at that
// moment end when either side closes them.
func (p *Proxy) Serve(l net.Listener) error {
	h := &handler{p: p}
	h.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			for k := range r.Out.Header {
				if strings.HasPrefix(k, "Proxy-") {
					r.Out.Header.Del(k)
				}
			}
		},
		Transport: &http.Transport{
			Proxy:              nil, // the proxy is the way out; it never chains to another
			DialContext:        h.dialChecked,
			DisableCompression: true, // pass bodies as the client asked, without a decoder per response
			MaxIdleConns:       16,   // idle upstream connections hold buffers in the launcher
			IdleConnTimeout:    30 * time.Second,
		},
		FlushInterval: -1,
		ErrorLog:      quiet,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			host, port, _ := target(r.URL)
			p.refuse(w, http.StatusBadGateway, host, port, err.Error())
		},
	}
	// A client that stops talking gives its connection's memory back.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ErrorLog: quiet}
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

type handler struct {
	p       *Proxy
	forward *httputil.ReverseProxy
}

// checked carries the addresses Check allowed for a plain HTTP request to
// the Transport's dialer, so the name is never resolved twice.
type checked struct {
	addrs []netip.Addr
	port  int
}

type checkedKey struct{}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		h.connect(w, r)
		return
	}
	host, port, ok := target(r.URL)
	if !ok {
		http.Error(w, "claude-sandbox: this is the sandbox's egress proxy; it serves CONNECT host:port and absolute http:// URLs only", http.StatusBadRequest)
		return
	}
	addrs, err := h.p.Check(r.Context(), host, port)
	if err != nil {
		h.p.refuse(w, http.StatusForbidden, host, port, err.Error())
		return
	}
	ctx := context.WithValue(r.Context(), checkedKey{}, checked{addrs, port})
	h.forward.ServeHTTP(w, r.WithContext(ctx))
}

// target is the destination of an absolute http:// URL.
func target(u *url.URL) (host string, port int, ok bool) {
	if u.Scheme != "http" || u.Hostname() == "" {
		return "", 0, false
	}
	port = 80
	if s := u.Port(); s != "" {
		p, err := hostaddr.ParsePort(s)
		if err != nil {
			return "", 0, false
		}
		port = p
	}
	return u.Hostname(), port, true
}

func (h *handler) dialChecked(ctx context.Context, _, _ string) (net.Conn, error) {
	c, ok := ctx.Value(checkedKey{}).(checked)
	if !ok {
		return nil, errors.New("no checked address for this request")
	}
	return h.p.dial(ctx, c.addrs, c.port)
}

func (h *handler) connect(w http.ResponseWriter, r *http.Request) {
	host, portText, err := net.SplitHostPort(r.Host)
	port, perr := hostaddr.ParsePort(portText)
	if err != nil || perr != nil || host == "" {
		http.Error(w, "claude-sandbox: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	addrs, err := h.p.Check(r.Context(), host, port)
	if err != nil {
		h.p.refuse(w, http.StatusForbidden, host, port, err.Error())
		return
	}
	upstream, err := h.p.dial(r.Context(), addrs, port)
	if err != nil {
		h.p.refuse(w, http.StatusBadGateway, host, port, err.Error())
		return
	}
	defer upstream.Close()
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer client.Close()
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent before our answer are already in the server's
	// buffer; the rest is copied straight from the socket.
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ := buf.Reader.Peek(n)
		if _, err := upstream.Write(early); err != nil {
			return
		}
	}
	done := make(chan struct{})
	go func() {
		io.Copy(upstream, client)
		closeWrite(upstream)
		close(done)
	}()
	io.Copy(client, upstream)
	closeWrite(client)
	<-done
}

// closeWrite passes an end of stream on while the other direction goes on.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// dial connects to the first of addrs that answers: the addresses Check
// allowed, never the name again, which could resolve elsewhere by now.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	dial := p.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout}).DialContext
	}
	var err error
	for _, a := range addrs {
		var c net.Conn
		if c, err = dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String()); err == nil {
			return c, nil
		}
	}
	return nil, err
}

// refuse answers a request the proxy does not carry out. Only policy
// refusals are recorded: a 502 is the destination's failure, not a denial.
func (p *Proxy) refuse(w http.ResponseWriter, status int, host string, port int, reason string) {
	if status == http.StatusForbidden && p.Log != nil {
		p.Log.Record(host, port, reason)
	}
	w.Header().Set(DeniedHeader, reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "claude-sandbox: %s refused: %s\n", net.JoinHostPort(host, strconv.Itoa(port)), reason)
}
