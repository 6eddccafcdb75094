package testscripts

import (
	"net"
	"os"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/upstreamproxy/proxytest"
	"github.com/rogpeppe/go-internal/testscript"
)

// serveUpstreamProxy NAME ORIGIN-URL LOG [USER:PASSWORD] serves a corporate
// proxy stand-in on a loopback port until the script ends: it sends every
// tunnel and request to ORIGIN-URL, requires the credentials when given and
// logs what it carried to LOG. It names itself proxy.corp.test in what it
// adds to relayed answers and in its refusal of refused.example, with a
// page of its own. Its address (host:port) is in $NAME_ADDR.
func serveUpstreamProxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: serve-upstream-proxy NAME ORIGIN-URL LOG [USER:PASSWORD]")
	}
	s := &proxytest.Server{Origin: strings.TrimPrefix(args[1], "http://"), Refuse: "refused.example"}
	if len(args) == 4 {
		s.User, s.Password, _ = strings.Cut(args[3], ":")
	}
	log, err := os.OpenFile(ts.MkAbs(args[2]), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	ts.Check(err)
	s.LogTo = log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	go s.Serve(ln)
	ts.Defer(func() {
		ln.Close()
		log.Close()
	})
	ts.Setenv(args[0]+"_ADDR", ln.Addr().String())
}
