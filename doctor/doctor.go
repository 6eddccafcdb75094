// Package doctor checks whether this host can run the sandbox, and says how
// to fix what it cannot.
package doctor

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/forge"
	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

// MinBwrap is the oldest bubblewrap whose flags the launcher uses
// (--clearenv, --ro-bind-data, --json-status-fd, --perms).
var MinBwrap = [3]int{0, 5, 0}

// Finding is one check's result.
type Finding struct {
	OK     bool
	Name   string
	Detail string
	Fix    string
}

// Print writes one line per finding (and a fix line under each failure). It
// returns the number of failures. A finding can name paths in the
// workspace and quote files a session wrote (the launch's refusal), so
// each is escaped (termtext).
func Print(w io.Writer, findings []Finding) int {
	failures := 0
	for _, f := range findings {
		mark := "ok  "
		if !f.OK {
			mark = "FAIL"
			failures++
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, termtext.Escape(f.Name), termtext.Escape(f.Detail))
		if !f.OK && f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", termtext.Escape(f.Fix))
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

	add(true, "unix sockets", UnixSocketMode(), "")
	add(true, "kernel lock", KernelLockMode(), "")

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
			"on the host: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (persist it in /etc/sysctl.d/), or load AppArmor profiles that allow `userns,` for /usr/bin/bwrap and, for users other than root, the launcher /usr/libexec/claude-sandbox/claude-sandbox")
	} else if v != "" {
		add(true, "AppArmor user namespace restriction", "kernel.apparmor_restrict_unprivileged_userns="+v, "")
	}
	if profile := read("/proc/self/attr/current"); profile != "" && profile != "unconfined" {
		add(true, "AppArmor profile", profile+" (if the sandbox probe below fails with a mount error, this profile is the cause: --security-opt apparmor=unconfined)", "")
	}
	if seccomp := status("Seccomp"); seccomp == "2" {
		if InPodman() {
			add(true, "container seccomp", "a seccomp filter is active (Podman's default profile lets bubblewrap make its namespaces; if the sandbox probe below fails, a stricter profile may be the cause: --security-opt seccomp=unconfined)", "")
		} else {
			add(true, "container seccomp", "a seccomp filter is active (if the sandbox probe below fails, Docker's default profile is the cause: --security-opt seccomp=unconfined)", "")
		}
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
		return "Cause: the host restricts unprivileged user namespaces with AppArmor (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+). Fix, on the host: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or load AppArmor profiles that allow `userns,` for bwrap and, for users other than root, the launcher (/usr/libexec/claude-sandbox/claude-sandbox). Details: `claude-sandbox doctor`."
	}
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		return "Cause: user namespaces are disabled (user.max_user_namespaces=0). Fix, on the host: `sudo sysctl -w user.max_user_namespaces=15000`. Details: `claude-sandbox doctor`."
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		return "Cause: unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0). Fix: `sudo sysctl -w kernel.unprivileged_userns_clone=1`. Details: `claude-sandbox doctor`."
	}
	masked := false
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		masked = ProcMasked(f)
		f.Close()
	}
	// Podman's default seccomp profile lets the namespace syscalls through
	// (Docker's does not), so there the masked paths come first.
	podman := InPodman()
	if masked && podman {
		return maskedFix(true)
	}
	if status("Seccomp") == "2" {
		return "Cause: probably the container's seccomp profile, which blocks the namespace syscalls (Docker's default does). Fix: start the container with `--security-opt seccomp=unconfined` (devcontainer.json: \"securityOpt\": [\"seccomp=unconfined\"]) and, with AppArmor, `--security-opt apparmor=unconfined`; the claude-sandbox devcontainer feature declares both, and `systempaths=unconfined`. Details: `claude-sandbox doctor`."
	}
	if masked {
		return maskedFix(false)
	}
	return "Run `claude-sandbox doctor` for the cause and the fix."
}

// maskedFix is Diagnose's answer for a /proc with masked paths, in the
// words of the engine that masked them. Podman (4.3.1) takes Docker's
// systempaths=unconfined too, which is what the feature declares.
func maskedFix(podman bool) string {
	if podman {
		return "Cause: the container hides parts of /proc behind mounts (Podman's default masked paths), and the kernel then refuses a fresh /proc in a new namespace. Fix: start the container with `--security-opt systempaths=unconfined` (Podman's own name for it: `--security-opt unmask=ALL`; the claude-sandbox devcontainer feature declares systempaths=unconfined). Details: `claude-sandbox doctor`."
	}
	return "Cause: the container hides parts of /proc behind mounts (Docker's default masked paths), and the kernel then refuses a fresh /proc in a new namespace. Fix: start the container with `--security-opt systempaths=unconfined` (the claude-sandbox devcontainer feature declares it). Details: `claude-sandbox doctor`."
}

// containerEnv is the file Podman writes in every container it runs,
// rootful or rootless (Docker writes /.dockerenv instead).
var containerEnv = "/run/.containerenv"

// InPodman reports whether this is a Podman container.
func InPodman() bool {
	_, err := os.Stat(containerEnv)
	return err == nil
}

// ProcMasked reports whether something is mounted over a part of /proc, as
// Docker does over /proc/kcore, /proc/keys and others, from a mountinfo
// table. binfmt_misc, which hosts mount on an empty directory of /proc, does
// not hide anything and does not count.
func ProcMasked(table io.Reader) bool {
	mounts, err := mountinfo.Parse(table)
	if err != nil {
		return false
	}
	for _, m := range mounts {
		if strings.HasPrefix(m.Point, "/proc/") && m.Point != "/proc/sys/fs/binfmt_misc" {
			return true
		}
	}
	return false
}

// Probe starts a minimal sandbox with the namespaces the launcher uses,
// from the private mount namespace the launcher starts bwrap in.
func Probe(bwrap string) Finding {
	probe := exec.Command(bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/run", "--", "/bin/true")
	probe.Env = []string{}
	probe.SysProcAttr = sandbox.PrivateMounts()
	if outb, err := probe.CombinedOutput(); err != nil {
		return Finding{Name: "sandbox probe", Detail: fmt.Sprintf("bwrap cannot create the sandbox: %s", strings.TrimSpace(string(outb))), Fix: Diagnose()}
	}
	return Finding{OK: true, Name: "sandbox probe", Detail: "bwrap created user, pid, ipc and uts namespaces with a fresh /proc, in a private mount namespace"}
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
	st, _ := procstatus.Read("self")
	return st[field]
}

// MinGit is the oldest git that honours safe.bareRepository.
var MinGit = [3]int{2, 38, 0}

// Git checks the git that runs outside the sandbox: it must refuse a bare
// repository it finds by itself (safe.bareRepository = explicit, which the
// installer sets in the system configuration), or a session could make one
// anywhere in the workspace whose configuration the editor's or a shell
// prompt's git then obeys (ADR 0015). env is the caller's: git reads
// the same configuration for it as for the user's own commands.
func Git(env launchenv.Given) []Finding {
	git, err := exec.LookPath("git")
	if err != nil {
		return []Finding{{OK: true, Name: "git", Detail: "not installed: no git outside to obey what a session writes"}}
	}
	var out []Finding
	cmd := exec.Command(git, "--version")
	cmd.Env = env.List()
	outb, err := cmd.Output()
	m := versionRE.FindStringSubmatch(string(outb))
	switch {
	case err != nil || m == nil:
		out = append(out, Finding{Name: "git", Detail: fmt.Sprintf("%s does not report a version", git), Fix: "reinstall git from the distribution"})
	default:
		var v [3]int
		for i := range v {
			v[i], _ = strconv.Atoi(m[i+1])
		}
		if less(v, MinGit) {
			out = append(out, Finding{Name: "git", Detail: fmt.Sprintf("%s is version %d.%d.%d, which ignores safe.bareRepository: git outside would use a bare repository a session made in the workspace, and run what its config names", git, v[0], v[1], v[2]),
				Fix: fmt.Sprintf("install git %d.%d or newer", MinGit[0], MinGit[1])})
		} else {
			out = append(out, Finding{OK: true, Name: "git", Detail: fmt.Sprintf("%s, version %d.%d.%d", git, v[0], v[1], v[2])})
		}
	}
	// From / no repository applies: only the system's and the user's files.
	cmd = exec.Command(git, "config", "--show-origin", "--get-all", "safe.bareRepository")
	cmd.Env, cmd.Dir = env.List(), "/"
	outb, _ = cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(outb)), "\n")
	origin, value, _ := strings.Cut(lines[len(lines)-1], "\t")
	switch {
	case value == "":
		out = append(out, Finding{Name: "safe.bareRepository", Detail: "not set: git outside uses a bare repository it finds, which a session could make anywhere in the workspace",
			Fix: "sudo claude-sandbox install (it sets safe.bareRepository = explicit in the system git configuration)"})
	case value != "explicit":
		file := strings.TrimPrefix(origin, "file:")
		out = append(out, Finding{Name: "safe.bareRepository", Detail: fmt.Sprintf("%s sets it to %q, overriding the system's explicit: git outside uses a bare repository it finds, which a session could make anywhere in the workspace", file, value),
			Fix: fmt.Sprintf("git config --file %s --unset-all safe.bareRepository", file)})
	default:
		out = append(out, Finding{OK: true, Name: "safe.bareRepository", Detail: "explicit (" + strings.TrimPrefix(origin, "file:") + "): git outside uses no bare repository it finds by itself"})
	}
	return append(out, GitProtocols(git, env)...)
}

// safeProtocols are the transports git allows everywhere by default; every
// other one is "user" (file, remote helpers) or "never" (ext).
var safeProtocols = map[string]bool{"http": true, "https": true, "git": true, "ssh": true}

// GitProtocols checks that git outside keeps its transport policy for
// submodules: `git submodule update --init` clones from the URLs of
// .gitmodules, a workspace file sessions write, with
// GIT_PROTOCOL_FROM_USER=0, so by default an ext:: URL (a command), a
// local path or file:// (a repository of the user's, copied into the
// workspace) or another remote helper is refused there. A configuration
// that sets protocol.allow, or one of those, to "always" lifts that.
func GitProtocols(git string, env launchenv.Given) []Finding {
	cmd := exec.Command(git, "config", "--show-origin", "--get-regexp", `^protocol\.`)
	cmd.Env, cmd.Dir = env.List(), "/"
	outb, _ := cmd.Output()
	var out []Finding
	for _, line := range strings.Split(strings.TrimSpace(string(outb)), "\n") {
		origin, kv, ok := strings.Cut(line, "\t")
		key, value, _ := strings.Cut(kv, " ")
		name, isAllow := strings.CutSuffix(strings.TrimPrefix(strings.ToLower(key), "protocol."), ".allow")
		if !ok || !isAllow && key != "protocol.allow" || safeProtocols[name] || !strings.EqualFold(value, "always") {
			continue
		}
		fix := "unset it; allow a protocol for one command instead: git -c protocol.file.allow=always ..."
		if file, isFile := strings.CutPrefix(origin, "file:"); isFile {
			fix = fmt.Sprintf("git config --file %s --unset %s", file, key)
		}
		out = append(out, Finding{Name: "git protocols", Detail: fmt.Sprintf("%s sets %s = always: git submodule update --init outside would use it for a URL a session wrote in .gitmodules (ext:: runs a command, a local path copies a repository of yours into the workspace)", strings.TrimPrefix(origin, "file:"), key), Fix: fix})
	}
	if len(out) == 0 {
		out = append(out, Finding{OK: true, Name: "git protocols", Detail: "git's defaults: a URL a session wrote in .gitmodules runs no command and reads no local repository (ext never, file and remote helpers only for your own commands)"})
	}
	return out
}

// Allowlist reports what the allowlist proxy lets through under the conf.
func Allowlist(c *sandbox.Conf) Finding {
	return Finding{OK: true, Name: "allowlist", Detail: c.AllowlistSummary()}
}

// UpstreamProxy reports the launching environment's proxy (HTTPS_PROXY,
// HTTP_PROXY, NO_PROXY), which the launcher's allowlist and credential
// proxies go through; used says whether either runs under the conf. The
// credentials in the variables are never shown.
func UpstreamProxy(env launchenv.Env, used bool) Finding {
	s, err := upstreamproxy.FromEnviron(env)
	switch {
	case err != nil && used:
		return Finding{Name: "upstream proxy", Detail: err.Error(), Fix: "set the variable to http://[USER:PASSWORD@]HOST:PORT, or unset it"}
	case err != nil:
		return Finding{OK: true, Name: "upstream proxy", Detail: "not used (network = open, credentials = inside): " + err.Error()}
	case !used:
		return Finding{OK: true, Name: "upstream proxy", Detail: "not used (network = open, credentials = inside): the sandbox uses the container's network and its proxy variables as they are"}
	}
	return Finding{OK: true, Name: "upstream proxy", Detail: s.Describe()}
}

// UnixSocketMode says which unix sockets the sandbox may reach on this
// kernel (ADR 0024): its own by path always; abstract names its own either
// by Landlock's scope, or, without it, only in network = allowlist.
func UnixSocketMode() string {
	const own = "the sandbox's own, by path (the warden lets a connect or send reach only socket files the sandbox bound)"
	abi, why := warden.Landlock()
	if abi >= warden.ScopeABI {
		return fmt.Sprintf("%s; abstract names its own by Landlock's scope (ABI %d)", own, abi)
	}
	return fmt.Sprintf("%s; abstract names only with network = allowlist, refused with network = open: scoping them needs Landlock ABI %d (Linux 6.12), and %s", own, warden.ScopeABI, why)
}

// KernelLockMode says whether the kernel holds the sandbox's files beside
// the warden (ADR 0040): with Landlock ABI 3, calls that land on the
// sandbox's own file systems with nothing from outside mounted writably
// beneath them go on in the kernel, which refuses them anywhere else;
// without it, the warden carries out every call.
func KernelLockMode() string {
	abi, why := warden.Landlock()
	if abi >= warden.LockABI {
		return fmt.Sprintf("Landlock ABI %d: the sandbox's own /dev, and /tmp and the others where nothing from outside is mounted writably beneath them, are locked by the kernel, and a call that lands there goes on in the kernel; the warden carries out the rest", abi)
	}
	return fmt.Sprintf("none: the warden carries out every call (at its cost in file-heavy work); the kernel's lock needs Landlock ABI %d (Linux 6.2), and %s", warden.LockABI, why)
}

// WorkspaceCase says whether the workspace's file system finds a name in
// another case (Docker Desktop's shares of a macOS or Windows folder, a
// casefold directory), and how that was found. It is no failure: the
// warden refuses every spelling of a protected name on any workspace
// (ADR 0033).
func WorkspaceCase(dir string) Finding {
	folds, how := foldname.Folds(dir)
	if folds {
		return Finding{OK: true, Name: "workspace case", Detail: fmt.Sprintf("%s folds case (%s): the warden refuses every spelling of a protected name", dir, how)}
	}
	return Finding{OK: true, Name: "workspace case", Detail: fmt.Sprintf("%s is not known to fold case (%s)", dir, how)}
}

// Forge reports whether the launch finds a credential for the forge of a
// forge line (ADR 0042), and where; never the credential. Without one the
// session reaches the forge without a credential: a failure, since the
// admin asked for one.
func Forge(name string, cred *forge.Credential, err error) Finding {
	if err != nil {
		return Finding{Name: "forge " + name, Detail: err.Error(),
			Fix: "give git a credential helper that answers for https://" + name + " (git credential fill), or remove the forge line"}
	}
	return Finding{OK: true, Name: "forge " + name, Detail: "credential from " + cred.Source + ", added outside to the sandbox's requests; it never enters"}
}
