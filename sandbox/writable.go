package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
)

// What allow-write and allow-write-executable may bind read-write (ADR 0013).
// A path refused as defeating the sandbox is refused under both keys. A
// path refused as feeding code out (what lives there runs outside the
// sandbox later: a home's toolchains and caches, installed software, a
// repository or an environment) is accepted under allow-write-executable,
// the admin's written acknowledgement of that risk.

// writeCheck holds what an allow-write line is checked against.
type writeCheck struct {
	ws, home    string
	passwdHomes []string          // the homes the passwd database names
	homes       []string          // the other homes, links resolved; filled on first use
	protect     []protectedPath   // workspace-relative protected paths
	product     map[string]string // the product's files, and what each is
	path        []string          // append-path directories
	caches      []Line            // sandbox-cache lines
	guards      []string          // the user's guards, links resolved; filled on first use
}

// check returns the path to bind for one allow-write (executable false) or
// allow-write-executable (true) line, or why it is refused.
func (w *writeCheck) check(p string, executable bool) (string, error) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("cannot be used: %v", errors.Unwrap(err))
	}
	why := w.defeats(p, resolved) // every reason, the most basic first
	if len(why) == 0 && !executable {
		if feeds := w.feedsCodeOut(resolved); feeds != "" {
			fix := "accept the risk with allow-write-executable = " + p
			if rel, ok := strings.CutPrefix(resolved, w.home+"/"); ok {
				fix = fmt.Sprintf("for a cache only the sandbox uses write sandbox-cache = %s, or %s", rel, fix)
			}
			return "", fmt.Errorf("would feed code out of the sandbox: it %s%s; %s", feeds, resolvedNote(p, resolved), fix)
		}
	}
	if len(why) == 0 {
		return resolved, nil
	}
	return "", fmt.Errorf("would defeat the sandbox: it %s%s", why[0], resolvedNote(p, resolved))
}

func resolvedNote(p, resolved string) string {
	if resolved == p {
		return ""
	}
	return fmt.Sprintf(" (it resolves to %s)", resolved)
}

// defeats lists why binding resolved (written as p) read-write would defeat
// the sandbox, whatever the admin accepts, the most basic first.
func (w *writeCheck) defeats(p, resolved string) []string {
	why := w.defeatsPlaces(resolved)
	why = append(why, w.defeatsGuards(p, resolved)...)
	return append(why, w.defeatsHeld(resolved)...)
}

// defeatsPlaces: the system, a home, the workspace, or what holds one.
func (w *writeCheck) defeatsPlaces(resolved string) []string {
	var why []string
	if resolved == "/" || contains(notWorkspaces, resolved) || underAny(resolved, systemDirs) {
		why = append(why, "is a system directory")
	}
	if subtree.Of(resolved).Contains(w.home) {
		why = append(why, "is your home or contains it")
	}
	for _, h := range append([]string{w.homeOf(resolved)}, w.otherHomes()...) {
		if h != "" && h != w.home && subtree.Of(resolved).Contains(h) {
			why = append(why, fmt.Sprintf("is the home %s or contains it", h))
			break
		}
	}
	if subtree.Of(resolved).Contains(w.ws) {
		why = append(why, "is the workspace or contains it")
	}
	return why
}

// defeatsGuards: what decides how a user's next shell, login or Claude
// session starts.
func (w *writeCheck) defeatsGuards(p, resolved string) []string {
	var why []string
	for _, g := range w.userGuards() {
		if subtree.Of(resolved).Contains(g) || subtree.Of(g).Contains(resolved) {
			why = append(why, fmt.Sprintf("exposes %s, which decides how your next shell, login or Claude session starts; no key makes it writable", g))
		}
	}
	for _, q := range []string{filepath.Clean(p), resolved} {
		if g := w.otherGuard(q); g != "" {
			why = append(why, fmt.Sprintf("exposes %s, which decides how the next shell, login or Claude session of its user starts; no key makes it writable", g))
		}
	}
	return why
}

// defeatsHeld: what the policy holds itself, or binds over the path.
func (w *writeCheck) defeatsHeld(resolved string) []string {
	var why []string
	for _, prot := range w.protect {
		if pp := filepath.Join(w.ws, strings.TrimSuffix(prot.path, "/")); subtree.Of(pp).Contains(resolved) || subtree.Of(resolved).Contains(pp) {
			why = append(why, fmt.Sprintf("is or holds the protected %s", pp))
		}
	}
	for _, sc := range w.caches {
		if d := filepath.Join(w.home, strings.TrimSuffix(sc.Value, "/")); subtree.Of(d).Contains(resolved) || subtree.Of(resolved).Contains(d) {
			why = append(why, fmt.Sprintf("is or holds ~/%s, which sandbox-cache (line %d) gives the sandbox its own directory for", sc.Value, sc.Line))
		}
	}
	files := make([]string, 0, len(w.product))
	for file := range w.product {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		if subtree.Of(resolved).Contains(file) {
			why = append(why, fmt.Sprintf("holds %s, %s", file, w.product[file]))
		}
	}
	if subtree.Of(w.ws).Contains(resolved) && resolved != w.ws {
		// The workspace's own mount and its protections lie over it.
		why = append(why, "is inside the workspace, which the sandbox writes already")
	}
	return why
}

// userGuards are the user's home guards and rc files, each as written and,
// when it is a link, as it resolves: a dotfiles checkout links them
// elsewhere, and writing the link's target is writing them.
func (w *writeCheck) userGuards() []string {
	if w.guards != nil {
		return w.guards
	}
	w.guards = []string{}
	add := func(p string) {
		w.guards = append(w.guards, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			w.guards = append(w.guards, r)
		}
	}
	for _, g := range homeGuards {
		add(filepath.Join(w.home, g))
	}
	entries, _ := os.ReadDir(w.home)
	for _, e := range entries {
		p := filepath.Join(w.home, e.Name())
		switch {
		case e.Type().IsRegular():
			add(p)
		case e.Type()&os.ModeSymlink != 0:
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				add(p)
			}
		}
	}
	return w.guards
}

// otherGuard returns the guard of another home that p is, holds or lies
// in, or "": its guard directories, and the files directly in it.
func (w *writeCheck) otherGuard(p string) string {
	h := w.homeOf(p)
	if h == "" || h == w.home {
		return ""
	}
	for _, g := range homeGuards {
		if hg := filepath.Join(h, g); subtree.Of(p).Contains(hg) || subtree.Of(hg).Contains(p) {
			return hg
		}
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && filepath.Dir(p) == h {
		return p
	}
	return ""
}

// homeOf returns the home directory p is in, or "": the user's, one the
// passwd database names, /root, or a directory directly in /home.
func (w *writeCheck) homeOf(p string) string {
	best := ""
	for _, h := range append([]string{w.home, "/root"}, w.otherHomes()...) {
		if subtree.Of(h).Contains(p) && len(h) > len(best) {
			best = h
		}
	}
	if best == "" {
		if rest, ok := strings.CutPrefix(p, "/home/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			best = "/home/" + first
		}
	}
	return best
}

// feedsCodeOut says why what lives at resolved runs outside the sandbox
// later, or "" when nothing known does.
func (w *writeCheck) feedsCodeOut(resolved string) string {
	switch h := w.homeOf(resolved); {
	case h == w.home:
		return fmt.Sprintf("is in your home %s, whose toolchains, package caches and rc files run outside the sandbox", h)
	case h != "":
		return fmt.Sprintf("is in the home %s, whose toolchains, package caches and rc files run outside the sandbox", h)
	}
	for _, r := range codeRoots {
		if subtree.Of(r.dir).Contains(resolved) {
			return fmt.Sprintf("is in %s, which %s", r.dir, r.what)
		}
	}
	for _, d := range w.path {
		if subtree.Of(d).Contains(resolved) || subtree.Of(resolved).Contains(d) {
			return fmt.Sprintf("is or holds the append-path directory %s, whose programs run by name", d)
		}
	}
	for dir := resolved; ; dir = filepath.Dir(dir) {
		for _, m := range envMarkers {
			if _, err := os.Lstat(filepath.Join(dir, m.name)); err == nil {
				return fmt.Sprintf("is in %s %s (it has %s), whose code runs outside the sandbox when it is used", m.what, dir, m.name)
			}
		}
		if dir == "/" {
			return ""
		}
	}
}

// otherHomes are the passwd database's homes besides the user's, links
// resolved: not / and not the system or shared directories some service
// accounts name as their home.
func (w *writeCheck) otherHomes() []string {
	if w.homes != nil {
		return w.homes
	}
	w.homes = []string{}
	for _, h := range w.passwdHomes {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		if h == w.home || !filepath.IsAbs(h) || underAny(h, systemDirs) || (contains(notWorkspaces, h) && h != "/root") {
			continue
		}
		w.homes = append(w.homes, filepath.Clean(h))
	}
	return w.homes
}

// CacheDir is where a sandbox-cache directory of a workspace lives outside
// the sandbox: under ~/.cache/claude-sandbox, which no session can see, one
// tree per workspace, so a session can leave nothing there for the sessions
// of another workspace.
func CacheDir(home, ws, rel string) string {
	return filepath.Join(home, layout.UserCache, "caches", workspaceKey(ws), strings.TrimSuffix(rel, "/"))
}

// StateDir is where the workspace's own copy of a part of ~/.claude
// (claudeOwnState) lives outside the sandbox: beside the caches, which no
// session can see, one tree per workspace. rel is the part's path below
// the home.
func StateDir(home, ws, rel string) string {
	return filepath.Join(home, layout.UserCache, "state", workspaceKey(ws), strings.TrimPrefix(rel, ".claude/"))
}

// workspaceKey names a workspace's tree: its base name, for people, and a
// hash of its path, so two workspaces never share one.
func workspaceKey(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Base(ws) + "-" + hex.EncodeToString(sum[:8])
}
