package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/claude-sandbox/claude-sandbox/features/packaging"
)

// missingTool says which of tools is not installed, if one is not: a
// reason a group cannot run here.
func missingTool(tools ...string) string {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed"
		}
	}
	return ""
}

// devcontainerGroup is what the Docker and the Podman group share and give
// each of their scripts: the base image, the pinned devcontainer CLI, the
// repository, the test binary, whose programs the containers run, and the
// lock their builds and image removals take in turn ($BUILD_LOCK, for
// flock). The CLI tags the features' content of every dev container it
// builds alike (dev_container_feature_content_temp) and builds FROM that
// tag, so two builds at once in one engine could each install the other's
// features; and Podman 4.3.1 fails a build while another build or a
// removal changes its store ("layer not known").
type devcontainerGroup struct{ base, cli, repo, self, lock string }

// newDevcontainerGroup installs the CLI if it is missing and finds the
// rest; base is the group's base image.
func newDevcontainerGroup(t *testing.T, base string) devcontainerGroup {
	t.Helper()
	cli, err := packaging.DevcontainerCLI(packaging.TestCLICache)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return devcontainerGroup{base: base, cli: cli, repo: repo, self: self, lock: filepath.Join(t.TempDir(), "build.lock")}
}

// withBuildLock runs f holding the group's lock, as flock(1) does; without
// the lock, f runs anyway (a cleanup is better late than never).
func (g devcontainerGroup) withBuildLock(f func()) {
	if fd, err := unix.Open(g.lock, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644); err == nil {
		defer unix.Close(fd)
		_ = unix.Flock(fd, unix.LOCK_EX)
	}
	f()
}

// scriptEnv sets the variables a dev container script reads: the base
// image, the devcontainer CLI, the repository, go's own settings (for go
// and mage, as the test's own go runs them), the CLI's cache
// ($XDG_CACHE_HOME, made by dirs), the build lock, a label for everything the script
// makes so its cleanup finds it ($TEST_ID, returned), and the port of the
// server inside that the allowlist lets through ($ALLOWED_PORT).
func (g devcontainerGroup) scriptEnv(env *testscript.Env) (id string, err error) {
	env.Setenv("BASE_IMAGE", g.base)
	env.Setenv("DEVCONTAINER", g.cli)
	env.Setenv("REPO", g.repo)
	env.Setenv("BUILD_LOCK", g.lock)
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
		if out, err := exec.Command("go", "env", name).Output(); err == nil {
			env.Setenv(name, strings.TrimSpace(string(out)))
		}
	}
	env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "cache"))
	id = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	env.Setenv("TEST_ID", id)
	port, err := freeLoopbackPort()
	if err != nil {
		return "", err
	}
	env.Setenv("ALLOWED_PORT", strconv.Itoa(port))
	return id, nil
}

// dirs makes in dir what the devcontainer CLI, run there by
// each of users with TMPDIR dir/.tmp and XDG_CACHE_HOME dir/cache, and the
// containers need:
//   - the CLI's data for each user, with an empty control manifest: the
//     CLI fetches a list of disallowed features from containers.dev unless
//     its copy is younger than five minutes (the scripts take less);
//   - its empty-folder, the build context of the features' image, which
//     the CLI (0.89.0) starts a build with without waiting for its own
//     mkdir of it (a busy machine made the build find it missing);
//   - the pinned CLI in the cache, where mage's targets look;
//   - the test's own commands in tools/, for the containers to run.
func (g devcontainerGroup) dirs(dir string, users ...string) error {
	for _, who := range users {
		data := filepath.Join(dir, ".tmp", "devcontainercli-"+who)
		if err := os.MkdirAll(filepath.Join(data, "empty-folder"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(data, "control-manifest.json"), []byte(`{"disallowedFeatures": [], "featureAdvisories": []}`+"\n"), 0o644); err != nil {
			return err
		}
	}
	for _, sub := range []string{"tools", "cache/claude-sandbox"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	if err := os.Symlink(packaging.TestCLICache, filepath.Join(dir, "cache/claude-sandbox/devcontainer-cli")); err != nil {
		return err
	}
	for _, name := range []string{"standin-api", "redteam-verify", "serve"} {
		if err := copyFile(g.self, filepath.Join(dir, "tools", name)); err != nil {
			return err
		}
	}
	return nil
}
