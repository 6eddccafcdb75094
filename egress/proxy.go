package egress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/netip"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
)

// Proxy serves the allowlist to one sandbox.
type Proxy struct {
	Policy  Policy
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)      // nil: net.DefaultResolver
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error) // nil: net.Dialer with a 10 s timeout
	Log     *Log                                                              // nil: refusals are not recorded
	// Upstream is the launching environment's proxy. A destination it
	// covers is reached through it, by name, once the policy allowed the
	// name: the upstream proxy resolves it (ADR 0021).
	Upstream *upstreamproxy.Settings // nil: every destination is dialled directly
	// MaxConns is how many connections Serve holds at once (a tunnel or a
	// request costs the launcher two descriptors); one more is answered
	// 503 and closed. 0 means DefaultMaxConns.
	MaxConns int
	// Terminator takes the tunnels the policy allowed to the hosts whose
	// TLS the launcher ends itself (package forge, ADR 0042); nil: every
	// tunnel carries bytes the proxy never reads.
	Terminator Terminator
}

// Terminator serves the client's side of tunnels to some hosts itself.
type Terminator interface {
	Terminates(host string, port int) bool
	// ServeTunnel serves client, to which the proxy answered the CONNECT,
	// until it is done, and closes it.
	ServeTunnel(client net.Conn, host string, port int)
}

// DefaultMaxConns bounds the allowlist proxy's connections: a package
// manager opens some tens at once (npm 15 per host, pip 10).
const DefaultMaxConns = 512

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
		ModifyResponse: func(resp *http.Response) error {
			if c, _ := resp.Request.Context().Value(checkedKey{}).(checked); c.via != nil {
				return fromUpstream(resp, c.via)
			}
			return nil
		},
		Transport: upstreamHintsCleared{&http.Transport{
			// Only to the launching environment's proxy, for a request
			// whose destination it covers.
			Proxy: func(r *http.Request) (*url.URL, error) {
				if c, _ := r.Context().Value(checkedKey{}).(checked); c.via != nil {
					return c.via.URL, nil
				}
				return nil, nil
			},
			DialContext:        h.dialChecked,
			DisableCompression: true, // pass bodies as the client asked, without a decoder per response
			MaxIdleConns:       16,   // idle upstream connections hold buffers in the launcher
			IdleConnTimeout:    30 * time.Second,
		}},
		FlushInterval: -1,
		ErrorLog:      quiet,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// Through the upstream proxy, net/http's own text may quote
			// what the proxy wrote; upstreamproxy's errors say what failed
			// without it.
			var pe *upstreamproxy.Error
			c, _ := r.Context().Value(checkedKey{}).(checked)
			switch {
			case errors.As(err, &pe):
				err = pe
			case c.via != nil:
				err = upstreamproxy.Broken(c.via, err)
			}
			host, port, _ := target(r.URL)
			p.refuse(w, http.StatusBadGateway, host, port, err.Error())
		},
	}
	// A client that stops talking, or sends headers without end, gives its
	// connection's memory back.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: connlimit.HeaderTimeout, MaxHeaderBytes: connlimit.MaxHeaderBytes,
		IdleTimeout: connlimit.IdleTimeout, ErrorLog: quiet}
	max := cmp.Or(p.MaxConns, DefaultMaxConns)
	why := fmt.Sprintf("the proxy holds %d connections of this sandbox's, its bound", max)
	refusal := connlimit.Refusal(DeniedHeader+": "+why+"\r\n", "text/plain; charset=utf-8", "claude-sandbox: refused: "+why+"; close some and try again\n")
	if err := srv.Serve(connlimit.Listen(l, max, refusal)); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

type handler struct {
	p       *Proxy
	forward *httputil.ReverseProxy
}

// checked carries the addresses Check allowed for a plain HTTP request to
// the Transport's dialer, so the name is never resolved twice, or the
// upstream proxy the request goes through instead.
type checked struct {
	addrs []netip.Addr
	port  int
	via   *upstreamproxy.Proxy
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
	c := checked{port: port, via: h.p.Upstream.ForHTTP(host, port)}
	var err error
	if c.via != nil {
		err = h.p.Policy.Allows(host, port, hostaddr.Request)
	} else {
		c.addrs, err = h.p.Check(r.Context(), host, port, hostaddr.Request)
	}
	if err != nil {
		h.p.refuse(w, http.StatusForbidden, host, port, err.Error())
		return
	}
	// The proxy writes the Host it checked, so the request reaches that
	// host. After a switch of protocols it no longer writes anything: a
	// WebSocket stays with the host, but HTTP/2 (h2c) would carry requests
	// that each name a host of their own. The request goes without it.
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		r.Header.Del("Upgrade")
	}
	h.forward.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, c)))
}

// relayed are the headers of a plain http:// answer through the upstream
// proxy that reach the client: what a client needs of an answer's body,
// caching, redirect and protocol switch. Any other may be the proxy's, and
// its own name it (X-Cache, Via, Proxy-Agent, Server, Warning).
var relayed = []string{
	"Accept-Ranges", "Age", "Cache-Control", "Connection", "Content-Disposition",
	"Content-Encoding", "Content-Language", "Content-Length", "Content-Range",
	"Content-Type", "Date", "Etag", "Expires", "Last-Modified", "Location",
	"Retry-After", "Sec-Websocket-Accept", "Sec-Websocket-Extensions",
	"Sec-Websocket-Protocol", "Upgrade", "Vary",
}

// fromUpstream keeps of a plain http:// answer through the upstream proxy
// what can only be the origin's, or carries nothing of the proxy's: the
// status code, and for an answer that is not an error, the relayed headers
// and the body. An error may be the proxy's own page, which names it and
// often its user; the client gets the launcher's text in its place.
func fromUpstream(resp *http.Response, via *upstreamproxy.Proxy) error {
	if resp.StatusCode == http.StatusProxyAuthRequired {
		return upstreamproxy.Refusal(via, resp.StatusCode)
	}
	kept := make(http.Header, len(relayed))
	for _, k := range relayed {
		if v, ok := resp.Header[k]; ok {
			kept[k] = v
		}
	}
	resp.Header = kept
	resp.Trailer = nil
	if resp.StatusCode < 400 {
		return nil
	}
	resp.Body.Close()
	host, port, _ := target(resp.Request.URL)
	text := fmt.Sprintf("claude-sandbox: %s answered %s through the upstream proxy (%s); the answer's headers and body stay outside, as they may be the proxy's own\n",
		net.JoinHostPort(host, strconv.Itoa(port)), upstreamproxy.StatusText(resp.StatusCode), via.Var)
	resp.Body = io.NopCloser(strings.NewReader(text))
	resp.ContentLength = int64(len(text))
	resp.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {strconv.Itoa(len(text))}}
	return nil
}

// upstreamHintsCleared clears the headers of the informational answers
// (100 Continue, 103 Early Hints) to a request through the upstream proxy,
// which ReverseProxy passes on as they come and the proxy may have written.
type upstreamHintsCleared struct{ http.RoundTripper }

func (t upstreamHintsCleared) RoundTrip(r *http.Request) (*http.Response, error) {
	if c, _ := r.Context().Value(checkedKey{}).(checked); c.via != nil {
		// A trace added later runs first, on the map ReverseProxy's own
		// hook then copies.
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			Got1xxResponse: func(_ int, h textproto.MIMEHeader) error {
				clear(h)
				return nil
			},
		}))
	}
	return t.RoundTripper.RoundTrip(r)
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
	if c.via != nil {
		conn, err := h.p.dialer()(ctx, "tcp", c.via.Addr)
		if err != nil {
			return nil, upstreamproxy.DialError(c.via, err)
		}
		return conn, nil
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
	if t := h.p.Terminator; t != nil && t.Terminates(host, port) {
		h.terminate(w, t, host, port)
		return
	}
	upstream, status, err := h.p.open(r.Context(), host, port)
	if err != nil {
		h.p.refuse(w, status, host, port, err.Error())
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

// terminate answers a CONNECT the policy allows and hands the connection
// to t, which connects to the host itself, per request (Open).
func (h *handler) terminate(w http.ResponseWriter, t Terminator, host string, port int) {
	if err := h.p.Policy.Allows(host, port, hostaddr.Tunnel); err != nil {
		h.p.refuse(w, http.StatusForbidden, host, port, err.Error())
		return
	}
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		return
	}
	t.ServeTunnel(&bufferedConn{Conn: client, r: buf.Reader}, host, port)
}

// bufferedConn reads first what the server's buffer holds: bytes the
// client sent before the proxy answered.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Open connects to host:port as a tunnel the policy allows would: for a
// Terminator, which opens its own connections to the host.
func (p *Proxy) Open(ctx context.Context, host string, port int) (net.Conn, error) {
	c, status, err := p.open(ctx, host, port)
	if status == http.StatusForbidden && p.Log != nil {
		p.Log.Record(host, port, err.Error())
	}
	return c, err
}

// closeWrite passes an end of stream on while the other direction goes on.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// open decides a tunnel to host:port and connects it: through the upstream
// proxy when it covers the destination, else to the addresses Check
// allowed. The status is 403 for the policy's refusal, 502 for a failure
// to connect.
func (p *Proxy) open(ctx context.Context, host string, port int) (net.Conn, int, error) {
	if via := p.Upstream.ForTunnel(host, port); via != nil {
		if err := p.Policy.Allows(host, port, hostaddr.Tunnel); err != nil {
			return nil, http.StatusForbidden, err
		}
		c, err := upstreamproxy.Tunnel(ctx, p.dialer(), via, net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return nil, http.StatusBadGateway, err
		}
		return c, 0, nil
	}
	addrs, err := p.Check(ctx, host, port, hostaddr.Tunnel)
	if err != nil {
		return nil, http.StatusForbidden, err
	}
	c, err := p.dial(ctx, addrs, port)
	if err != nil {
		return nil, http.StatusBadGateway, err
	}
	return c, 0, nil
}

func (p *Proxy) dialer() upstreamproxy.DialFunc {
	if p.Dial != nil {
		return p.Dial
	}
	return (&net.Dialer{Timeout: dialTimeout}).DialContext
}

// dial connects to the first of addrs that answers: the addresses Check
// allowed, never the name again, which could resolve elsewhere by now.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	dial := p.dialer()
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
