package egress

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
)

// The proxy holds at most MaxConns connections: one more gets 503 with the
// reason and is closed, and a tunnel's end frees its slot.
func TestConnectionBound(t *testing.T) {
	p, _ := loopbackProxy(t, 443, true)
	p.MaxConns = 2
	proxy := startProxy(t, p)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	over := overBound(t, proxy)
	if !strings.HasPrefix(over, "HTTP/1.1 503 ") || !strings.Contains(over, DeniedHeader+": the proxy holds 2 connections of this sandbox's, its bound\r\n") ||
		!strings.HasSuffix(over, "claude-sandbox: refused: the proxy holds 2 connections of this sandbox's, its bound; close some and try again\n") {
		t.Errorf("a connection over the bound read %q; want 503 with the reason", over)
	}
	// The client ends one connection; the proxy's close of it, which the
	// client sees as the end of stream, frees its slot, which serves again.
	held[0].(*net.TCPConn).CloseWrite()
	io.ReadAll(held[0])
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	got, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(got), "HTTP/1.1 400 ") {
		t.Errorf("after a slot was freed: %q; want the proxy's own answer (400)", got)
	}
}

// overBound reads what a connection gets from a proxy whose slots are
// all held.
func overBound(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(c)
	return string(got)
}

// Headers beyond connlimit.MaxHeaderBytes (and net/http's 4 KiB slack) get
// 431 and the end of the connection: the proxy holds no more of them.
func TestHeaderBound(t *testing.T) {
	_, proxy := loopbackProxy(t, 443, true)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		io.WriteString(c, "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for range (connlimit.MaxHeaderBytes + 8<<10) / len(line) {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
		io.WriteString(c, "\r\n")
	}()
	got, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(got), "HTTP/1.1 431 ") {
		t.Errorf("headers over the bound: %q; want 431", got)
	}
}
