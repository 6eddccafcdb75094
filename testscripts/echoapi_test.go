package testscripts

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

// echoAPI URLFILE serves on a loopback port, writes its URL to URLFILE, and
// answers every request with the credential headers it arrived with: the
// upstream a credential proxy forwards to. Scripts run it in the background.
func echoAPI(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: echo-api URLFILE")
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(args[0]+".tmp", []byte("http://"+ln.Addr().String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Rename(args[0]+".tmp", args[0]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream path=%s\nupstream authorization=%s\nupstream x-api-key=%s\nupstream anthropic-beta=%s\n",
			r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Beta"))
	})))
	return 1
}
