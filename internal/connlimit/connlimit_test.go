package connlimit_test

import (
	"io"
	"net"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
)

const refusal = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\nfull\n"

// Below the bound connections are the server's; over it each is refused
// with the caller's answer and closed; a closed connection frees its slot.
func TestBound(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.Listen(inner, 2, []byte(refusal))
	defer l.Close()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first := <-accepted
	dial()
	<-accepted
	over := dial()
	got, _ := io.ReadAll(over) // the refusal, then the end: the listener closed it
	if string(got) != refusal {
		t.Errorf("a connection over the bound read %q; want the refusal", got)
	}
	first.Close()
	first.Close() // a second close frees no second slot
	dial()
	<-accepted
	over = dial()
	if got, _ := io.ReadAll(over); string(got) != refusal {
		t.Errorf("after one slot was freed once, a third connection read %q; want the refusal", got)
	}
}

// A wrapped TCP connection keeps its half close: a tunnel passes an end of
// stream on while the other direction goes on.
func TestKeepsHalfClose(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.Listen(inner, 1, nil)
	defer l.Close()
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	cw, ok := server.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("the accepted connection has no CloseWrite")
	}
	cw.CloseWrite()
	if b, err := io.ReadAll(client); err != nil || len(b) != 0 {
		t.Fatalf("the client read %q, %v; want the end of stream", b, err)
	}
	client.Write([]byte("still open"))
	client.(*net.TCPConn).CloseWrite()
	if b, _ := io.ReadAll(server); string(b) != "still open" {
		t.Errorf("the server read %q after its half close; want what the client sent", b)
	}
}
