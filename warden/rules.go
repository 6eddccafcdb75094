package warden

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// What the warden refuses: the rules a launcher gives New, and the checks
// every operation makes on the name it is about to make or write.

// Rules are what the warden refuses: the plan's rules on names, as the
// plan states them, and what the launch learns of the sandbox it started.
type Rules struct {
	namerule.Rules
	// Private are the sandbox's own file systems (its tmpfs mounts), given
	// by device number: what is made there vanishes with the session.
	Private []uint64
	// Locked are those of Private that the sandbox's Landlock domain
	// grants (LockFiles): a call that lands there may go on in the kernel,
	// which refuses it anywhere else (ADR 0040).
	Locked []uint64
	// Helper is the launcher's end of the socket helper's connection
	// (helper.go), nil without one; AbstractScoped says Landlock confines
	// the helper, and the whole sandbox, to its own abstract sockets.
	Helper         *os.File
	AbstractScoped bool
	// Siblings, when set, are the directories the sandboxes of one user
	// and workspace share for Claude Code's background service (ADR 0026).
	Siblings *Siblings
	// Workspace is the workspace's path inside, which the counts of calls
	// name (Breakdown); no rule depends on it.
	Workspace string
}

type fileID struct{ dev, ino uint64 }

// A pathRule is a namerule.Path with the keys of its path's components.
type pathRule struct {
	namerule.Path
	keys []string
}

// pathKeys are the keys of the components of a slash-separated path.
func pathKeys(p string) []string {
	keys := strings.Split(p, "/")
	for i, c := range keys {
		keys[i] = foldname.Key(c)
	}
	return keys
}

// sameKeys reports whether the components names are those of ruled, one
// for one (keys both).
func sameKeys(ruled, names []string) bool {
	for i := range ruled {
		if !foldname.SameKey(ruled[i], names[i]) {
			return false
		}
	}
	return true
}

// A dirRule is a namerule.InDir with its directory held open, and the
// keys of its path and names.
type dirRule struct {
	namerule.InDir
	fd       int // O_PATH
	keys     []string
	nameKeys []string
}

// refuses reports whether the rule refuses the name whose key is key.
func (r dirRule) refuses(key string) bool {
	for _, n := range r.nameKeys {
		if foldname.SameKey(n, key) {
			return true
		}
	}
	return false
}

// openDirRules opens the directories of rules, by their identity: two
// rules of one directory are one, with the names of both.
func openDirRules(rules []namerule.InDir) (map[fileID]dirRule, error) {
	dirs := map[fileID]dirRule{}
	for _, d := range rules {
		fd, err := unix.Open(d.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("warden: %s: %w", d.Dir, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("warden: %s: %w", d.Dir, err)
		}
		id := fileID{st.Dev, st.Ino}
		if old, ok := dirs[id]; ok {
			unix.Close(fd)
			d.Names = append(old.Names, d.Names...)
			fd = old.fd
		}
		r := dirRule{InDir: d, fd: fd, keys: pathKeys(d.Dir)}
		for _, n := range d.Names {
			r.nameKeys = append(r.nameKeys, foldname.Key(n))
		}
		dirs[id] = r
	}
	return dirs, nil
}

// inNamedDirs are the names of rules by directory name, then entry name,
// both as keys (foldname.Key), each with why it is refused.
func inNamedDirs(rules []namerule.InNamedDir) map[string]map[string]string {
	named := map[string]map[string]string{}
	for _, d := range rules {
		dir := foldname.Key(d.Dir)
		if named[dir] == nil {
			named[dir] = map[string]string{}
		}
		for _, n := range d.Names {
			// A refusal is known by its reason: none may be empty.
			named[dir][foldname.Key(n)] = cmp.Or(d.Why, "a program outside obeys it")
		}
	}
	return named
}

// refuse says why name may not be made or written in dir, and with which
// errno: a rule's name is read-only (EROFS, as its read-only mount would
// answer), an outside name is not permitted (EPERM). It returns "" and 0
// for a name the sandbox may use.
func (w *Warden) refuse(dir int, name string, emptyDir bool) (string, unix.Errno) {
	seen, why, errno := w.refuseByRule(dir, name, emptyDir)
	if errno != 0 || seen == seenInside {
		return why, errno
	}
	if seen == seenOnCheckout {
		for _, n := range w.outside {
			if slices.Contains(w.checkoutNames, n.Name) && foldname.Same(n.Name, name) {
				return n.Why, unix.EPERM
			}
		}
		return "", 0
	}
	if why := w.outsideWhy(foldname.Key(name)); why != "" {
		return why, unix.EPERM
	}
	return "", 0
}

// What of a directory's names a program outside may come to obey.
type visibility int

const (
	seenOutside    visibility = iota // every outside name
	seenOnCheckout                   // a repository's name (Rules.Checkouts)
	seenInside                       // none: the sandbox's own, or the git store's
)

// outsideWhy says why the name whose key is key is an outside name, or "".
func (w *Warden) outsideWhy(key string) string {
	if foldname.Exact(key) {
		return w.outsideByKey[key]
	}
	for i, n := range w.outsideKeys {
		if foldname.SameKey(n, key) {
			return w.outside[i].Why
		}
	}
	return ""
}

// dirRuleWhy says why the path whose keys are keys is refused by a
// directory's rule, compared by path (refusedPath), or "".
func (w *Warden) dirRuleWhy(keys []string) string {
	for _, r := range w.dirs {
		if len(keys) == len(r.keys)+1 && sameKeys(r.keys, keys) && r.refuses(keys[len(keys)-1]) {
			return r.Why
		}
	}
	return ""
}

// refuseByRule is refuse without the outside names: the rules of the plan
// alone. seen says which outside names apply in dir.
func (w *Warden) refuseByRule(dir int, name string, emptyDir bool) (seen visibility, why string, errno unix.Errno) {
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return seenOutside, "cannot tell what directory this is", unix.EPERM
	}
	if w.isCopy(fileID{st.Dev, st.Ino}, dir, name) {
		return seenOutside, "", 0 // the sandbox's own copy of what the name holds outside
	}
	if r, ok := w.dirs[fileID{st.Dev, st.Ino}]; ok && r.refuses(foldname.Key(name)) {
		return seenOutside, r.Why, unix.EROFS
	}
	if w.private[st.Dev] {
		return seenInside, "", 0
	}
	if len(w.paths) > 0 || len(w.inNamed) > 0 || len(w.onlyMounts) > 0 {
		p := fdPath(dir)
		if store, checkout := w.onStore(p, dir); checkout {
			return seenOnCheckout, "", 0
		} else if store {
			return seenInside, "", 0
		}
		if why, onTheWay := w.underPathRule(p + "/" + name); why != "" && !(onTheWay && emptyDir) {
			return seenOutside, why, unix.EROFS
		}
	}
	return seenOutside, "", 0
}

// isOutsideName reports whether name is an outside name as written.
func (w *Warden) isOutsideName(name string) bool {
	for _, n := range w.outside {
		if n.Name == name {
			return true
		}
	}
	return false
}

// check refuses a name, reporting it; it returns the errno to answer with,
// or 0.
func (w *Warden) check(r resolved) unix.Errno { return w.checkMake(r, false) }

// checkMake is check for a call that makes an empty directory when
// emptyDir is set: one may be made on the way to a path rule's path.
func (w *Warden) checkMake(r resolved, emptyDir bool) unix.Errno {
	var why, path string
	var errno unix.Errno
	if why, errno = w.refuseIndex(r); errno != 0 {
		w.refused(w.pathOf(r), why)
		return errno
	}
	if r.dir >= 0 {
		why, errno = w.refuse(r.dir, r.name, emptyDir)
		if errno != 0 {
			path = fdPath(r.dir) + "/" + r.name
		}
	} else {
		why, errno = w.ruledFile(r.file)
		if errno != 0 {
			path = fdPath(r.file)
		}
	}
	if errno != 0 && w.Refused != nil {
		w.Refused(path, why)
	}
	return errno
}

// checkRule refuses r only for the rules (a directory's names, a missing
// protected path), not the outside names: an existing ".git" may be moved
// or linked (the workspace's are mount points, which cannot be).
func (w *Warden) checkRule(r resolved) unix.Errno {
	if r.dir < 0 {
		return w.check(r)
	}
	why, errno := w.refuse(r.dir, r.name, false)
	if errno != unix.EROFS {
		return 0
	}
	if w.Refused != nil {
		w.Refused(fdPath(r.dir)+"/"+r.name, why)
	}
	return errno
}

// pathOf is the path r names, as the sandbox sees it.
func (w *Warden) pathOf(r resolved) string {
	if r.dir < 0 {
		return fdPath(r.file)
	}
	return fdPath(r.dir) + "/" + r.name
}

// ruledFile checks a file reached through /proc (a process's fd/N), whose
// name the walk never saw: it is refused if it is what one of the rules'
// names is now. Only regular files and directories can be; the rest
// (pipes, terminals, /dev/null) are let through at once.
func (w *Warden) ruledFile(fd int) (string, unix.Errno) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "cannot tell what file this is", unix.EPERM
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
		return "", 0
	}
	if p := fdPath(fd); !w.private[st.Dev] && !w.onInsideOnly(p, fd) {
		if why, _ := w.underPathRule(p); why != "" {
			return why, unix.EROFS
		}
	}
	for _, r := range w.dirs {
		for _, n := range r.Names {
			var nst unix.Stat_t
			if unix.Fstatat(r.fd, n, &nst, unix.AT_SYMLINK_NOFOLLOW) == nil && nst.Dev == st.Dev && nst.Ino == st.Ino {
				return r.Why, unix.EROFS
			}
		}
	}
	return "", 0
}

// underPathRule returns why p, a path as the sandbox sees it, is at or
// below a path rule's path or one of the names refused in a directory of
// its name (git's own in a ".git" directory), or "". onTheWay reports a p that only leads to a path rule's
// path: there an empty directory may be made, and nothing else.
func (w *Warden) underPathRule(p string) (why string, onTheWay bool) {
	return w.underPathKeys(pathKeys(p))
}

// underPathKeys is underPathRule for the keys of a path's components.
func (w *Warden) underPathKeys(keys []string) (why string, onTheWay bool) {
	v := pathView{through: w.paths}
	for _, k := range keys {
		v = w.step(v, k)
	}
	return v.verdict()
}

// A pathView is what the path rules and the named directories' rules say
// of a path, taken one component at a time (step): why it is refused (it
// is at or below a path rule's path, or holds an entry a directory of its
// name refuses), else the path rules whose paths lie below it.
type pathView struct {
	why     string
	last    string // the key of its last component, "" for none
	depth   int
	through []pathRule
}

// step is the view of the entry whose key is key in the directory v is
// the view of. A view's rules are never changed once made: while every
// rule of v's lies below key too (the workspace's own path, which every
// protected path in it starts with), the new view shares v's, and none
// is copied at every component of every path checked.
func (w *Warden) step(v pathView, key string) pathView {
	if v.why != "" {
		return v
	}
	out := pathView{last: key, depth: v.depth + 1}
	if v.depth > 0 {
		out.why = w.namedWhy(v.last, key)
	}
	all := true // every rule of v's so far lies below key
	for i, r := range v.through {
		if !foldname.SameKey(r.keys[v.depth], key) {
			if all {
				out.through, all = slices.Clone(v.through[:i]), false
			}
			continue
		}
		if len(r.keys) == out.depth {
			out.why = r.Why
			return out
		}
		if !all {
			out.through = append(out.through, r)
		}
	}
	if all {
		out.through = v.through
	}
	if out.why != "" {
		out.through = nil
	}
	return out
}

// verdict is why the path viewed is refused, with onTheWay set for a
// path that only leads to a path rule's path.
func (v pathView) verdict() (why string, onTheWay bool) {
	if v.why != "" {
		return v.why, false
	}
	if len(v.through) > 0 {
		return v.through[0].Why, true
	}
	return "", false
}

// namedWhy says why the entry name is refused in a directory named dir
// (keys both), or "".
func (w *Warden) namedWhy(dir, name string) string {
	if foldname.Exact(dir) && foldname.Exact(name) {
		return w.inNamed[dir][name]
	}
	for d, names := range w.inNamed {
		if !foldname.SameKey(d, dir) {
			continue
		}
		for n, why := range names {
			if foldname.SameKey(n, name) {
				return why
			}
		}
	}
	return ""
}
