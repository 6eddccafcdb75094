package envlist

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var twice = []string{"PATH=/first", "HOME=/home/u", "EMPTY=", "PATH=/second", "NOVALUE", "A=b=c"}

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"PATH", "/first", true}, // the first definition, as getenv(3)
		{"HOME", "/home/u", true},
		{"EMPTY", "", true},
		{"A", "b=c", true},
		{"NOVALUE", "", false}, // no "=": not a definition getenv would find
		{"MISSING", "", false},
		{"PAT", "", false},
	} {
		if got, ok := Lookup(twice, tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if got := Get(twice, tt.name); got != tt.want {
			t.Errorf("Get(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMap(t *testing.T) {
	want := map[string]string{"PATH": "/second", "HOME": "/home/u", "EMPTY": "", "NOVALUE": "", "A": "b=c"}
	if diff := cmp.Diff(want, Map(twice)); diff != "" {
		t.Errorf("Map (-want +got):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	if got, want := Names(twice), []string{"A", "EMPTY", "HOME", "NOVALUE", "PATH", "PATH"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
}
