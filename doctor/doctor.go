// Package doctor checks whether this host can run the sandbox, and says how
// to fix what it cannot.
package doctor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/warden"
)

// MinBwrap is the oldest bubblewrap whose flags the launcher uses
// (--clearenv, --ro-bind-data, --json-status-fd).
var MinBwrap = [3]int{0, 5, 0}

// Finding is one check's result.
type Finding struct {
	OK     bool
	Name   string
	Detail string
	Fix    string
}

// Print writes one line per finding (and a fix line under each failure). It
// returns the number of failures.
func Print(w io.Writer, findings []Finding) int {
	failures := 0
	for _, f := range findings {
		mark := "ok  "
		if !f.OK {
			mark = "FAIL"
			failures++
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, f.Name, f.Detail)
		if !f.OK && f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", f.Fix)
		}
	}
	return failures
}

// Host checks bwrap (found at bwrap, or not found with findErr), the kernel's
// namespace settings, the container's confinement, a real sandbox start, and
// the real Claude Code binary. Findings come in a fixed order.
func Host(bwrap string, findErr error, realBinary string) []Finding {
	var out []Finding
	add := func(ok bool, name, detail, fix string) { out = append(out, Finding{ok, name, detail, fix}) }

	if findErr != nil {
		add(false, "bwrap", "not installed", findErr.Error())
	} else {
		v, verr := bwrapVersion(bwrap)
		switch {
		case verr != nil:
			add(false, "bwrap", fmt.Sprintf("%s does not report a version: %v", bwrap, verr), "reinstall bubblewrap from the distribution")
		case less(v, MinBwrap):
			add(false, "bwrap", fmt.Sprintf("%s is version %d.%d.%d", bwrap, v[0], v[1], v[2]), fmt.Sprintf("install bubblewrap %d.%d.%d or newer", MinBwrap[0], MinBwrap[1], MinBwrap[2]))
		default:
			add(true, "bwrap", fmt.Sprintf("%s, version %d.%d.%d", bwrap, v[0], v[1], v[2]), "")
		}
	}

	if err := warden.KernelSupports(); err != nil {
		add(false, "kernel", err.Error(), "run the container on a host with a newer kernel")
	} else {
		add(true, "kernel", fmt.Sprintf("Linux %d.%d or later, as the warden needs", warden.MinKernel[0], warden.MinKernel[1]), "")
	}

	if v := read("/proc/sys/user/max_user_namespaces"); v == "0" {
		add(false, "user namespaces", "user.max_user_namespaces=0", "on the host: sudo sysctl -w user.max_user_namespaces=15000")
	} else {
		add(true, "user namespaces", "user.max_user_namespaces="+v, "")
	}
	if v := read("/proc/sys/kernel/unprivileged_userns_clone"); v == "0" {
		add(false, "unprivileged user namespaces", "kernel.unprivileged_userns_clone=0", "sudo sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if v := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); v == "1" {
		add(false, "AppArmor user namespace restriction", "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10+ host)",
			"on the host: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (persist it in /etc/sysctl.d/), or load an AppArmor profile for /usr/bin/bwrap that allows `userns,`")
	} else if v != "" {
		add(true, "AppArmor user namespace restriction", "kernel.apparmor_restrict_unprivileged_userns="+v, "")
	}
	if profile := read("/proc/self/attr/current"); profile != "" && profile != "unconfined" {
		add(true, "AppArmor profile", profile+" (if the sandbox probe below fails with a mount error, this profile is the cause: --security-opt apparmor=unconfined)", "")
	}
	if seccomp := status("Seccomp"); seccomp == "2" {
		add(true, "container seccomp", "a seccomp filter is active (if the sandbox probe below fails, Docker's default profile is the cause: --security-opt seccomp=unconfined)", "")
	}

	if bwrap != "" {
		out = append(out, Probe(bwrap))
	}

	if fi, err := os.Stat(realBinary); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		add(false, "claude binary", realBinary+" is missing or not executable", "sudo claude-sandbox install")
	} else {
		add(true, "claude binary", realBinary, "")
	}
	return out
}

// Diagnose names the most likely reason bwrap cannot create its namespaces
// here, and the fix, from facts that need no process to be started.
func Diagnose() string {
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		return "Cause: the host restricts unprivileged user namespaces with AppArmor (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+). Fix, on the host: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or load an AppArmor profile for bwrap that allows `userns,`. Details: `claude-sandbox doctor`."
	}
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		return "Cause: user namespaces are disabled (user.max_user_namespaces=0). Fix, on the host: `sudo sysctl -w user.max_user_namespaces=15000`. Details: `claude-sandbox doctor`."
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		return "Cause: unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0). Fix: `sudo sysctl -w kernel.unprivileged_userns_clone=1`. Details: `claude-sandbox doctor`."
	}
	if status("Seccomp") == "2" {
		return "Cause: probably the container's seccomp profile, which blocks the namespace syscalls (Docker's default does). Fix: start the container with `--security-opt seccomp=unconfined` (devcontainer.json: \"securityOpt\": [\"seccomp=unconfined\"]) and, with AppArmor, `--security-opt apparmor=unconfined`; the claude-sandbox devcontainer feature declares both, and `systempaths=unconfined`. Details: `claude-sandbox doctor`."
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		masked := ProcMasked(f)
		f.Close()
		if masked {
			return "Cause: the container hides parts of /proc behind mounts (Docker's default masked paths), and the kernel then refuses a fresh /proc in a new namespace. Fix: start the container with `--security-opt systempaths=unconfined` (the claude-sandbox devcontainer feature declares it). Details: `claude-sandbox doctor`."
		}
	}
	return "Run `claude-sandbox doctor` for the cause and the fix."
}

// ProcMasked reports whether something is mounted over a part of /proc, as
// Docker does over /proc/kcore, /proc/keys and others, from a mountinfo
// table. binfmt_misc, which hosts mount on an empty directory of /proc, does
// not hide anything and does not count.
func ProcMasked(mountinfo io.Reader) bool {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 && strings.HasPrefix(f[4], "/proc/") && f[4] != "/proc/sys/fs/binfmt_misc" {
			return true
		}
	}
	return false
}

// Probe starts a minimal sandbox with the namespaces the launcher uses.
func Probe(bwrap string) Finding {
	probe := exec.Command(bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/run", "--", "/bin/true")
	probe.Env = []string{}
	if outb, err := probe.CombinedOutput(); err != nil {
		return Finding{Name: "sandbox probe", Detail: fmt.Sprintf("bwrap cannot create the sandbox: %s", strings.TrimSpace(string(outb))), Fix: Diagnose()}
	}
	return Finding{OK: true, Name: "sandbox probe", Detail: "bwrap created user, pid, ipc and uts namespaces with a fresh /proc"}
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

func bwrapVersion(bwrap string) ([3]int, error) {
	cmd := exec.Command(bwrap, "--version")
	cmd.Env = []string{}
	outb, err := cmd.Output()
	if err != nil {
		return [3]int{}, err
	}
	m := versionRE.FindStringSubmatch(string(outb))
	if m == nil {
		return [3]int{}, fmt.Errorf("unrecognised output %q", strings.TrimSpace(string(outb)))
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, nil
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func status(field string) string {
	for _, line := range strings.Split(read("/proc/self/status"), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
