package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// capabilities: the process holds no capability, so it cannot mount,
// bypass file permissions, change owners or load anything into the kernel.
func capabilities(f *facts) (string, error) {
	if f.statusErr != nil {
		return "", f.statusErr
	}
	held, err := nonZeroCaps(f.status, "CapEff", "CapPrm", "CapInh", "CapAmb")
	if err != nil {
		return "", err
	}
	if len(held) > 0 {
		return "", fmt.Errorf("capabilities held: %s", strings.Join(held, ", "))
	}
	return "CapEff, CapPrm, CapInh and CapAmb are zero", nil
}

// capabilityBoundingSet: the bounding set is empty, so no program the
// session runs (setuid, file capabilities) can gain a capability.
func capabilityBoundingSet(f *facts) (string, error) {
	if f.statusErr != nil {
		return "", f.statusErr
	}
	held, err := nonZeroCaps(f.status, "CapBnd")
	if err != nil {
		return "", err
	}
	if len(held) > 0 {
		return "", fmt.Errorf("the bounding set is not empty: %s", held[0])
	}
	return "CapBnd is zero", nil
}

func nonZeroCaps(status map[string]string, names ...string) ([]string, error) {
	var held []string
	for _, n := range names {
		v, ok := status[n]
		if !ok {
			return nil, fmt.Errorf("/proc/self/status has no %s line", n)
		}
		bits, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/self/status: %s %q does not parse", n, v)
		}
		if bits != 0 {
			held = append(held, n+"="+v)
		}
	}
	return held, nil
}

// noNewPrivileges: no_new_privs is set, so setuid programs (sudo, su) run
// without their privileges.
func noNewPrivileges(*facts) (string, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return "", fmt.Errorf("prctl(PR_GET_NO_NEW_PRIVS): %w", err)
	}
	if v != 1 {
		return "", errors.New("no_new_privs is not set: a setuid program would gain its privileges")
	}
	return "prctl(PR_GET_NO_NEW_PRIVS) is 1", nil
}

// seccompFilter: a seccomp filter is installed (the one whose rules the
// *-refused checks probe one by one).
func seccompFilter(f *facts) (string, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if err != nil {
		return "", fmt.Errorf("prctl(PR_GET_SECCOMP): %w", err)
	}
	if v != 2 {
		return "", fmt.Errorf("seccomp mode is %d, not 2 (filter): no syscall filter is installed", v)
	}
	return fmt.Sprintf("prctl(PR_GET_SECCOMP) is 2 (filter mode; %s filters)", f.status["Seccomp_filters"]), nil
}

// userNamespace: the process is in a user namespace that maps only its own
// user and group, not the host's full range (0 0 4294967295).
func userNamespace(*facts) (string, error) {
	var shown []string
	for _, name := range []string{"uid_map", "gid_map"} {
		b, err := os.ReadFile("/proc/self/" + name)
		if err != nil {
			return "", err
		}
		lines := idMapLines(string(b))
		if len(lines) != 1 || lines[0][2] != "1" {
			return "", fmt.Errorf("%s maps more than one id (%s): this is not the sandbox's user namespace", name, strings.Join(strings.Fields(string(b)), " "))
		}
		shown = append(shown, name+" "+strings.Join(lines[0], " "))
	}
	return strings.Join(shown, ", ") + ": only this user's own ids exist here", nil
}

// idMapLines splits /proc/PID/uid_map into its "inside outside count" lines.
func idMapLines(s string) [][]string {
	var out [][]string
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			out = append(out, f)
		}
	}
	return out
}

// pidNamespace: pid 1 is bwrap and every visible process descends from it,
// so no host process can be seen, signalled or traced, and none entered
// the sandbox from outside (such a process has no parent here).
func pidNamespace(f *facts) (string, error) {
	if f.procsErr != nil {
		return "", f.procsErr
	}
	parent := map[int]int{}
	comm := ""
	for _, p := range f.procs {
		parent[p.pid] = p.ppid
		if p.pid == 1 {
			comm = p.comm
		}
	}
	if comm != "bwrap" {
		return "", fmt.Errorf("pid 1 is %q, not bwrap: this is not the sandbox's PID namespace", comm)
	}
	for _, p := range f.procs {
		cur := p.pid
		for steps := 0; cur != 1 && steps <= len(f.procs); steps++ {
			cur = parent[cur]
		}
		if cur != 1 {
			return "", fmt.Errorf("process %d (%s) does not descend from pid 1: it entered from outside", p.pid, p.comm)
		}
	}
	return fmt.Sprintf("pid 1 is bwrap; %d processes visible, all started inside", len(f.procs)), nil
}

// pid1Environment: bwrap's pid 1 has an empty environment and no --setenv
// on its command line, so nothing of the launch's environment is readable
// from /proc/1.
func pid1Environment(*facts) (string, error) {
	env, err := os.ReadFile("/proc/1/environ")
	if errors.Is(err, os.ErrPermission) {
		// Landlock's domain, which init puts the sandbox in, keeps it from
		// reading a process outside the domain, as bwrap's pid 1 is.
		return "/proc/1 (bwrap's) cannot be read from inside: it is outside the sandbox's Landlock domain", nil
	}
	if err != nil {
		return "", err
	}
	if len(env) > 0 {
		return "", fmt.Errorf("/proc/1/environ holds %d variables (%s)", len(splitNul(env)), strings.Join(envlist.Names(splitNul(env)), ", "))
	}
	cmdline, err := os.ReadFile("/proc/1/cmdline")
	if err != nil {
		return "", err
	}
	if bytes.Contains(cmdline, []byte("--setenv\x00")) {
		return "", errors.New("/proc/1/cmdline carries --setenv: the sandbox's environment is readable there")
	}
	return "/proc/1/environ is empty and /proc/1/cmdline sets no variable", nil
}

// launchEnvironment: the environment bwrap gave the first process is
// exactly the policy's (the allow-list and what the launcher sets, plus
// bwrap's PWD): nothing else of the launching environment entered.
func launchEnvironment(f *facts) (string, error) {
	if f.launchErr != nil {
		return "", f.launchErr
	}
	planned := planEnv(f.launch.plan)
	got := envlist.Map(f.startEnv)
	var extra, missing, differ []string
	for name, value := range got {
		want, ok := planned[name]
		switch {
		case name == "PWD":
		case !ok:
			extra = append(extra, name)
		case want != value:
			differ = append(differ, name)
		}
	}
	for name := range planned {
		if _, ok := got[name]; !ok {
			missing = append(missing, name)
		}
	}
	var problems []string
	for _, p := range []struct {
		names []string
		what  string
	}{{extra, "entered without being allowed"}, {missing, "missing"}, {differ, "differ from the policy's values"}} {
		if len(p.names) > 0 {
			sort.Strings(p.names)
			problems = append(problems, fmt.Sprintf("%s: %s", p.what, strings.Join(p.names, ", ")))
		}
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("the environment of pid %d is not the policy's; %s", f.firstPID, strings.Join(problems, "; "))
	}
	return fmt.Sprintf("pid %d started with exactly the policy's %d variables (and bwrap's PWD)", f.firstPID, len(planned)), nil
}

// secretVariables: no variable whose name marks a credential is set, in
// the sandbox's starting environment or this process's, except those that
// enter by design (ANTHROPIC_*, CLAUDE_CODE_*, the launcher's session token)
// or by the conf's pass-env.
func secretVariables(f *facts) (string, error) {
	if err := firstError(f.confErr, f.startEnvErr); err != nil {
		return "", err
	}
	passEnv := map[string]bool{}
	for _, l := range f.conf.PassEnv {
		passEnv[l.Value] = true
	}
	var allowed, leaked []string
	seen := map[string]bool{}
	proxied := f.sessionToken() != ""
	start := envlist.Map(f.startEnv)
	for _, name := range envlist.Names(append(append([]string{}, f.startEnv...), f.environ...)) {
		if seen[name] || !looksSecret(name) {
			continue
		}
		seen[name] = true
		switch {
		case name == "ANTHROPIC_AUTH_TOKEN" && proxied:
			allowed = append(allowed, name+" (the launcher's session token)")
		case start[name] == sandbox.ForgePlaceholder:
			allowed = append(allowed, name+" (the forge placeholder: the credential stays outside, ADR 0042)")
		case sandbox.PassedByDefault(name):
			allowed = append(allowed, name+" (passed by design)")
		case passEnv[name]:
			allowed = append(allowed, fmt.Sprintf("%s (pass-env in %s)", name, f.conf.Source))
		default:
			leaked = append(leaked, name)
		}
	}
	if len(leaked) > 0 {
		return "", fmt.Errorf("set, and not allowed by the policy: %s", strings.Join(leaked, ", "))
	}
	if len(allowed) == 0 {
		return "no variable named like a credential", nil
	}
	return "only these, allowed: " + strings.Join(allowed, ", "), nil
}

// secretSubstrings and secretWords mark a variable name as a credential's.
// Words are matched whole (between underscores) so that, say, KEYBOARD or
// GIT_AUTHOR_NAME do not count.
var (
	secretSubstrings = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "APIKEY"}
	secretWords      = []string{"KEY", "KEYS", "AUTH", "PASS", "PAT", "COOKIE"}
)

func looksSecret(name string) bool {
	upper := strings.ToUpper(name)
	for _, s := range secretSubstrings {
		if strings.Contains(upper, s) {
			return true
		}
	}
	for _, w := range strings.Split(upper, "_") {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
	}
	return false
}

// inheritedDescriptors: this process started with nothing open but
// stdin, stdout and stderr, so no socket, directory or secret file opened
// outside reached it (a directory descriptor from outside would escape
// every mount rule).
func inheritedDescriptors(f *facts) (string, error) {
	if f.fdsErr != nil {
		return "", f.fdsErr
	}
	var extra, std []string
	for _, d := range f.fds {
		switch {
		case !d.inherited:
		case d.fd > 2:
			extra = append(extra, fmt.Sprintf("%d (%s)", d.fd, d.target))
		default:
			std = append(std, fmt.Sprint(d.fd))
		}
	}
	if len(extra) > 0 {
		return "", fmt.Errorf("inherited descriptors above stderr: %s", strings.Join(extra, ", "))
	}
	if len(std) == 0 {
		return "no descriptor inherited", nil
	}
	return fmt.Sprintf("only %s inherited", strings.Join(std, ", ")), nil
}
