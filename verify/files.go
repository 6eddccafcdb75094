package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"golang.org/x/sys/unix"
)

// readOnly returns nil when path cannot be written or, if it is missing,
// created: the kernel refuses a write with EROFS, or the mount holding the
// nearest existing ancestor is read-only. Permission bits alone do not
// count (an owner can change them); nothing is ever written. The string
// names what was found.
func readOnly(path string) (string, error) {
	p := existingAncestor(path)
	shown := path
	if p != path {
		shown = fmt.Sprintf("%s (absent; %s cannot be written)", path, p)
	}
	err := unix.Access(p, unix.W_OK)
	switch {
	case err == nil:
		return "", fmt.Errorf("%s is writable", p)
	case errors.Is(err, unix.EROFS):
		return shown, nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if st.Flags&unix.ST_RDONLY == 0 {
		return "", fmt.Errorf("%s is on a writable mount (only its permission bits refuse writes)", p)
	}
	return shown, nil
}

func existingAncestor(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == "/" || p == "." {
			return p
		}
	}
}

// allReadOnly checks each distinct path with readOnly.
func allReadOnly(paths ...string) (string, error) {
	var shown []string
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		s, err := readOnly(p)
		if err != nil {
			return "", err
		}
		shown = append(shown, s)
	}
	return "read-only: " + strings.Join(shown, ", "), nil
}

// ownTmpfs demands that the visible mount at path is a writable tmpfs: a
// fresh one the sandbox made, since everything of the host shows through
// read-only.
func (f *facts) ownTmpfs(path string) error {
	m, ok := f.mountAt(path)
	if !ok || m.FSType != "tmpfs" || m.ReadOnly() {
		return fmt.Errorf("%s is not a tmpfs of the sandbox's own: what is there comes from the host", path)
	}
	return nil
}

// insideMarker: the launcher recognises this sandbox (a claude started
// here, from a hook or a skill, runs the real binary rather than a second
// sandbox), and its marker sits on the sandbox's own /run, where nothing
// outside can have put it.
func insideMarker(f *facts) (string, error) {
	if f.mountsErr != nil {
		return "", f.mountsErr
	}
	if err := f.ownTmpfs("/run"); err != nil {
		return "", err
	}
	if !host.Inside() {
		return "", errors.New("the launcher does not recognise this sandbox: the marker is there but the confinement it also demands is not")
	}
	return layout.InsideMarker + " is on the sandbox's own /run, and the launcher recognises the sandbox", nil
}

// systemReadOnly: the system (/, /etc, /usr, /var) is read-only, so no
// program, library or configuration that runs later can be changed.
func systemReadOnly(*facts) (string, error) {
	return allReadOnly("/", "/etc", "/usr", "/var")
}

// kernelSettingsReadOnly: no kernel setting can be written, not
// /proc/sys (core_pattern would run a program as root on the host at the
// next crash), not /proc/sysrq-trigger, not /sys. This matters for a
// session of root, whose uid is the host's root even without capabilities,
// and whom only the file's mode and a read-only mount stop. The settings of
// the namespaces the sandbox made are left out: writing them changes only
// the sandbox. The kernel gives those to the namespace's owner, so for any
// user but root a setting this user owns is one of them; the rest are
// known by name.
func kernelSettingsReadOnly(*facts) (string, error) {
	var writable []string
	n, own := 0, 0
	uid := os.Getuid()
	filepath.WalkDir("/proc/sys", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // an unreadable directory: nothing to probe in it
		}
		n++
		var st unix.Stat_t
		switch {
		case unix.Access(p, unix.W_OK) != nil:
		case ownNamespaceSetting(p), uid != 0 && unix.Stat(p, &st) == nil && st.Uid == uint32(uid):
			own++
		default:
			writable = append(writable, p)
		}
		return nil
	})
	if _, err := os.Lstat("/proc/sysrq-trigger"); err == nil && unix.Access("/proc/sysrq-trigger", unix.W_OK) == nil {
		writable = append(writable, "/proc/sysrq-trigger")
	}
	if len(writable) > 0 {
		sort.Slice(writable, func(i, j int) bool { return rankSetting(writable[i]) < rankSetting(writable[j]) })
		return "", fmt.Errorf("%d kernel settings are writable, among them %s", len(writable), strings.Join(writable[:min(3, len(writable))], ", "))
	}
	if _, err := readOnly("/sys"); err != nil {
		return "", err
	}
	if own > 0 {
		return fmt.Sprintf("of the %d files under /proc/sys only the %d of the sandbox's own namespaces are writable; /sys is read-only", n, own), nil
	}
	return fmt.Sprintf("none of the %d files under /proc/sys is writable; /sys is read-only", n), nil
}

// ownNamespaceSettings are the /proc/sys entries (prefixes) of the IPC,
// PID, UTS and user namespaces the sandbox made; writing one changes only
// the sandbox (and ns_last_pid needs a capability besides).
var ownNamespaceSettings = []string{
	"/proc/sys/fs/mqueue/", "/proc/sys/kernel/msg", "/proc/sys/kernel/sem", "/proc/sys/kernel/shm", "/proc/sys/kernel/auto_msgmni",
	"/proc/sys/kernel/ns_last_pid",
	"/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname",
	"/proc/sys/user/",
}

func ownNamespaceSetting(p string) bool {
	for _, prefix := range ownNamespaceSettings {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// rankSetting puts the settings that run code as root first in a report.
func rankSetting(p string) string {
	switch p {
	case "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger":
		return "0" + p
	}
	return "1" + p
}

// standardDevices are the devices bwrap's --dev provides (console only
// when a terminal is attached); pts/N are the sandbox's own ptys.
var standardDevices = map[string]bool{
	"null": true, "zero": true, "full": true, "random": true, "urandom": true, "tty": true, "console": true, "pts/ptmx": true,
}

// devMinimal: /dev holds only the standard character devices: no disk
// (block device) to read the host's file systems raw, no /dev/mem, kvm
// or other hardware.
func devMinimal(*facts) (string, error) {
	var extra []string
	n := 0
	err := filepath.WalkDir("/dev", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeDevice == 0 {
			return nil
		}
		n++
		rel := strings.TrimPrefix(p, "/dev/")
		pty := strings.HasPrefix(rel, "pts/") && strings.Trim(strings.TrimPrefix(rel, "pts/"), "0123456789") == ""
		switch {
		case d.Type()&fs.ModeCharDevice == 0:
			extra = append(extra, p+" (block device)")
		case !standardDevices[rel] && !pty:
			extra = append(extra, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(extra) > 0 {
		return "", fmt.Errorf("devices beyond the standard ones: %s", strings.Join(extra, ", "))
	}
	return fmt.Sprintf("%d devices, all standard character devices", n), nil
}

// The masked directories, by what they hide; together they are
// sandbox.MaskedDirs.
var (
	runDirs     = []string{"/run", "/var/run"}
	tmpDirs     = []string{"/tmp", "/var/tmp"}
	homeDirs    = []string{"/home", "/root"}
	projectDirs = []string{"/workspaces", "/mnt", "/media"}
)

// maskedDirs: each of dirs that is a directory here is a tmpfs of the
// sandbox's own, and nothing is mounted below it but what the plan mounts
// (the home, the workspace, allow-write paths).
func maskedDirs(f *facts, dirs []string) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	var shown []string
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			shown = append(shown, d+" absent")
			continue
		case err != nil:
			return "", err
		case !fi.IsDir():
			target, _ := os.Readlink(d)
			shown = append(shown, fmt.Sprintf("%s links to %s", d, target))
			continue
		}
		if err := f.ownTmpfs(d); err != nil {
			return "", err
		}
		var extra []string
		for _, m := range f.mounts {
			if m.Point != d && subtree.Of(d).Contains(m.Point) && !f.planned(m, false) {
				extra = append(extra, m.Point)
			}
		}
		if len(extra) > 0 {
			return "", fmt.Errorf("%s holds mounts the policy does not make: %s", d, strings.Join(extra, ", "))
		}
		shown = append(shown, d+" is the sandbox's own tmpfs")
	}
	return strings.Join(shown, "; "), nil
}

// runPrivate: /run (and /var/run) is the sandbox's own, so no runtime
// socket, pid file or secret of the host or the container is there.
func runPrivate(f *facts) (string, error) { return maskedDirs(f, runDirs) }

// tmpPrivate: /tmp and /var/tmp are the sandbox's own, so no file another
// process left there (or will read from there) is shared.
func tmpPrivate(f *facts) (string, error) { return maskedDirs(f, tmpDirs) }

// otherHomesHidden: /home and /root show nothing but the way to this
// user's own (private) home.
func otherHomesHidden(f *facts) (string, error) { return maskedDirs(f, homeDirs) }

// otherProjectsHidden: /workspaces, /mnt and /media show nothing but the
// way to this workspace: other projects and mounted volumes are hidden.
func otherProjectsHidden(f *facts) (string, error) { return maskedDirs(f, projectDirs) }

// secretsAbsent: /run/secrets and /var/run/secrets, where container
// runtimes put secrets, are absent or empty.
func secretsAbsent(*facts) (string, error) {
	var shown []string
	for _, d := range []string{"/run/secrets", "/var/run/secrets"} {
		entries, err := os.ReadDir(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			shown = append(shown, d+" absent")
		case err != nil:
			return "", err
		case len(entries) > 0:
			return "", fmt.Errorf("%s holds %d entries", d, len(entries))
		default:
			shown = append(shown, d+" empty")
		}
	}
	return strings.Join(shown, ", "), nil
}
