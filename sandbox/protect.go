package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"golang.org/x/sys/unix"
)

// mountKind is how protections mount a held path.
type mountKind int

const (
	pin       mountKind = iota // a directory bound onto itself so it cannot be renamed away
	readOnly                   // an existing path bound read-only
	storeBind                  // a directory of the git store bound in place of the path (ADR 0034)
	storeCopy                  // a copy of the file, in the git store, bound in its place (ADR 0034)
)

type mount struct {
	path   string
	kind   mountKind
	why    string
	source string // storeBind's directory
}

// missingName is a name the sandbox may not create, or write, in dir; for
// a protected path that is missing, path is that path.
type missingName struct{ dir, name, why, path string }

// protections turns holds into mounts and names. A path that exists is
// bound read-only, and its name refused (a program outside that replaces it
// dissolves the mount). A missing one's first missing component is
// refused: the warden keeps the sandbox from making it (ADR 0014). Every
// existing directory between a root and a held path is pinned: a mount
// point cannot be renamed, so the protection cannot be moved aside. Paths
// outside the roots (the workspace and the allow-write paths) are left
// alone: the sandbox cannot write there.
func protections(roots []string, holds []hold) ([]mount, []missingName, error) {
	pr := &protector{roots: roots, kinds: map[string]mount{}, queue: append([]hold{}, holds...), limit: len(holds) + maxLinkHolds}
	for i := 0; i < len(pr.queue); i++ {
		if err := pr.hold(pr.queue[i]); err != nil {
			return nil, nil, err
		}
	}
	return pr.mounts(), pr.missing, nil
}

// protector is one run of protections.
type protector struct {
	roots   []string
	kinds   map[string]mount // by path
	missing []missingName
	queue   []hold // the holds, and those links add
	limit   int    // how long the queue may grow
}

// hold walks from the root that holds h down to h.
func (pr *protector) hold(h hold) error {
	if h.store != "" && h.copy {
		pr.kinds[h.path] = mount{path: h.path, kind: storeCopy, why: h.why, source: h.store}
		return nil
	}
	if h.store != "" {
		return pr.storeHold(h)
	}
	root := rootOf(pr.roots, h.path)
	if root == "" {
		// Outside the roots as written; a link may still lead inside.
		h.path = resolvePrefix(h.path)
		if root = rootOf(pr.roots, h.path); root == "" {
			return nil
		}
	}
	if h.path == root {
		return nil
	}
	rel, _ := filepath.Rel(root, h.path)
	parts := strings.Split(rel, "/")
	parent := root
	for j, part := range parts {
		more, err := pr.step(h, parent, part, parts[j+1:])
		if err != nil || !more {
			return err
		}
		parent = filepath.Join(parent, part)
	}
	return nil
}

// step looks at parent/part on the way to h, rest being the way on below
// it, and reports whether the walk goes on.
func (pr *protector) step(h hold, parent, part string, rest []string) (bool, error) {
	cur := filepath.Join(parent, part)
	last := len(rest) == 0
	fi, err := os.Lstat(cur)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pr.absent(h, parent, part, last)
	case err != nil:
		return false, fmt.Errorf("protected path %s: %w", cur, err)
	case fi.Mode()&fs.ModeSymlink != 0 && h.exact:
		return false, fmt.Errorf("protected path %s is a symlink, which the sandbox cannot hold read-only (%s); replace it with the real directory or file", cur, whyOr(h.why))
	case fi.Mode()&fs.ModeSymlink != 0:
		pr.link(h, parent, part, rest)
	case last && h.pin:
		if _, ok := pr.kinds[cur]; !ok && fi.IsDir() {
			pr.kinds[cur] = mount{path: cur, kind: pin, why: whyPinGitDir}
		}
	case last || !fi.IsDir():
		pr.kinds[cur] = mount{path: cur, kind: readOnly, why: whyOr(h.why)}
		// The name is refused too: a program outside that replaces the
		// file (an editor's save, git's rename of config.lock) dissolves
		// the sandbox's mount on it.
		pr.missing = append(pr.missing, missingName{parent, part, whyOr(h.why), ""})
	default:
		if _, ok := pr.kinds[cur]; !ok {
			pr.kinds[cur] = mount{path: cur, kind: pin, why: whyPin}
		}
		return true, nil
	}
	return false, nil
}

// storeHold binds h's store directory at h.path, with the directories on
// the way that exist pinned; the launcher makes the rest. Where a link or
// a file is on the way or at the path, a bind would land elsewhere, and
// where the user cannot make what is missing, the launch would fail: the
// path is held read-only instead, as any other (fail closed).
func (pr *protector) storeHold(h hold) error {
	root := rootOf(pr.roots, h.path)
	if root == "" || root == h.path {
		return nil
	}
	rel, _ := filepath.Rel(root, h.path)
	cur, last := root, root
	var pins []string
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			// The launcher makes the rest: the user must be able to.
			if unix.Access(last, unix.W_OK|unix.X_OK) != nil {
				pr.queue = append(pr.queue, hold{path: h.path, dir: true, why: h.why})
				return nil
			}
			break
		}
		if err != nil {
			return fmt.Errorf("protected path %s: %w", cur, err)
		}
		if !fi.IsDir() {
			pr.queue = append(pr.queue, hold{path: h.path, dir: true, why: h.why})
			return nil
		}
		if cur != h.path {
			pins = append(pins, cur)
		}
		last = cur
	}
	for _, p := range pins {
		if m, ok := pr.kinds[p]; !ok || m.kind == pin {
			pr.kinds[p] = mount{path: p, kind: pin, why: whyPin}
		}
	}
	pr.kinds[h.path] = mount{path: h.path, kind: storeBind, why: h.why, source: h.store}
	return nil
}

// absent refuses a missing h: at its first missing component, and as a
// path rule. A directory on the way may be made (.claude/ for the
// project's commands and skills); the path rule lets it be made empty and
// refuses everything else there.
func (pr *protector) absent(h hold, parent, part string, last bool) {
	if last {
		pr.missing = append(pr.missing, missingName{parent, part, whyOr(h.why), h.path})
		return
	}
	pr.missing = append(pr.missing, missingName{why: whyOr(h.why), path: h.path})
}

// link refuses the name of a link on the way to h, so it cannot be
// replaced once removed, and holds what it leads to in its place.
func (pr *protector) link(h hold, parent, part string, rest []string) {
	pr.missing = append(pr.missing, missingName{parent, part, h.why, ""})
	target, err := os.Readlink(filepath.Join(parent, part))
	if err != nil || len(pr.queue) >= pr.limit {
		return
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(parent, target)
	}
	h.path = filepath.Join(append([]string{target}, rest...)...)
	pr.queue = append(pr.queue, h)
}

// mounts are the mounts found, parents before children so that later
// mounts land on top, without those below a read-only path, which is
// held already.
func (pr *protector) mounts() []mount {
	paths := make([]string, 0, len(pr.kinds))
	for p := range pr.kinds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []mount
	for _, p := range paths {
		if !heldBy(out, p) {
			out = append(out, pr.kinds[p])
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].path, "/") < strings.Count(out[j].path, "/")
	})
	return out
}

// pathRules are the protected paths missing at launch, but for those below
// a read-only mount, which holds them whenever they appear.
func pathRules(mounts []mount, missing []missingName) []namerule.Path {
	var out []namerule.Path
	seen := map[string]bool{}
	for _, m := range missing {
		if m.path == "" || seen[m.path] || heldBy(mounts, m.path) {
			continue
		}
		seen[m.path] = true
		out = append(out, namerule.Path{Path: m.path, Why: m.why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// nameRules groups the names the sandbox may not create by directory and
// reason, in a stable order. Names in a directory that a read-only mount
// already holds need no rule; a name that a mount holds still does,
// because a program outside may replace or remove what is there during the
// session, and with it the mount.
func nameRules(mounts []mount, missing []missingName) []namerule.InDir {
	type key struct{ dir, why string }
	names := map[key][]string{}
	var keys []key
	for _, m := range missing {
		if m.dir == "" || heldBy(mounts, m.dir) {
			continue
		}
		k := key{m.dir, m.why}
		if _, ok := names[k]; !ok {
			keys = append(keys, k)
		}
		if !contains(names[k], m.name) {
			names[k] = append(names[k], m.name)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dir != keys[j].dir {
			return keys[i].dir < keys[j].dir
		}
		return keys[i].why < keys[j].why
	})
	out := make([]namerule.InDir, 0, len(keys))
	for _, k := range keys {
		sort.Strings(names[k])
		out = append(out, namerule.InDir{Dir: k.dir, Names: names[k], Why: k.why})
	}
	return out
}

// whyOr is a hold's reason, or the protected paths' own.
func whyOr(why string) string {
	if why != "" {
		return why
	}
	return "a protected path: a program outside the sandbox runs or obeys it"
}

const whyPinGitDir = "a git directory git outside enters, bound onto itself: a mount point cannot be renamed, so it cannot be moved aside and replaced"

const whyPin = "a directory on the way to a protected path, bound onto itself: a mount point cannot be renamed, so the protection cannot be moved aside"

// maxLinkHolds bounds the holds that links add, so links in a circle end.
const maxLinkHolds = 64

// heldBy reports whether p is at or below a read-only mount.
func heldBy(mounts []mount, p string) bool {
	for _, m := range mounts {
		if m.kind == readOnly && subtree.Of(m.path).Contains(p) {
			return true
		}
	}
	return false
}

// rootOf returns the root that holds p, or "".
func rootOf(roots []string, p string) string {
	for _, r := range roots {
		if subtree.Of(r).Contains(p) {
			return r
		}
	}
	return ""
}

// resolvePrefix resolves the links in the longest existing prefix of p.
func resolvePrefix(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if resolved, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(resolved, rest)
		}
		if d == "/" || d == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if subtree.Of(d).Contains(p) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
