package installer

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// ContainerStart is the devcontainer feature's postStartCommand, run as the
// remote user every time the container starts, for what an image build
// cannot do: link ~/.claude and ~/.claude.json into the shared
// configuration mount (mounted only at run time), and check that a sandbox
// starts on this host, printing the host's fix when it does not. It never
// stops the container from starting: `claude` refuses with the same fix.
func ContainerStart(o Options, out io.Writer) error {
	if o.Root == "" {
		o.Root = "/"
	}
	in := &run{opts: o, out: out}
	if in.opts.User == "" {
		e := in.passwdEntry(2, strconv.Itoa(os.Getuid()))
		if e == nil {
			return fmt.Errorf("uid %d is not in %s", os.Getuid(), in.path(layout.Passwd))
		}
		in.opts.User = e[0]
	}
	if err := in.planUserConfig(); err != nil {
		return err
	}
	if len(in.changes) > 0 {
		if err := in.apply(); err != nil {
			return err
		}
	}
	if o.SkipProbe {
		return nil
	}
	bwrap, err := host.FindBwrap(layout.Installed())
	f := doctor.Finding{Name: "bubblewrap", Detail: fmt.Sprint(err)}
	if err == nil {
		f = doctor.Probe(bwrap)
	}
	if !f.OK {
		fmt.Fprintf(out, "claude-sandbox: WARNING: the sandbox cannot start on this host, so `claude` will refuse to run: %s\n", f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(out, "claude-sandbox: %s\n", f.Fix)
		}
	}
	return nil
}
