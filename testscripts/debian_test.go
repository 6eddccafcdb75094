package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/claude-sandbox/claude-sandbox/features/packaging"
)

// debianRoot is a minimal Debian made with debootstrap, kept between runs:
// the feature test installs into a copy-on-write container over it, the way
// an image build runs a feature's install.sh on a fresh base image.
const debianRoot = "/var/cache/claude-sandbox-test/debian-bookworm"

// debianReason is empty when the Debian root exists or can be made here.
func debianReason() string {
	if os.Geteuid() != 0 {
		return "it needs root (debootstrap, mounts)"
	}
	if _, err := os.Stat(filepath.Join(debianRoot, "etc/debian_version")); err == nil {
		return ""
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "debootstrap is not installed"
	}
	return makeDebianRoot()
}

// makeDebianRoot runs debootstrap into a temporary directory and renames it
// into place, under a lock, so a crash or a parallel run leaves no half root.
func makeDebianRoot() string {
	if err := os.MkdirAll(filepath.Dir(debianRoot), 0o755); err != nil {
		return err.Error()
	}
	lock, err := os.OpenFile(debianRoot+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err.Error()
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err.Error()
	}
	if _, err := os.Stat(filepath.Join(debianRoot, "etc/debian_version")); err == nil {
		return ""
	}
	tmp := debianRoot + ".tmp"
	os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "making a minimal Debian root for the feature test with debootstrap (once, about a minute)\n")
	cmd := exec.Command("debootstrap", "--variant=minbase", "--include=bubblewrap,ca-certificates,git,procps",
		"bookworm", tmp, "http://deb.debian.org/debian")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return fmt.Sprintf("debootstrap failed: %v: %s", err, lastLines(out, 3))
	}
	if err := os.Rename(tmp, debianRoot); err != nil {
		return err.Error()
	}
	return ""
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// debianScript makes the container: an overlay over the Debian root, fresh
// /proc (of its own PID namespace), /dev, /tmp and /run, the script's $WORK
// bound at the same path, then pivot_root so the root is a real mount (bwrap
// inside needs that), and CMD run as root with a clean environment.
const debianScript = `set -e
C=$CONTAINER
mkdir -p $C/upper $C/work $C/root
mount -t overlay overlay -o "lowerdir=$DEBIAN_ROOT,upperdir=$C/upper,workdir=$C/work" $C/root
R=$C/root
mount --rbind /dev $R/dev
mount -t proc proc $R/proc
mount -t tmpfs tmpfs $R/tmp
mount -t tmpfs tmpfs $R/run
cp /etc/resolv.conf $R/etc/resolv.conf
mkdir -p "$R$WORK"
mount --bind "$WORK" "$R$WORK"
cd $R
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
cd /
exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root WORK="$WORK" "$@"`

// debian CMD [ARGS...] runs CMD as root in a throwaway Debian container
// (see debianScript); what it changes vanishes with it.
func debian(ts *testscript.TestScript, neg bool, args []string) {
	ts.Setenv("DEBIAN_ROOT", debianRoot)
	runContained(ts, neg, "debian", debianScript, args)
}

// featureStage OUT makes the feature's package with the devcontainer CLI,
// as a release does, from the files of features/src/claude-sandbox and the
// static binary for this machine (a release ships both architectures; a
// test needs one), and unpacks it into OUT, as the CLI does at image build.
func featureStage(repo string) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: feature-stage OUT")
		}
		src := ts.MkAbs("feature-src")
		dir := filepath.Join(src, filepath.Base(features.Dir))
		ts.Check(os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
		entries, err := os.ReadDir(filepath.Join(repo, features.Dir))
		ts.Check(err)
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(repo, features.Dir, e.Name()))
			ts.Check(err)
			info, err := e.Info()
			ts.Check(err)
			ts.Check(os.WriteFile(filepath.Join(dir, e.Name()), data, info.Mode().Perm()))
		}
		ts.Check(packaging.BuildBinary(repo, runtime.GOARCH, filepath.Join(dir, packaging.BinaryName(runtime.GOARCH))))
		cli, err := packaging.DevcontainerCLI(packaging.TestCLICache)
		ts.Check(err)
		dist := ts.MkAbs("feature-dist")
		ts.Check(packaging.CLI{Path: cli}.Package(src, dist))
		out := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(out, 0o755))
		archive := filepath.Join(dist, "devcontainer-feature-"+filepath.Base(features.Dir)+".tgz")
		if b, err := exec.Command("tar", "-xf", archive, "-C", out).CombinedOutput(); err != nil {
			ts.Fatalf("unpacking %s: %v: %s", archive, err, b)
		}
	}
}
