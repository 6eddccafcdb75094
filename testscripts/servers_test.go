package testscripts

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The servers a script needs while it runs are script commands, as cue's
// memregistry is: NAME is listening on a loopback port when the command
// returns, its URL is in $NAME_URL and its port in $NAME_PORT, and it stops
// when the script ends. The red-team suite and the feature test run the
// same servers as programs (serve, standin-api) from the shell inside their
// containers, where a server of the test process would outlive nothing.

// freeLoopbackPort is a loopback port nothing listens on now: a dev
// container's configuration names it for a server started inside later,
// which on a container with the host's network shares the host's ports.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer serves h on a loopback port until the script ends.
func startServer(ts *testscript.TestScript, name string, h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(name+"_URL", "http://"+ln.Addr().String())
	ts.Setenv(name+"_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

// serveFiles NAME DIR serves DIR over HTTP.
func serveFiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve-files NAME DIR")
	}
	startServer(ts, args[0], http.FileServer(http.Dir(ts.MkAbs(args[1]))))
}

// serveEcho NAME answers every request with the credential headers it
// arrived with: the upstream a credential proxy forwards to.
func serveEcho(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve-echo NAME")
	}
	startServer(ts, args[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream path=%s\nupstream authorization=%s\nupstream x-api-key=%s\nupstream anthropic-beta=%s\n",
			r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Beta"))
	}))
}

// serveStandin NAME SCRIPT RESULTS serves the scripted stand-in API
// (standinAPI). Its steps cannot have After commands: those check the host
// the model attacked, which is the red-team suite's container, where the
// standin-api program runs.
func serveStandin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: serve-standin NAME SCRIPT RESULTS")
	}
	h, err := newStandin(ts.MkAbs(args[1]), ts.MkAbs(args[2]), false)
	ts.Check(err)
	startServer(ts, args[0], h)
}

// serveRelease NAME DIR serves DIR as a release host does, over https with
// httptest's certificate ($NAME_URL; the certificate's PEM is in the file
// $NAME_CA names, for curl to trust), the same files over plain http
// ($NAME_HTTP_URL), and under /to-http/ on the first a redirect to the
// second.
func serveRelease(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve-release NAME DIR")
	}
	files := http.FileServer(http.Dir(ts.MkAbs(args[1])))
	plain := httptest.NewServer(files)
	ts.Defer(plain.Close)
	mux := http.NewServeMux()
	mux.Handle("/", files)
	mux.HandleFunc("/to-http/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/"+strings.TrimPrefix(r.URL.Path, "/to-http/"), http.StatusFound)
	})
	secure := httptest.NewTLSServer(mux)
	ts.Defer(secure.Close)
	ca := ts.MkAbs(args[0] + ".ca.pem")
	ts.Check(os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o644))
	ts.Setenv(args[0]+"_URL", secure.URL)
	ts.Setenv(args[0]+"_HTTP_URL", plain.URL)
	ts.Setenv(args[0]+"_CA", ca)
}

// serve DIR [PORT] is the program form of serve-files: it serves DIR on
// the loopback port PORT (any free one without it) and writes its URL to
// DIR/.url.
func serve(args []string) int {
	if len(args) != 1 && len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: serve DIR [PORT]")
		return 2
	}
	port := "0"
	if len(args) == 2 {
		port = args[1]
	}
	return listenAndServe("serve", port, filepath.Join(args[0], ".url"), http.FileServer(http.Dir(args[0])))
}

// listenAndServe serves h on the loopback port (0: any free one) and
// writes its URL to urlFile, whole or not at all, for a shell to wait for.
func listenAndServe(prog, port, urlFile string, h http.Handler) int {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err == nil {
		err = os.WriteFile(urlFile+".tmp", []byte("http://"+ln.Addr().String()), 0o644)
	}
	if err == nil {
		err = os.Rename(urlFile+".tmp", urlFile)
	}
	if err == nil {
		err = http.Serve(ln, h)
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
	return 1
}
