package procstatus

import (
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	in := "Name:\tclaude\nUmask:\t0022\nNSpid:\t41\t3\nCapEff:\t0000000000000000\nSeccomp:\t2\nno colon here\n\n"
	want := Status{"Name": "claude", "Umask": "0022", "NSpid": "41\t3", "CapEff": "0000000000000000", "Seccomp": "2"}
	if diff := cmp.Diff(want, Parse([]byte(in))); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestReadSelf(t *testing.T) {
	st, err := Read("self")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st["Pid"], strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("Read(self): Pid %q, want %s", got, want)
	}
	if _, err := Read("0"); err == nil {
		t.Error("Read(0) found a status for pid 0")
	}
}
