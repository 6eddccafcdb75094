package testscripts

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/envproxy/proxytest"
)

// upstreamProxy DIR ORIGIN-URL-FILE [USER:PASSWORD] serves a corporate
// proxy stand-in on a loopback port: it sends every tunnel and request to
// the address in ORIGIN-URL-FILE (as serve writes it), requires the
// credentials when given, writes its address to DIR/.addr and logs what it
// carried to DIR/proxy.log. Scripts run it in the background.
func upstreamProxy(args []string) int {
	if len(args) < 2 || len(args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: upstream-proxy DIR ORIGIN-URL-FILE [USER:PASSWORD]")
		return 2
	}
	origin, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := &proxytest.Server{Origin: strings.TrimPrefix(strings.TrimSpace(string(origin)), "http://")}
	if len(args) == 3 {
		s.User, s.Password, _ = strings.Cut(args[2], ":")
	}
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log, err := os.OpenFile(filepath.Join(args[0], "proxy.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.LogTo = log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp := filepath.Join(args[0], ".addr.tmp")
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil || os.Rename(tmp, filepath.Join(args[0], ".addr")) != nil {
		fmt.Fprintln(os.Stderr, "cannot write the address:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, s.Serve(ln))
	return 1
}
