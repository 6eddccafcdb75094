// Package connlimit bounds the connections a server of the launcher's holds
// for one sandbox. Each connection costs the launcher descriptors (its own,
// and one upstream while it is proxied) and memory (buffers, a goroutine,
// headers being read); without a bound a sandbox that opens connections
// and sends nothing spends the launcher's descriptors until the warden,
// which needs its own, fails every call inside.
//
// A connection over the bound is accepted and closed at once, after the
// refusal the caller gives (an HTTP 503 with the reason): the client learns
// why, and the launcher holds nothing for it. Connections below the bound
// are the server's; each frees its slot when it is closed.
package connlimit

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The bounds of every HTTP server of the launcher's that a sandbox reaches
// (the credential proxy, the allowlist proxy). A request's headers larger
// than MaxHeaderBytes get 431 and the connection is closed (net/http reads
// up to 4 KiB more before it decides); headers not complete within
// HeaderTimeout, or a connection idle between requests for IdleTimeout,
// are closed without an answer. Bodies are never held: both proxies
// stream them through a fixed buffer.
const (
	MaxHeaderBytes = 32 << 10
	HeaderTimeout  = 10 * time.Second
	IdleTimeout    = 2 * time.Minute
)

// Refusal is the HTTP answer to a connection over the bound: 503, the
// body given, and the end of the connection.
func Refusal(header, contentType, body string) []byte {
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\n%sContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", header, contentType, len(body), body)
}

// refusalTimeout bounds the write of a refusal: into a fresh connection's
// empty send buffer it never waits, but the accept loop must not depend
// on that.
const refusalTimeout = time.Second

// Listen returns l, holding at most max connections at once; refusal is
// written to every connection over max before it is closed.
func Listen(l net.Listener, max int, refusal []byte) net.Listener {
	return &listener{Listener: l, slots: make(chan struct{}, max), refusal: refusal}
}

type listener struct {
	net.Listener
	slots   chan struct{}
	refusal []byte
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, slots: l.slots}, nil
		default:
			c.SetWriteDeadline(time.Now().Add(refusalTimeout))
			c.Write(l.refusal)
			c.Close()
		}
	}
}

// conn frees its slot when it is first closed, before the close: a client
// that sees its connection end finds the slot free. It keeps the half close and
// the kernel's copies (splice) of the connection it wraps: a proxy's
// tunnel passes an end of stream on, and copies without a buffer.
type conn struct {
	net.Conn
	slots chan struct{}
	once  sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() { <-c.slots })
	return c.Conn.Close()
}

// CloseWrite closes the sending side where the connection has one, else
// the whole connection.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *conn) WriteTo(w io.Writer) (int64, error) {
	if wt, ok := c.Conn.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, struct{ io.Reader }{c.Conn})
}
