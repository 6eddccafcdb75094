// Package installer makes plain `claude` resolve to the sandbox: it puts the
// real Claude Code off PATH, places the launcher, points every `claude` a
// shell could find at it, and stamps the conf and Claude Code's managed
// settings. Every write is atomic, a run changes nothing when nothing needs
// changing, and --dry-run shows the plan with diffs.
package installer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// Options are the installer's inputs; the CLI's flags map onto them.
type Options struct {
	Root          string // every system path is taken under Root; "/" for a real install
	Self          string // the claude-sandbox binary to install
	ClaudeBinary  string
	ClaudeVersion string
	ClaudeSHA256  string
	// NativeInstaller is the URL of Anthropic's installer script; "" means
	// NativeInstallerURL (none under a test --root), "none" skips it.
	NativeInstaller string
	User            string // the remote user; default $_REMOTE_USER, else the owner of /workspaces, else root
	DryRun          bool
	SkipProbe       bool // do not require that a sandbox starts here (image builds)
	Conf            ConfOptions
}

// ConfOptions are the conf lines the install asks for, by conf key (the
// keys of sandbox.ConfKeys): every value given, in order. A repeatable key
// makes a line of each; a single-valued key one of its last, none for "";
// a bare flag is written when its last value is "true".
type ConfOptions map[string][]string

type run struct {
	opts    Options
	out     io.Writer
	changes []change
}

// change is one step of the plan: what it does, the diff of a text file it
// edits, and how to apply it.
type change struct {
	what  string // past tense, for the summary: "installed the launcher at …"
	diff  string
	apply func() error
}

// planned turns a summary line into the dry-run's wording.
func planned(what string) string {
	verb, rest, _ := strings.Cut(what, " ")
	plain := map[string]string{"installed": "install", "wrote": "write", "updated": "update", "replaced": "replace",
		"linked": "link", "relinked": "relink", "moved": "move", "removed": "remove", "put": "put"}[verb]
	if plain == "" {
		return what
	}
	return plain + " " + rest
}

// Install runs the whole install, or prints the plan under DryRun.
func Install(o Options, environ []string, out io.Writer) error {
	if err := o.Conf.check(); err != nil {
		return err
	}
	in, unlock, err := start(o, environ, out, "install must run as root (sudo ./install, or sudo claude-sandbox install)")
	if err != nil {
		return err
	}
	defer unlock()
	if err := in.prerequisites(); err != nil {
		return err
	}
	src, err := in.findClaude()
	if err != nil {
		return err
	}
	if err := in.plan(src); err != nil {
		return err
	}
	return in.apply()
}

// start checks for root (unless under a test root), settles the remote
// user, and takes the install lock (not for a dry run).
func start(o Options, environ []string, out io.Writer, notRoot string) (*run, func(), error) {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Root == "/" && os.Geteuid() != 0 {
		return nil, nil, errors.New(notRoot)
	}
	in := &run{opts: o, out: out}
	if in.opts.User == "" {
		in.opts.User = in.defaultUser(environ)
	}
	if o.DryRun {
		return in, func() {}, nil
	}
	unlock, err := in.lock()
	if err != nil {
		return nil, nil, err
	}
	return in, unlock, nil
}

// apply carries out the planned changes in order, printing one line each,
// or under DryRun prints the plan with its diffs.
func (in *run) apply() error {
	if len(in.changes) == 0 {
		fmt.Fprintln(in.out, "claude-sandbox: nothing to change")
		return nil
	}
	for _, c := range in.changes {
		if in.opts.DryRun {
			fmt.Fprintf(in.out, "would %s\n%s", planned(c.what), c.diff)
			continue
		}
		if err := c.apply(); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		fmt.Fprintf(in.out, "claude-sandbox: %s\n", c.what)
	}
	return nil
}

// path maps a target-system path under Root.
func (in *run) path(p string) string { return filepath.Join(in.opts.Root, p) }

func (in *run) add(what, diff string, apply func() error) {
	in.changes = append(in.changes, change{what, diff, apply})
}

// lock serialises installs (a postCreate and a manual run at once).
func (in *run) lock() (func(), error) {
	p := in.path(layout.InstallLock)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// prerequisites installs bubblewrap where it is missing, then checks that a
// sandbox really starts here, before anything else is touched.
func (in *run) prerequisites() error {
	if in.opts.Root != "/" {
		return nil // a test root: the host's packages are not ours to change
	}
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		if in.opts.DryRun {
			fmt.Fprintln(in.out, "would install bubblewrap with the distribution's package manager")
		} else if err := installPackages("bubblewrap"); err != nil {
			return err
		}
		if bwrap, err = host.FindBwrap(layout.Installed()); err != nil && !in.opts.DryRun {
			return err
		}
	}
	if in.opts.SkipProbe || bwrap == "" {
		return nil
	}
	if f := doctor.Probe(bwrap); !f.OK {
		return fmt.Errorf("a sandbox cannot start on this host, so nothing was installed: %s. %s (use --skip-probe when building an image, where namespaces are often unavailable)", f.Detail, f.Fix)
	}
	return nil
}

func installPackages(pkgs ...string) error {
	var cmds [][]string
	switch {
	case have("apt-get"):
		cmds = [][]string{{"apt-get", "update", "-qq"}, append([]string{"apt-get", "install", "-y", "-qq", "--no-install-recommends"}, pkgs...)}
	case have("apk"):
		cmds = [][]string{append([]string{"apk", "add", "--no-cache"}, pkgs...)}
	case have("dnf"):
		cmds = [][]string{append([]string{"dnf", "install", "-y", "-q"}, pkgs...)}
	default:
		return fmt.Errorf("%s is missing and no known package manager (apt-get, apk, dnf) is here; install it by hand", strings.Join(pkgs, ", "))
	}
	for _, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s failed: %w: %s", strings.Join(c, " "), err, lastLine(out))
		}
	}
	return nil
}

func have(cmd string) bool {
	_, err := exec.LookPath(cmd)
	return err == nil
}

// plan lists the changes, in an order where every prefix leaves a working
// install: the real binary and the launcher first, then the files they
// read, then every `claude` on PATH pointed at the launcher.
func (in *run) plan(src *source) error {
	real := in.path(layout.RealBinary)
	if !sameFile(real, src.path) {
		what := fmt.Sprintf("installed the real Claude Code at %s (from %s)", layout.RealBinary, src.from)
		in.add(what, "", func() error { return copyAtomic(real, src.path, 0o755) })
	}
	in.planVersionRecord()
	self := in.path(layout.LauncherBinary)
	if !sameContent(self, in.opts.Self) {
		in.add("installed the launcher at "+layout.LauncherBinary, "", func() error { return copyAtomic(self, in.opts.Self, 0o755) })
	}
	in.planInsideSettings()
	if err := in.planConf(); err != nil {
		return err
	}
	if err := in.planManagedSettings(); err != nil {
		return err
	}
	if err := in.planOutsideSettings(); err != nil {
		return err
	}
	if err := in.planManagedCommand(); err != nil {
		return err
	}
	if err := in.planGitConfig(); err != nil {
		return err
	}
	if err := in.planUserConfig(); err != nil {
		return err
	}
	for _, p := range in.claudesOnPath() {
		in.planLink(p)
	}
	in.planLegacyLinks()
	in.planLink(layout.LauncherLink)
	in.planLink(layout.ToolLink)
	in.planLink(layout.Wrapper)
	return nil
}

// claudesOnPath are the other places a shell finds `claude`: system bin
// directories and each user's ~/.local/bin (where Anthropic's installer
// puts it and adds to PATH). Each existing one becomes a link to the
// launcher.
func (in *run) claudesOnPath() []string {
	var out []string
	for _, p := range []string{"/usr/bin/claude", "/bin/claude"} {
		if fi, err := os.Lstat(in.path(filepath.Dir(p))); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // /bin linked to /usr/bin
		}
		if _, err := os.Lstat(in.path(p)); err == nil {
			out = append(out, p)
		}
	}
	for _, home := range in.homes() {
		p := filepath.Join(home, ".local/bin/claude")
		if _, err := os.Lstat(in.path(p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// planLink points the target-system path p at the launcher.
func (in *run) planLink(p string) {
	host := in.path(p)
	if target, err := os.Readlink(host); err == nil && target == layout.LauncherBinary {
		return
	}
	what := "linked " + p + " to the launcher"
	if _, err := os.Lstat(host); err == nil {
		what = "replaced " + p + " with a link to the launcher"
	}
	in.add(what, "", func() error { return symlinkAtomic(layout.LauncherBinary, host) })
}

// homes are root's and the remote user's homes (target-system paths).
func (in *run) homes() []string {
	homes := []string{"/root"}
	if h := in.homeOf(in.opts.User); h != "" && h != "/root" {
		homes = append(homes, h)
	}
	return homes
}

// passwdEntry returns the target's /etc/passwd fields for the first entry
// where field col equals value, or nil.
func (in *run) passwdEntry(col int, value string) []string {
	f, err := os.Open(in.path(layout.Passwd))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 7 && fields[col] == value {
			return fields
		}
	}
	return nil
}

func (in *run) homeOf(user string) string {
	if e := in.passwdEntry(0, user); e != nil {
		return e[5]
	}
	return ""
}

// defaultUser is the devcontainer's remote user, else the owner of
// /workspaces, else root.
func (in *run) defaultUser(environ []string) string {
	if v := envlist.Get(environ, "_REMOTE_USER"); v != "" {
		return v
	}
	if fi, err := os.Stat(in.path("/workspaces")); err == nil {
		if e := in.passwdEntry(2, strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))); e != nil {
			return e[0]
		}
	}
	return "root"
}
