// Package warden refuses, from outside the sandbox, the names the sandbox
// may not create: a `.git` wherever the outside can see it, and the names
// the policy lists per directory (namerule.InDir); and it lets a unix
// socket reach only the sandbox's own sockets (ownsockets.go, ADR 0024).
// Programs outside obey files by their names (git enters any directory
// holding a `.git`); read-only mounts can hold the names that exist at
// launch, but not the ones that do not exist yet, anywhere in the
// workspace (ADR 0014).
//
// Every system call that creates a name reaches the warden through a seccomp
// user notification (filter.go). The warden carries it out itself, on a
// copy of the task's arguments, through a path walk it controls
// (resolve.go), and answers with the result, so nothing the task changes
// after the check can change what is done; only a call that lands where
// the sandbox's Landlock domain holds it goes on in the kernel
// (goeson.go, ADR 0040). It acts with no
// more rights than the task: the same user, no capabilities, the task's
// root, working directory and umask, and only paths the task can see.
package warden

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// Warden answers one sandbox's notifications.
type Warden struct {
	listener int
	// root is the sandbox's root directory, the same for every task: none
	// has the capability to chroot or to make a mount namespace. It is
	// opened from the first task that asks, once that task is known to be
	// the one that asked.
	rootMu  sync.Mutex
	root    int
	outside []namerule.Outside
	// outsideKeys are the keys of outside's names (foldname.Key), and
	// outsideByKey their reasons by key.
	outsideKeys  []string
	outsideByKey map[string]string
	private      map[uint64]bool
	// locked are the file systems of private the sandbox's Landlock domain
	// grants, where a call may go on in the kernel (goeson.go); empty when
	// none may, and LockOff then says why, if a domain grants some.
	locked       map[uint64]bool
	LockOff      string
	fixedNames   map[string]bool // on locked file systems: goeson.go
	mountPoints  []seenMount     // the sandbox's, for goesOn's first look
	workspace    string          // Rules.Workspace
	workspaceDev uint64
	dirs         map[fileID]dirRule
	paths        []pathRule
	inNamed      map[string]map[string]string // directory name, then entry name, both as keys (foldname.Key): why
	// Refused, when set, hears of every refusal: the path as the warden
	// sees it and why.
	Refused func(path, why string)
	openers chan fifoOpener // the free ones
	// receiver is the right to wait in receive, held by one worker at a
	// time (see turn).
	receiver chan struct{}
	sockets  ownSockets
	siblings *siblingSockets        // nil unless Rules.Siblings
	store    *gitStore              // nil unless Rules.GitStore
	copies   map[fileID]copyThrough // by the directory's
	gitDirs  map[fileID]gitDirRule  // by the directory's
	// insideOnly are Rules.InsideOnly; onlyMounts the IDs of the mounts
	// there, read when the root is opened.
	insideOnly []string
	onlyMounts map[uint64]bool
	// checkouts are Rules.Checkouts, checkoutMounts the IDs of their
	// mounts, checkoutNames Rules.CheckoutNames.
	checkouts      []string
	checkoutMounts map[uint64]bool
	checkoutNames  []string
	helper         *helperClient
	known          *knownTasks
	stop           sync.Once // fatal's
}

// New prepares a warden for rules. The rule directories are looked up now;
// one that does not exist is an error, because its names could then be
// created under a directory made later.
func New(listener int, r Rules) (*Warden, error) {
	w := &Warden{listener: listener, root: -1, outside: r.Outside, private: map[uint64]bool{}, insideOnly: r.InsideOnly, workspace: r.Workspace,
		known:     newKnownTasks(),
		checkouts: r.Checkouts, checkoutNames: r.CheckoutNames,
		sockets: ownSockets{files: map[fileID]int{}, privateNet: r.PrivateNetwork, scoped: r.AbstractScoped && r.Helper != nil}}
	if r.Helper != nil {
		w.helper = newHelperClient(int(r.Helper.Fd()))
	}
	if r.Siblings != nil {
		s, err := openSiblings(r.Siblings)
		if err != nil {
			return nil, err
		}
		w.siblings = s
	}
	w.inNamed = inNamedDirs(r.InNamedDirs)
	w.keyOutside()
	w.gitDirs = openGitDirs(r.GitDirs)
	if r.GitStore != nil {
		s, err := openGitStore(*r.GitStore)
		if err != nil {
			return nil, err
		}
		w.store = s
	}
	copies, err := copyThroughs(r.CopyThrough)
	if err != nil {
		return nil, err
	}
	w.copies = copies
	for _, r := range r.Paths {
		r.Why = cmp.Or(r.Why, "a protected path")
		w.paths = append(w.paths, pathRule{r, pathKeys(r.Path)})
	}
	for _, d := range r.Private {
		w.private[d] = true
	}
	if w.dirs, err = openDirRules(r.Dirs); err != nil {
		return nil, err
	}
	for _, d := range r.Locked {
		if !w.private[d] {
			return nil, fmt.Errorf("device %d is locked but not one of the sandbox's own file systems", d)
		}
	}
	w.locked, w.LockOff = w.lockedWithoutRules(r.Locked)
	return w, nil
}

// sandboxRoot returns the sandbox's root, opening it from t the first time.
// Until the notification is known to be live, a root opened through t's
// PID may belong to a process that took the PID since: it is kept only
// once valid says the task that asked is still there.
func (w *Warden) sandboxRoot(t *task) (int, error) {
	w.rootMu.Lock()
	defer w.rootMu.Unlock()
	if w.root >= 0 {
		return w.root, nil
	}
	root, err := t.root()
	if err != nil {
		return -1, err
	}
	if !valid(w.listener, t.id) {
		unix.Close(root)
		return -1, unix.ENOENT
	}
	w.root = root
	if len(w.locked) > 0 {
		// Read through the task's PID: kept only if it still is the task.
		if mounts, err := mountinfo.Read(strconv.Itoa(t.tid)); err == nil && valid(w.listener, t.id) {
			w.fixedNames = fixedNames(mounts, w.locked, func(p string) (unix.Stat_t, error) {
				var st unix.Stat_t
				err := unix.Fstatat(root, strings.TrimPrefix(p, "/"), &st, unix.AT_SYMLINK_NOFOLLOW)
				return st, err
			})
			w.mountPoints = mountPointsOf(mounts)
			var st unix.Stat_t
			if w.workspace != "" && unix.Fstatat(root, strings.TrimPrefix(w.workspace, "/"), &st, 0) == nil {
				w.workspaceDev = st.Dev
			}
		}
	}
	w.onlyMounts = insideOnlyMounts(root, w.insideOnly)
	w.checkoutMounts = insideOnlyMounts(root, w.checkouts)
	return root, nil
}

// walkerFor is a walker for t's paths, from the sandbox's root.
func (w *Warden) walkerFor(t *task) (*walker, error) {
	root, err := w.sandboxRoot(t)
	if err != nil {
		return nil, err
	}
	return &walker{root: root, self: t.ids}, nil
}

func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// fdPath is the path of a descriptor of the sandbox's. The kernel writes it
// from the root of the sandbox's mount namespace, so it is the path the
// sandbox sees (the workspace is bound at its own path).
func fdPath(fd int) string {
	p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	return strings.TrimSuffix(p, "/")
}
