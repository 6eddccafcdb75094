package installer

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// NPMPackage is the package the npm source installs.
const NPMPackage = "@anthropic-ai/claude-code"

// source is a real Claude Code binary found on this machine.
type source struct {
	path    string // host path (already under Root)
	from    string // where it came from, for the summary
	version string // "" until asked
}

// findClaude returns the first usable real binary: the one named, else an
// earlier install of ours, a native install, an npm global install, a
// system copy, then what Anthropic's native installer fetches, and last the
// npm package (downloaded into a cache).
func (in *run) findClaude() (*source, error) {
	o := in.opts
	if o.ClaudeBinary != "" {
		s := &source{path: o.ClaudeBinary, from: "--claude-binary"}
		if err := in.acceptable(s); err != nil {
			return nil, fmt.Errorf("--claude-binary %s: %w", o.ClaudeBinary, err)
		}
		return s, nil
	}
	var tried []string
	accept := func(c *source) bool {
		err := in.acceptable(c)
		if err != nil && !errors.Is(err, errAbsent) {
			tried = append(tried, fmt.Sprintf("%s (%s): %v", c.path, c.from, err))
		}
		return err == nil
	}
	for _, c := range in.candidates() {
		if accept(c) {
			return c, nil
		}
	}
	if g := in.npmGlobal(); g != nil && accept(g) {
		return g, nil
	}
	if url := in.nativeInstallerURL(); url == "" {
		tried = append(tried, "Anthropic's native installer: not used for a --root install")
	} else if s, err := in.fromNativeInstaller(url); err == nil {
		return s, nil
	} else {
		tried = append(tried, fmt.Sprintf("Anthropic's native installer (%s): %v", url, err))
	}
	if in.opts.Root != "/" {
		tried = append(tried, "npm package: not used for a --root install")
	} else if s, err := in.fromNPM(); err == nil {
		return s, nil
	} else {
		tried = append(tried, fmt.Sprintf("npm package %s: %v", NPMPackage, err))
	}
	return nil, fmt.Errorf("no usable Claude Code binary; tried: %s. Name one with --claude-binary", strings.Join(tried, "; "))
}

func (in *run) candidates() []*source {
	r := in.path
	var out []*source
	add := func(p, from string) {
		out = append(out, &source{path: p, from: from})
	}
	add(r(layout.RealBinary), "an earlier install")
	for _, home := range in.homes() {
		if p, ok := in.resolve(in.path(filepath.Join(home, ".local/bin/claude"))); ok {
			add(p, "the native install in "+home)
		}
		out = append(out, in.legacySources(home)...)
	}
	for _, prefix := range []string{"/usr/local", "/usr"} {
		add(r(filepath.Join(prefix, "lib/node_modules", NPMPackage, "bin/claude.exe")), "the npm global install in "+prefix)
	}
	for _, p := range []string{"/usr/bin/claude", "/usr/local/bin/claude"} {
		if rp, ok := in.resolve(r(p)); ok {
			add(rp, p)
		}
	}
	return out
}

// npmGlobal is the npm global install under npm's own prefix, when that is
// not one of the usual ones. Asked last: starting npm takes a while.
func (in *run) npmGlobal() *source {
	if in.opts.Root != "/" {
		return nil
	}
	outb, err := exec.Command("npm", "prefix", "-g").Output()
	if err != nil {
		return nil
	}
	prefix := strings.TrimSpace(string(outb))
	if prefix == "/usr" || prefix == "/usr/local" {
		return nil
	}
	return &source{path: filepath.Join(prefix, "lib/node_modules", NPMPackage, "bin/claude.exe"), from: "the npm global install in " + prefix}
}

var errAbsent = errors.New("does not exist")

// acceptable checks that s is an executable ELF for this machine, not our
// own launcher, and matches the pinned version and checksum.
func (in *run) acceptable(s *source) error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return errAbsent
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	if self, err := os.Stat(in.opts.Self); err == nil && (os.SameFile(fi, self) || sameContentSized(s.path, in.opts.Self, fi.Size(), self.Size())) {
		return errors.New("this is claude-sandbox itself, not Claude Code")
	}
	f, err := elf.Open(s.path)
	if err != nil {
		return errors.New("not an ELF executable")
	}
	machine := f.Machine
	f.Close()
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]; machine != want {
		return fmt.Errorf("built for %s, this machine needs %s", machine, want)
	}
	if in.opts.ClaudeVersion != "" {
		v, err := version(s.path)
		if err != nil {
			return err
		}
		if v != in.opts.ClaudeVersion {
			return fmt.Errorf("version %s, not the pinned %s", v, in.opts.ClaudeVersion)
		}
		s.version = v
	}
	if in.opts.ClaudeSHA256 != "" {
		sum, err := fileSHA256(s.path)
		if err != nil {
			return err
		}
		if !strings.EqualFold(sum, in.opts.ClaudeSHA256) {
			return fmt.Errorf("sha256 %s, not the expected %s", sum, in.opts.ClaudeSHA256)
		}
	}
	return nil
}

func sameContentSized(a, b string, sa, sb int64) bool {
	return sa == sb && sameContent(a, b)
}

var versionRE = regexp.MustCompile(`^(\d+\.\d+\.\d+\S*) \(Claude Code\)`)

// version runs `BINARY --version` (its fast path: nothing else starts).
func version(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"DISABLE_AUTOUPDATER=1", "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("`%s --version` failed: %w", path, err)
	}
	m := versionRE.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return "", fmt.Errorf("`%s --version` printed %q, not a Claude Code version", path, strings.TrimSpace(string(out)))
	}
	return m[1], nil
}

// planVersionRecord records the real binary's version with the identity
// of the installed file, so that `claude --version` is answered without
// starting it (host.RecordedVersion); a record that still describes the
// binary is left as it is.
func (in *run) planVersionRecord() {
	record, real := in.path(layout.VersionRecord), in.path(layout.RealBinary)
	if _, ok := host.RecordedVersion(record, real); ok {
		return
	}
	in.add("wrote "+layout.VersionRecord+" (the real Claude Code's version, which `claude --version` prints without starting it)", "", func() error {
		v, err := version(real)
		if err != nil {
			return err
		}
		data, err := host.VersionRecordFor(v, real)
		if err != nil {
			return err
		}
		return writeAtomic(record, data, 0o644)
	})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// NativeInstallerURL is Anthropic's official installer script.
const NativeInstallerURL = "https://claude.ai/install.sh"

// nativeInstallerURL is the script to run, or "" when none is to be run: a
// --root install uses one only when named.
func (in *run) nativeInstallerURL() string {
	switch {
	case in.opts.NativeInstaller == "none":
		return ""
	case in.opts.NativeInstaller != "":
		return in.opts.NativeInstaller
	case in.opts.Root == "/":
		return NativeInstallerURL
	}
	return ""
}

// fromNativeInstaller downloads Anthropic's installer script and runs it
// with a private HOME under /var/cache, so it changes no real home and no rc
// file; the binary it leaves there is the source.
func (in *run) fromNativeInstaller(url string) (*source, error) {
	from := "Anthropic's native installer"
	if in.opts.DryRun {
		return &source{path: url, from: from + " (to be run; the npm package if it fails)"}, nil
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	script, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	home := in.path(layout.NativeHomeCache)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	scriptPath := filepath.Join(home, "install.sh")
	if err := os.WriteFile(scriptPath, script, 0o755); err != nil {
		return nil, err
	}
	args := []string{scriptPath}
	if in.opts.ClaudeVersion != "" {
		args = append(args, in.opts.ClaudeVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Env = append(withoutHome(os.Environ()), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the script failed: %w: %s", err, lastLine(out))
	}
	bin, err := filepath.EvalSymlinks(filepath.Join(home, ".local/bin/claude"))
	if err != nil {
		return nil, fmt.Errorf("the script left no ~/.local/bin/claude: %v", errors.Unwrap(err))
	}
	s := &source{path: bin, from: from}
	if err := in.acceptable(s); err != nil {
		return nil, err
	}
	return s, nil
}

func withoutHome(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return out
}

// fromNPM installs the npm package (the pinned version, else the latest)
// into a cache under /var/cache and returns its binary.
func (in *run) fromNPM() (*source, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, errors.New("npm is not installed")
	}
	ver := in.opts.ClaudeVersion
	if ver == "" {
		ver = "latest"
	}
	cache := in.path(filepath.Join(layout.NPMCache, ver))
	binaries := []string{
		filepath.Join(cache, "node_modules", NPMPackage, "bin/claude.exe"),
		filepath.Join(cache, "node_modules", npmPlatformPackage(), "claude"),
	}
	if ver == "latest" || !in.cached(binaries) {
		if in.opts.DryRun {
			return &source{path: binaries[0], from: fmt.Sprintf("the npm package %s@%s (to be downloaded)", NPMPackage, ver)}, nil
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return nil, err
		}
		cmd := exec.Command(npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", cache, NPMPackage+"@"+ver)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm install failed: %w: %s", err, lastLine(out))
		}
	}
	for _, b := range binaries {
		s := &source{path: b, from: fmt.Sprintf("the npm package %s@%s", NPMPackage, ver)}
		if err := in.acceptable(s); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("the npm package has no usable binary under %s", cache)
}

// npmPlatformPackage is the npm package that holds this machine's binary.
func npmPlatformPackage() string {
	return NPMPackage + "-linux-" + map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
}

func (in *run) cached(binaries []string) bool {
	for _, b := range binaries {
		if _, err := os.Stat(b); err == nil {
			return true
		}
	}
	return false
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// resolve follows symlinks as the target system would see them: absolute
// link targets are taken under Root. It reports false when the path does
// not exist or leads to our own launcher.
func (in *run) resolve(p string) (string, bool) {
	for i := 0; i < 40; i++ {
		fi, err := os.Lstat(p)
		if err != nil {
			return "", false
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, p != in.path(layout.LauncherBinary)
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", false
		}
		if filepath.IsAbs(target) {
			p = in.path(target)
		} else {
			p = filepath.Join(filepath.Dir(p), target)
		}
	}
	return "", false
}
