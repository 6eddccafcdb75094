package host

import (
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"golang.org/x/sys/unix"
)

// Each condition of the inside test is needed on its own: a process that
// lacks any one of them is outside, whatever the others say.
func TestConfinedBy(t *testing.T) {
	const sandboxed = "Name:\tclaude\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
	for _, tc := range []struct {
		name   string
		status string
		sock   error
		want   bool
	}{
		{"the sandbox", sandboxed, unix.EAFNOSUPPORT, true},
		{"no filter: the kernel refuses the flag bit", sandboxed, unix.EINVAL, false},
		{"a container runtime's filter", sandboxed, unix.EPERM, false},
		{"vsock created", sandboxed, nil, false},
		{"capabilities", "CapEff:\t000001ffffffffff\nNoNewPrivs:\t1\n", unix.EAFNOSUPPORT, false},
		{"no no_new_privs", "CapEff:\t0000000000000000\nNoNewPrivs:\t0\n", unix.EAFNOSUPPORT, false},
		{"no CapEff line", "NoNewPrivs:\t1\n", unix.EAFNOSUPPORT, false},
		{"no NoNewPrivs line", "CapEff:\t0000000000000000\n", unix.EAFNOSUPPORT, false},
		{"an empty status", "", unix.EAFNOSUPPORT, false},
	} {
		if got := confinedBy(procstatus.Parse([]byte(tc.status)), tc.sock); got != tc.want {
			t.Errorf("%s: confinedBy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
