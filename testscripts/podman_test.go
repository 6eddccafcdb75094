package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// The Podman group: the feature in dev containers the devcontainer CLI
// builds and starts with `--docker-path podman`, rootful (as root) and
// rootless (as podmanUser, a user with subordinate ID ranges). Its scripts
// are in podman/; .ci/run installs what they need. The base image is the
// Docker group's root, imported into each Podman's image store.

// podmanUser runs rootless Podman; the group makes it (with subordinate
// ID ranges) when it is missing.
const podmanUser = "claude-sandbox-podman"

// podmanConf is a containers.conf the group's Podman reads: rootful
// Podman's, and the rootless user's.
type podmanConf struct {
	// hostNetwork: the user's containers and builds take the host's
	// network (netns = "host"), where the user cannot open /dev/net/tun.
	hostNetwork bool
	// runtime is the OCI runtime that creates containers here
	// (podmanRuntime); empty, Podman's own choice, until it is chosen.
	runtime string
}

// text is the conf's text. Its rlimits: Podman (4.3.1) raises the open
// files and processes limits of a rootful container beyond the machine's
// own by default, which a machine whose root lacks CAP_SYS_RESOURCE (as
// CI's) cannot: `error setting rlimit type 7: operation not permitted`.
// Open files at the hard limit start; processes failed here above 32768
// (with a hard limit of 96367), so that is the cap.
func (c podmanConf) text() string {
	var nofile, nproc unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
	_ = unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
	n, p := min(nofile.Max, 1<<20), min(nproc.Max, 32768)
	text := fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n", n, n, p, p)
	if c.hostNetwork {
		text += "netns = \"host\"\n"
	}
	if c.runtime != "" {
		text += fmt.Sprintf("[engine]\nruntime = %q\n", c.runtime)
	}
	return text
}

// write writes the conf to path, readable by the rootless user.
func (c podmanConf) write(path string) error {
	return os.WriteFile(path, []byte(c.text()), 0o644)
}

// podmanRuntimes are the OCI runtimes the group tries, in Podman's order
// (Podman takes crun where it is installed).
var podmanRuntimes = []string{"crun", "runc"}

// podmanRuntime is the first of podmanRuntimes with which the Podman the
// command prefix runs (who: rootful or rootless) creates a container of
// image here. Debian's podman depends on `crun | runc`, so which one a
// machine has depends on what apt installed first; crun 1.8 refuses every
// container on a host whose cgroups are in hybrid mode ("cgroups in hybrid
// mode not supported, drop all controllers from cgroupv2"), where runc
// works.
func podmanRuntime(who string, engine []string, image string) (string, error) {
	var refused []string
	for _, rt := range podmanRuntimes {
		out, err := exec.Command(engine[0], append(engine[1:], "--runtime", rt, "run", "--rm", image, "true")...).CombinedOutput()
		if err == nil {
			if len(refused) > 0 {
				fmt.Fprintf(os.Stderr, "the Podman group: %s; %s Podman uses %s (runtime = %q)\n", strings.Join(refused, "; "), who, rt, rt)
			}
			return rt, nil
		}
		refused = append(refused, fmt.Sprintf("%s cannot create a container here: %s", rt, lastLines(out, 1)))
	}
	return "", fmt.Errorf("no OCI runtime creates a container for %s Podman here: %s", who, strings.Join(refused, "; "))
}

// podmanReason is empty when the Podman group can run here.
func podmanReason() string {
	if os.Geteuid() != 0 {
		return "it needs root (debootstrap, a user for rootless Podman)"
	}
	if why := missingTool("podman", "debootstrap", "npm", "newuidmap", "sudo", "flock"); why != "" {
		return why
	}
	if out, err := exec.Command("podman", "info", "--format", "{{.Host.OCIRuntime.Name}}").CombinedOutput(); err != nil {
		return fmt.Sprintf("podman does not work here: %s", lastLines(out, 1))
	}
	return ""
}

func TestPodman(t *testing.T) {
	lane(t)
	if why := podmanReason(); why != "" {
		cannotRun(t, "the Podman group (dev containers on Podman)", why)
		t.Skip(why)
	}
	start := time.Now()
	var engines [][]string
	var confDir string
	var err error
	// After the scripts: the images the builds left in each Podman's
	// store since the group started (untagged, the CLI's content stage,
	// vsc-ws-...), as the Docker group does. Podman refuses to remove an
	// image with children, and lists its intermediate images only with
	// -a: a few rounds remove the chain.
	t.Cleanup(func() {
		for _, engine := range engines {
			for range 3 {
				removeEngineImagesSince(engine, start, []string{"-a"})
			}
		}
		if confDir != "" {
			os.RemoveAll(confDir)
		}
		fmt.Fprintf(os.Stderr, "the Podman group took %s\n", time.Since(start).Round(time.Second))
	})
	// Not t.TempDir: the cleanup above runs Podman, after a TempDir is gone.
	confDir, err = os.MkdirTemp("", "claude-sandbox-podman-conf-")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(confDir, "containers.conf")
	var rootful podmanConf
	if err := rootful.write(conf); err != nil {
		t.Fatal(err)
	}
	os.Setenv("CONTAINERS_CONF", conf)
	u, err := rootlessUser()
	if err != nil {
		t.Fatal(err)
	}
	engines = [][]string{{"podman"}, u.prefix()}
	base, err := engineBase([]string{"podman"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engineBase(u.prefix()); err != nil {
		t.Fatal(err)
	}
	// Each Podman, its builds too, creates containers with a runtime that
	// works here, whichever apt installed.
	for _, p := range []struct {
		who    string
		engine []string
		conf   podmanConf
		path   string
	}{{"rootful", []string{"podman"}, rootful, conf}, {"rootless", u.prefix(), u.podmanConf, u.conf}} {
		if p.conf.runtime, err = podmanRuntime(p.who, p.engine, base); err != nil {
			t.Fatal(err)
		}
		if err := p.conf.write(p.path); err != nil {
			t.Fatal(err)
		}
	}
	g := newDevcontainerGroup(t, base)
	testscript.Run(t, testscript.Params{
		Dir:                 "podman",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			id, err := g.scriptEnv(env)
			if err != nil {
				return err
			}
			env.Setenv("CONTAINERS_CONF", conf)
			// A directory the rootless user owns (the script's own is
			// root's, 0700): its workspace, the CLI's data, the tools.
			rl, err := os.MkdirTemp("", "claude-sandbox-podman-")
			if err != nil {
				return err
			}
			env.Defer(func() {
				// The build lock is for rootful Podman's store; the rootless
				// user's has one script.
				g.withBuildLock(func() { podmanCleanup(nil, id) })
				podmanCleanup(u.prefix(), id)
				os.RemoveAll(rl)
			})
			env.Setenv("RL", rl)
			env.Setenv("RL_USER", u.name)
			// as-user CMD...: CMD as the rootless user, with what Podman
			// needs of the session no login made here.
			asUser := fmt.Sprintf("#!/bin/sh\ncd %q\nexec %s TMPDIR=%q \"$@\"\n", rl, strings.Join(u.prefixEnv(), " "), filepath.Join(rl, ".tmp"))
			if err := os.WriteFile(filepath.Join(env.WorkDir, "as-user"), []byte(asUser), 0o755); err != nil {
				return err
			}
			for _, dir := range []string{env.WorkDir, rl} {
				if err := g.dirs(dir, "root", u.name); err != nil {
					return err
				}
			}
			if out, err := exec.Command("chown", "-R", u.name+":", rl).CombinedOutput(); err != nil {
				return fmt.Errorf("chown: %v: %s", err, out)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"feature-stage":          featureStage(g.repo),
			"without-installs-after": withoutInstallsAfter,
		},
	})
}

// podmanAccount is the rootless user and what its Podman needs: its
// containers.conf, at conf.
type podmanAccount struct {
	name, uid, home, conf string
	podmanConf
}

// prefixEnv runs a command as the user, with the session variables Podman
// reads (no login session made them here).
func (u podmanAccount) prefixEnv() []string {
	return []string{"sudo", "-u", u.name, "-H", "env",
		"XDG_RUNTIME_DIR=/run/user/" + u.uid,
		"CONTAINERS_CONF=" + u.conf,
		"TMPDIR=/run/user/" + u.uid,
		"PATH=" + nodeDir() + "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
}

// nodeDir is the directory of the node this process finds, with a colon
// (empty when there is none): the devcontainer CLI runs as the rootless
// user with `#!/usr/bin/env node`, and a runner's node may live outside the
// system's directories.
func nodeDir() string {
	if node, err := exec.LookPath("node"); err == nil {
		return filepath.Dir(node) + ":"
	}
	return ""
}

func (u podmanAccount) prefix() []string { return append(u.prefixEnv(), "podman") }

// rootlessUser makes the rootless user, when missing, with subordinate ID
// ranges, its runtime directory, and Podman's overlay storage (Debian's
// Podman picks vfs, which copies every layer whole).
func rootlessUser() (podmanAccount, error) {
	if _, err := user.Lookup(podmanUser); err != nil {
		if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", podmanUser).CombinedOutput(); err != nil {
			return podmanAccount{}, fmt.Errorf("useradd: %v: %s", err, out)
		}
	}
	pu, err := user.Lookup(podmanUser)
	if err != nil {
		return podmanAccount{}, err
	}
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		data, _ := os.ReadFile(f)
		if !strings.Contains("\n"+string(data), "\n"+podmanUser+":") {
			flag := "--add-subuids"
			if strings.HasSuffix(f, "gid") {
				flag = "--add-subgids"
			}
			if out, err := exec.Command("usermod", flag, "300000-365535", podmanUser).CombinedOutput(); err != nil {
				return podmanAccount{}, fmt.Errorf("usermod %s: %v: %s", flag, err, out)
			}
		}
	}
	uid, _ := strconv.Atoi(pu.Uid)
	gid, _ := strconv.Atoi(pu.Gid)
	run := "/run/user/" + pu.Uid
	if err := os.MkdirAll(run, 0o700); err != nil {
		return podmanAccount{}, err
	}
	storage := filepath.Join(pu.HomeDir, ".config/containers/storage.conf")
	if err := os.MkdirAll(filepath.Dir(storage), 0o755); err != nil {
		return podmanAccount{}, err
	}
	if err := os.WriteFile(storage, []byte("[storage]\ndriver = \"overlay\"\n"), 0o644); err != nil {
		return podmanAccount{}, err
	}
	userConf := filepath.Join(pu.HomeDir, ".config/containers/claude-sandbox-test.conf")
	var userPodman podmanConf
	// Rootless Podman's default network (slirp4netns), for builds too,
	// needs /dev/net/tun, which some machines (as CI's) let only root open:
	// there the user's containers and builds take the host's network.
	if exec.Command("sudo", "-u", podmanUser, "sh", "-c", "exec 3<>/dev/net/tun").Run() != nil {
		fmt.Fprintf(os.Stderr, "the Podman group: %s cannot open /dev/net/tun, so rootless Podman uses the host's network (netns = \"host\")\n", podmanUser)
		userPodman.hostNetwork = true
	}
	if err := userPodman.write(userConf); err != nil {
		return podmanAccount{}, err
	}
	for _, p := range []string{run, filepath.Join(pu.HomeDir, ".config")} {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), p).CombinedOutput(); err != nil {
			return podmanAccount{}, fmt.Errorf("chown: %v: %s", err, out)
		}
	}
	return podmanAccount{name: podmanUser, uid: pu.Uid, home: pu.HomeDir, conf: userConf, podmanConf: userPodman}, nil
}

// podmanCleanup removes the containers labelled with id, in the Podman the
// prefix runs (nil: root's), and the images the CLI built for them.
func podmanCleanup(prefix []string, id string) {
	if prefix == nil {
		prefix = []string{"podman"}
	}
	pod := func(args ...string) *exec.Cmd { return exec.Command(prefix[0], append(prefix[1:], args...)...) }
	out, _ := pod("ps", "-aq", "--filter", "label=claude-sandbox-test="+id).Output()
	for _, c := range strings.Fields(string(out)) {
		image, _ := pod("inspect", "-f", "{{.ImageName}}", c).Output()
		_ = pod("rm", "-f", "-v", c).Run()
		if name := strings.TrimSpace(string(image)); strings.Contains(name, "vsc-") {
			_ = pod("rmi", "-f", name, strings.TrimSuffix(name, "-uid")).Run()
		}
	}
}
