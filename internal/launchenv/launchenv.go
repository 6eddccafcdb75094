// Package launchenv is the one door through which the launch reads the
// environment it was started with: cli.Main reads the list once, with Read,
// and every package below takes the Env, never the raw NAME=value strings
// (internal/imports TestEnvironDoor holds every other package to that).
//
// A list can define a name twice (a shell never passes such a list, but
// any program calling execve can). Here the first definition wins, for
// every reader: it is the one getenv(3) and Go's os.Getenv read, and Go's
// os.Environ, which the program hands to cli.Main, already drops the later
// ones, so the door and the runtime agree, and a list given otherwise (a
// test's, verify's /proc/1/environ) is read the same way. Before this door
// envlist.Lookup read the first and the passed variables the last: given a
// raw list, the sandbox's PATH took one VIRTUAL_ENV and its environment
// passed the other in. An entry without "=" defines nothing, as for
// getenv(3).
package launchenv

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// BaseURLVar points Claude Code, and the credential proxy, at another API.
const BaseURLVar = "ANTHROPIC_BASE_URL"

// Var is one definition of the launching environment.
type Var struct{ Name, Value string }

// Env is the launching environment's definitions as read at the door:
// what the launch's facts hold, never the list itself. Its zero value is
// the empty environment.
type Env struct {
	vars  []Var          // each name once, its first definition, in the list's order
	index map[string]int // name to its place in vars
}

// Given is the launching environment as the command received it: its
// definitions, and the list, which only a process started in the
// caller's place gets (List).
type Given struct {
	Env
	list []string
}

// Receive takes the launching environment in os.Environ's form, at the
// command's start.
func Receive(list []string) Given { return Given{Read(list), list} }

// Read takes an environment in os.Environ's form to its definitions: the
// launch's through Receive, and the one verify recomputes a launch from.
func Read(list []string) Env {
	e := Env{index: map[string]int{}}
	for _, kv := range list {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, seen := e.index[name]; seen {
			continue
		}
		e.index[name] = len(e.vars)
		e.vars = append(e.vars, Var{name, value})
	}
	return e
}

// Lookup is the value the environment gives name, and whether it gives one.
func (e Env) Lookup(name string) (string, bool) {
	i, ok := e.index[name]
	if !ok {
		return "", false
	}
	return e.vars[i].Value, true
}

// Get is Lookup's value: "" when the environment does not define name.
func (e Env) Get(name string) string {
	v, _ := e.Lookup(name)
	return v
}

// Vars are the environment's definitions, each name once with the value
// Lookup gives it, in the order the list first defines them.
func (e Env) Vars() []Var { return append([]Var(nil), e.vars...) }

// List is the environment as it was given, for a process the launcher
// starts in the caller's place (the real binary where no sandbox is made,
// the background service's launcher, doctor's git): it gets what it would
// have got without the launcher, and reads it by its own rules.
func (g Given) List() []string { return append([]string(nil), g.list...) }

// BaseURL is ANTHROPIC_BASE_URL parsed, nil when it is unset or empty. It
// must be an http or https URL naming a host: Claude Code speaks to its
// API over nothing else, so any other value is refused where the launch
// reads it rather than passed on to fail later, or to open the allowlist
// to a host Claude Code would never reach. Whether plain http is safe
// depends on who carries the login over it: see Cleartext.
func (e Env) BaseURL() (*url.URL, error) {
	raw := e.Get(BaseURLVar)
	if raw == "" {
		return nil, nil
	}
	return ParseBaseURL(raw)
}

// ParseBaseURL is BaseURL's parser, for the default the launcher uses
// when the variable is unset.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("%s=%q is not an http(s) URL", BaseURLVar, raw)
	}
	return u, nil
}

// HostPort is where a base URL's requests go: its host and port, the
// scheme's port when it names none. Without it, the allowlist's entry
// for https://gateway.example named no port, which also lets plain http
// through to port 80 of the host, where Claude Code sends nothing.
func HostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// Cleartext says that u is plain http to an address other than loopback:
// a login sent to it crosses a network unencrypted.
func Cleartext(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err != nil || !a.IsLoopback()
}
