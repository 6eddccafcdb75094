package testscripts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// The Docker group: the feature in real dev containers, built and started
// by the real devcontainer CLI on a real Docker engine, from base images
// made here (no container registry is reachable). Its scripts are in
// docker/; .ci/run installs and starts what they need.

// dockerClaudeVersion is the Claude Code the base image holds as an npm
// global install, as Anthropic's claude-code feature (which the feature
// installs after) leaves it: the feature's install takes it from there, so
// no build reaches a download host the machine cannot.
// features/test/claude-sandbox/scenarios.json pins the same version.
const dockerClaudeVersion = "2.1.332"

// dockerBaseRecipe is how the base image is made; its hash names the image,
// so a changed recipe makes a new one and an unchanged one is reused.
const dockerBaseRecipe = `set -e
R=$1
debootstrap --variant=minbase --include=ca-certificates,git,curl,sudo,procps bookworm "$R" http://deb.debian.org/debian
chroot "$R" useradd -m -u 1000 -s /bin/bash vscode
echo 'vscode ALL=(ALL) NOPASSWD:ALL' > "$R/etc/sudoers.d/vscode"
chmod 440 "$R/etc/sudoers.d/vscode"
# This machine's extra certificate authorities, for npm inside.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/"
	chroot "$R" update-ca-certificates >/dev/null
fi
mkdir -p "$R/usr/local/lib/node_modules/@anthropic-ai"
cp -a "$CLAUDE_NPM/node_modules/@anthropic-ai/claude-code" "$R/usr/local/lib/node_modules/@anthropic-ai/"
ln -s ../lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe "$R/usr/local/bin/claude"
# As Debian's own images: no package lists, no downloaded packages.
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb
`

// dockerReason is empty when the Docker group can run here.
func dockerReason() string {
	if os.Geteuid() != 0 {
		return "it needs root (debootstrap, the Docker socket)"
	}
	if why := missingTool("docker", "debootstrap", "npm", "flock"); why != "" {
		return why
	}
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return fmt.Sprintf("the Docker engine does not answer: %s", lastLines(out, 1))
	}
	return ""
}

func TestDocker(t *testing.T) {
	lane(t)
	if why := dockerReason(); why != "" {
		cannotRun(t, "the Docker group (real dev containers)", why)
		t.Skip(why)
	}
	start := time.Now()
	// After the scripts, which run in parallel once this function returns.
	t.Cleanup(func() {
		// Not per script: the scripts run in parallel, and these
		// images carry no mark of the script that made them.
		// Children before their parents: the content stage is the
		// parent of untagged images of the builds that copied from it.
		removeImagesSince(start, featuresTestImages)
		removeImagesSince(start, danglingImages)
		removeImagesSince(start, contentImages)
		removeImagesSince(start, danglingImages)
		fmt.Fprintf(os.Stderr, "the Docker group took %s\n", time.Since(start).Round(time.Second))
	})
	base, err := dockerBase()
	if err != nil {
		t.Fatal(err)
	}
	g := newDevcontainerGroup(t, base)
	testscript.Run(t, testscript.Params{
		Dir:                 "docker",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			id, err := g.scriptEnv(env)
			if err != nil {
				return err
			}
			env.Defer(func() { g.withBuildLock(func() { dockerCleanup(id) }) })
			// A registry on loopback for the publish path (the CLI speaks
			// plain HTTP to localhost, not to 127.0.0.1).
			reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
			env.Defer(reg.Close)
			env.Setenv("REGISTRY", fmt.Sprintf("localhost:%d", reg.Listener.Addr().(*net.TCPAddr).Port))
			return g.dirs(env.WorkDir, "root")
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"feature-stage":          featureStage(g.repo),
			"without-installs-after": withoutInstallsAfter,
		},
	})
}

// withoutInstallsAfter DIR removes installsAfter from the feature in DIR.
// The devcontainer CLI (0.89.0) fetches the metadata of every feature
// installsAfter names from its registry (ghcr.io) during up and features
// test, even for a local feature, and fails where that registry cannot be
// reached, as here: the scripts install a copy without it, as the feature's
// README tells users in restricted networks to.
func withoutInstallsAfter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: without-installs-after DIR")
	}
	path := filepath.Join(ts.MkAbs(args[0]), "devcontainer-feature.json")
	var meta map[string]json.RawMessage
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(path)), &meta))
	if _, ok := meta["installsAfter"]; !ok {
		ts.Fatalf("%s has no installsAfter", path)
	}
	delete(meta, "installsAfter")
	out, err := json.MarshalIndent(meta, "", "    ")
	ts.Check(err)
	ts.Check(os.WriteFile(path, append(out, '\n'), 0o644))
}

// dockerCleanup removes the containers labelled with id and the images the
// devcontainer CLI built for them (named after the workspace; the CLI
// builds IMAGE, then IMAGE-uid with the remote user's id).
func dockerCleanup(id string) {
	out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=claude-sandbox-test="+id).Output()
	for _, c := range strings.Fields(string(out)) {
		image, _ := exec.Command("docker", "inspect", "-f", "{{.Config.Image}}", c).Output()
		_ = exec.Command("docker", "rm", "-f", "-v", c).Run()
		if name := strings.TrimSpace(string(image)); strings.HasPrefix(name, "vsc-") {
			_ = exec.Command("docker", "rmi", "-f", name, strings.TrimSuffix(name, "-uid")).Run()
		}
	}
}

// The images a script or the group leaves: those `devcontainer features
// test` built (named vsc-NUMBER-...; it removes its containers itself),
// the CLI's stage of the features' content (built again under one name by
// every build), and the untagged ones the builds left.
var (
	featuresTestImages = []string{"--filter", "reference=vsc-*"}
	contentImages      = []string{"--filter", "reference=" + contentImage}
	danglingImages     = []string{"--filter", "dangling=true"}
)

const contentImage = "dev_container_feature_content_temp"

// removeImagesSince removes the images the filter selects that were made
// since started: older ones are not the test's.
func removeImagesSince(started time.Time, filter []string) {
	removeEngineImagesSince([]string{"docker"}, started, filter)
}

// removeEngineImagesSince is removeImagesSince in the engine the command
// prefix runs (Podman names local images localhost/NAME). Under Podman the
// images `devcontainer up` built for the workspace ws (vsc-ws-...) go too:
// only the Podman group makes them there.
func removeEngineImagesSince(engine []string, started time.Time, filter []string) {
	run := func(args ...string) *exec.Cmd { return exec.Command(engine[0], append(engine[1:], args...)...) }
	out, _ := run(append([]string{"images", "--format", "{{.ID}} {{.Repository}} {{.CreatedAt}}"}, filter...)...).Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) < 3 {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05 -0700 MST", f[2])
		if err != nil || at.Before(started.Truncate(time.Second)) {
			continue
		}
		repo := strings.TrimPrefix(f[1], "localhost/")
		if repo == "<none>" || repo == contentImage || featuresTestImage.MatchString(repo) || (engine[0] != "docker" && strings.HasPrefix(repo, "vsc-ws-")) {
			_ = run("rmi", "-f", f[0]).Run()
		}
	}
}

var featuresTestImage = regexp.MustCompile(`^vsc-[0-9]+-[0-9a-f]+-features(-uid)?$`)

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}

// dockerBase returns the Docker group's base image.
func dockerBase() (string, error) { return engineBase([]string{"docker"}) }

// baseImageName names the base image after its recipe, so a changed recipe
// makes a new one and an unchanged one is reused.
func baseImageName() string {
	sum := sha256.Sum256([]byte(dockerBaseRecipe + dockerClaudeVersion))
	return "claude-sandbox-test/bookworm:" + hex.EncodeToString(sum[:])[:12]
}

// baseCache is where the base image's root is kept as a tar, so that each
// engine (Docker, rootful and rootless Podman: each its own image store)
// imports the same root without a debootstrap of its own.
const baseCache = "/var/cache/claude-sandbox-test"

// engineBase returns the base image's name in the engine the command
// prefix runs (docker, podman, or podman as another user), importing it
// first unless an image of the same recipe is there. A lock keeps two runs
// from making it at once.
func engineBase(engine []string) (string, error) {
	image := baseImageName()
	inspect := func() bool {
		return exec.Command(engine[0], append(engine[1:], "image", "inspect", image)...).Run() == nil
	}
	if inspect() {
		return image, nil
	}
	if err := os.MkdirAll(baseCache, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(baseCache, "docker-base.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	if inspect() {
		return image, nil
	}
	tarball := filepath.Join(baseCache, strings.ReplaceAll(strings.TrimPrefix(image, "claude-sandbox-test/"), ":", "-")+".tar")
	if _, err := os.Stat(tarball); err != nil {
		if err := makeBaseRoot(image, tarball); err != nil {
			return "", err
		}
	}
	f, err := os.Open(tarball)
	if err != nil {
		return "", err
	}
	defer f.Close()
	imp := exec.Command(engine[0], append(engine[1:], "import",
		"--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--change", `CMD ["/bin/bash"]`, "-", image)...)
	imp.Stdin = f
	if out, err := imp.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s import: %v: %s", strings.Join(engine, " "), err, lastLines(out, 3))
	}
	return image, nil
}

// makeBaseRoot makes the base image's root with debootstrap and writes it
// to tarball (through a temporary file, so an interrupted run leaves none).
func makeBaseRoot(image, tarball string) error {
	fmt.Fprintf(os.Stderr, "making the base image %s with debootstrap (once, about two minutes)\n", image)
	tmp, err := os.MkdirTemp("", "claude-sandbox-docker-base-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	npmDir := filepath.Join(tmp, "npm")
	if err := os.MkdirAll("/tmp/claude-sandbox-test-npm-cache", 0o755); err != nil {
		return err
	}
	npm := exec.Command("npm", "install", "--prefix", npmDir, "--no-save", "--no-audit", "--no-fund",
		"--cache", "/tmp/claude-sandbox-test-npm-cache", "@anthropic-ai/claude-code@"+dockerClaudeVersion)
	if out, err := npm.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install of Claude Code: %v: %s", err, lastLines(out, 3))
	}
	root := filepath.Join(tmp, "root")
	cmd := exec.Command("sh", "-c", dockerBaseRecipe, "sh", root)
	cmd.Env = append(os.Environ(), "CLAUDE_NPM="+npmDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("making the base image's root: %v: %s", err, lastLines(out, 3))
	}
	part := tarball + ".part"
	if out, err := exec.Command("tar", "-C", root, "-cf", part, ".").CombinedOutput(); err != nil {
		os.Remove(part)
		return fmt.Errorf("tar of the base image's root: %v: %s", err, lastLines(out, 3))
	}
	return os.Rename(part, tarball)
}
