package launchenv

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// twice defines PATH and VIRTUAL_ENV twice: a list no shell passes, but
// any caller of execve can.
var twice = []string{"PATH=/first", "VIRTUAL_ENV=/a/venv", "HOME=/home/u", "EMPTY=", "PATH=/second", "NOVALUE", "A=b=c", "VIRTUAL_ENV=/b/venv"}

// TestFirstDefinitionWins: every reader of the door sees the first
// definition of a doubled name, the one getenv(3) reads; Lookup and Vars
// cannot disagree (red with Read keeping the last: PATH reads /second).
func TestFirstDefinitionWins(t *testing.T) {
	g := Receive(twice)
	e := g.Env
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"PATH", "/first", true},
		{"VIRTUAL_ENV", "/a/venv", true},
		{"HOME", "/home/u", true},
		{"EMPTY", "", true},
		{"A", "b=c", true},
		{"NOVALUE", "", false}, // no "=": not a definition getenv would find
		{"MISSING", "", false},
		{"PAT", "", false},
	} {
		if got, ok := e.Lookup(tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if got := e.Get(tt.name); got != tt.want {
			t.Errorf("Get(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
	want := []Var{{"PATH", "/first"}, {"VIRTUAL_ENV", "/a/venv"}, {"HOME", "/home/u"}, {"EMPTY", ""}, {"A", "b=c"}}
	if diff := cmp.Diff(want, e.Vars()); diff != "" {
		t.Errorf("Vars (-want +got):\n%s", diff)
	}
	for _, v := range e.Vars() {
		if got, _ := e.Lookup(v.Name); got != v.Value {
			t.Errorf("Vars gives %s=%q, Lookup %q", v.Name, v.Value, got)
		}
	}
	if !slices.Equal(g.List(), twice) {
		t.Errorf("List = %q, want the list as given %q", g.List(), twice)
	}
	var zero Env
	if _, ok := zero.Lookup("PATH"); ok || len(zero.Vars()) != 0 {
		t.Error("the zero Env is not empty")
	}
}

// TestBaseURL: ANTHROPIC_BASE_URL is an http(s) URL naming a host, or
// refused with the variable named (red with the scheme check removed:
// ftp and a bare host:port are taken).
func TestBaseURL(t *testing.T) {
	for _, tt := range []struct {
		value, host string
		cleartext   bool
		refused     bool
	}{
		{value: "", host: ""},
		{value: "https://gateway.corp", host: "gateway.corp"},
		{value: "https://gateway.corp:8443/anthropic", host: "gateway.corp:8443"},
		{value: "http://127.0.0.1:4000", host: "127.0.0.1:4000"},
		{value: "http://[::1]:4000", host: "[::1]:4000"},
		{value: "http://gateway.corp:8080", host: "gateway.corp:8080", cleartext: true},
		{value: "http://localhost:4000", host: "localhost:4000", cleartext: true}, // a name: DNS could say anything
		{value: "ftp://gateway.corp", refused: true},
		{value: "gateway.corp:8443", refused: true},
		{value: "https://", refused: true},
		{value: "::", refused: true},
		{value: "/v1", refused: true},
	} {
		e := Read([]string{"ANTHROPIC_BASE_URL=" + tt.value})
		u, err := e.BaseURL()
		switch {
		case tt.refused:
			if err == nil || u != nil {
				t.Errorf("%q: got %v, %v; want refused", tt.value, u, err)
			} else if want := `ANTHROPIC_BASE_URL="` + tt.value + `" is not an http(s) URL`; err.Error() != want {
				t.Errorf("%q: error %q, want %q", tt.value, err, want)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.value, err)
		case tt.host == "":
			if u != nil {
				t.Errorf("%q: got %v, want none", tt.value, u)
			}
		case u.Host != tt.host || Cleartext(u) != tt.cleartext:
			t.Errorf("%q: host %q, cleartext %v; want %q, %v", tt.value, u.Host, Cleartext(u), tt.host, tt.cleartext)
		}
	}
}
