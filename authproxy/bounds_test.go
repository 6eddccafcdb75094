package authproxy_test

import (
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
)

// The credential proxy holds at most MaxConns connections: one more gets
// 503 in the API's error shape and is closed; headers beyond the bound get
// 431. The upstream gets nothing of either.
func TestBounds(t *testing.T) {
	up := newUpstream(t, nil)
	u, _ := url.Parse(up.URL)
	s := &authproxy.Server{Upstream: u, Credential: mustFind(t, []string{"ANTHROPIC_API_KEY=sk-ant-api03-real"}, t.TempDir()), Placeholder: placeholder, MaxConns: 2}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { l.Close() })
	addr := l.Addr().String()

	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(deadlock))
		t.Cleanup(func() { c.Close() })
		return c
	}
	first, _ := dial(), dial()
	got, _ := io.ReadAll(dial())
	if !strings.HasPrefix(string(got), "HTTP/1.1 503 ") || !strings.Contains(string(got), `"message":"claude-sandbox: the credential proxy holds 2 connections, its bound; close some and try again"`) {
		t.Errorf("a connection over the bound read %q; want 503 with the reason", got)
	}
	// The client ends one; the proxy's close of it frees its slot.
	first.(*net.TCPConn).CloseWrite()
	io.ReadAll(first)

	// Headers without end.
	long := dial()
	go func() {
		io.WriteString(long, "POST /v1/messages HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "+placeholder+"\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for range (connlimit.MaxHeaderBytes + 8<<10) / len(line) {
			if _, err := io.WriteString(long, line); err != nil {
				return
			}
		}
	}()
	if got, _ := io.ReadAll(long); !strings.HasPrefix(string(got), "HTTP/1.1 431 ") {
		t.Errorf("headers over the bound: %q; want 431", got)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("the upstream got %d requests", n)
	}
}
