// Package warden refuses, from outside the sandbox, the names the sandbox
// may not create: a `.git` wherever the outside can see it, and the names
// the policy lists per directory (sandbox.NameRule); and it lets a unix
// socket reach only the sandbox's own sockets (sockets.go, ADR 0024). Programs outside obey
// files by their names (git enters any directory holding a `.git`); read-only
// mounts can hold the names that exist at launch, but not the ones that do
// not exist yet, anywhere in the workspace (ADR 0014).
//
// Every system call that creates a name reaches the warden through a seccomp
// user notification (filter.go). The warden does not let the call go on: it
// carries it out itself, on a copy of the task's arguments, through a path
// walk it controls (resolve.go), and answers with the result, so nothing the
// task changes after the check can change what is done. It acts with no
// more rights than the task: the same user, no capabilities, the task's
// root, working directory and umask, and only paths the task can see.
package warden

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"golang.org/x/sys/unix"
)

// A Name is a name never created outside the sandbox's own file systems.
// Every name of the rules is refused in all the spellings a file system
// could take for it (foldname.Same, ADR 0033).
type Name struct {
	Name string
	Why  string
}

// A DirRule refuses Names directly in the directory Dir.
type DirRule struct {
	Dir   string
	Names []string
	Why   string
}

// A PathRule refuses making or writing anything at or below Path: a
// protected path that did not exist at launch, should a program outside
// make it during the session.
type PathRule struct {
	Path string
	Why  string
}

// A NamedDir is a directory name (".git") and the names refused in every
// directory of that name.
type NamedDir struct {
	Dir   string
	Names []string
	Why   string
}

// Rules are what the warden refuses.
type Rules struct {
	// Outside names are refused in every directory the outside can see:
	// every file system but the sandbox's own.
	Outside []Name
	// Private are the sandbox's own file systems (its tmpfs mounts), given
	// by device number: what is made there vanishes with the session.
	Private []uint64
	Dirs    []DirRule
	Paths   []PathRule
	// InNamedDirs are names refused, with everything below them, in every
	// directory of a given name the outside sees, whenever it appeared:
	// git outside obeys a ".git" directory's config and hooks in any
	// repository, also one made outside during the session.
	InNamedDirs []NamedDir
	// PrivateNetwork says the sandbox has a network namespace of its own
	// (network = allowlist): every abstract unix socket name in it is the
	// sandbox's. Otherwise it shares the container's abstract names, and
	// the warden refuses them.
	PrivateNetwork bool
	// Helper is the launcher's end of the socket helper's connection
	// (helper.go), nil without one; AbstractScoped says Landlock confines
	// the helper, and the whole sandbox, to its own abstract sockets.
	Helper         *os.File
	AbstractScoped bool
	// Siblings, when set, are the directories the sandboxes of one user
	// and workspace share for Claude Code's background service (ADR 0026).
	Siblings *Siblings
	// GitStore, when set, is where a new ".git" is made instead of where
	// the outside sees it (ADR 0034).
	GitStore *GitStore
	// InsideOnly are paths inside where the git store is bound (ADR 0034):
	// directly on those mounts, as on the sandbox's own file systems, no
	// outside name and no named directory's rule applies.
	InsideOnly []string
	// CopyThrough are names of Dirs a copy in the git store is bound on
	// (ADR 0034): the sandbox may write them while they are that copy.
	CopyThrough []CopyThrough
}

// A CopyThrough is a name in Dir on which the file Store, the sandbox's
// own copy of what the name holds outside, is bound (paths outside).
type CopyThrough struct {
	Dir, Name, Store string
}

// A GitStore is the workspace's directory of git directories made during
// its sessions: Dir outside, bound at Inside in the sandbox. A ".git"
// directory or file the sandbox makes where the outside can see it is made
// in Dir under a new name, and the ".git" is a link to that name under
// Inside: inside, git follows it; outside, the link leads nowhere, and git
// looks for a repository further up as if the directory were a plain one.
type GitStore struct {
	Dir    string
	Inside string
}

type fileID struct{ dev, ino uint64 }

// A pathRule is a PathRule with the keys of its path's components.
type pathRule struct {
	PathRule
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

// A dirRule is a DirRule with its directory held open.
type dirRule struct {
	DirRule
	fd int // O_PATH
}

// Warden answers one sandbox's notifications.
type Warden struct {
	listener int
	// root is the sandbox's root directory, the same for every task: none
	// has the capability to chroot or to make a mount namespace. It is
	// opened from the first task that asks, once that task is known to be
	// the one that asked.
	rootMu  sync.Mutex
	root    int
	outside []Name
	private map[uint64]bool
	dirs    map[fileID]dirRule
	paths   []pathRule
	inNamed map[string]map[string]string // directory name, then entry name, both as keys (foldname.Key): why
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
	// insideOnly are Rules.InsideOnly; onlyMounts the IDs of the mounts
	// there, read when the root is opened.
	insideOnly []string
	onlyMounts map[uint64]bool
	helper     *helperClient
	stop       sync.Once // fatal's
}

// New prepares a warden for rules. The rule directories are looked up now;
// one that does not exist is an error, because its names could then be
// created under a directory made later.
func New(listener int, r Rules) (*Warden, error) {
	w := &Warden{listener: listener, root: -1, outside: r.Outside, private: map[uint64]bool{}, dirs: map[fileID]dirRule{}, inNamed: map[string]map[string]string{}, insideOnly: r.InsideOnly,
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
	for _, d := range r.InNamedDirs {
		dir := foldname.Key(d.Dir)
		if w.inNamed[dir] == nil {
			w.inNamed[dir] = map[string]string{}
		}
		for _, n := range d.Names {
			// A refusal is known by its reason: none may be empty.
			w.inNamed[dir][foldname.Key(n)] = cmp.Or(d.Why, "a program outside obeys it")
		}
	}
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
	for _, d := range r.Dirs {
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
		if old, ok := w.dirs[id]; ok {
			unix.Close(fd)
			d.Names = append(old.Names, d.Names...)
			fd = old.fd
		}
		w.dirs[id] = dirRule{d, fd}
	}
	return w, nil
}

// Workers is how many calls the warden carries out at once. A call can
// block (an open of a FIFO waits for its other end); the others wait in the
// kernel meanwhile.
const Workers = 8

// Threads is how many threads the warden holds: a worker's and a FIFO
// opener's, for each worker, and the reader of the socket helper's answers.
// Serve makes them all at once and keeps them: nothing the sandbox does
// makes the launcher create a thread, which a fork flood inside could make
// impossible.
const Threads = 2*Workers + 1

// Serve answers notifications until every task of the sandbox is gone.
func (w *Warden) Serve() {
	syncWakeUp(w.listener)
	w.receiver = make(chan struct{}, 1)
	w.receiver <- struct{}{}
	w.openers = make(chan fifoOpener, Workers)
	for range Workers {
		o, err := newFIFOOpener()
		if err != nil {
			w.fatal(err)
			return
		}
		w.openers <- o
	}
	var wg sync.WaitGroup
	for range Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
}

// work runs on a thread of its own: with its own umask (set to each task's)
// and, for a launcher run by root, without the capabilities the task lacks.
// The thread is never handed back to the Go runtime.
func (w *Warden) work() {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		w.fatal(fmt.Errorf("unshare(CLONE_FS): %w", err))
		return
	}
	if err := dropCapabilities(); err != nil {
		w.fatal(err)
		return
	}
	r := &turn{receiver: w.receiver}
	for {
		r.take()
		n, err := receive(w.listener)
		switch {
		case err == nil:
			w.handle(n, r)
		case err == unix.EINTR:
		case err == unix.ENOENT && !w.ended():
			// The task died before its call was received.
		default:
			r.yield() // the next worker finds the listener gone too
			return    // the listener failed, or no task of the sandbox is left
		}
	}
}

// A turn is a worker's hold on the right to receive. Only one worker waits
// in receive: the kernel wakes every thread waiting on a listener for each
// notification, and eight threads woken for every call of the sandbox cost
// more than the call. The worker holding the turn carries out the calls it
// receives itself and keeps the turn; before a call that may wait for as
// long as the task's own would (a FIFO's other end, a connect, room to
// send, the socket helper), it yields the turn to a free worker, and takes
// it again, after any other, once done.
type turn struct {
	receiver chan struct{}
	held     bool
}

func (r *turn) take() {
	if !r.held {
		<-r.receiver
		r.held = true
	}
}

func (r *turn) yield() {
	if r.held {
		r.held = false
		r.receiver <- struct{}{}
	}
}

// ended reports whether every task the filter applied to is gone: the
// listener then hangs up, and receive fails at once, for good.
func (w *Warden) ended() bool {
	fds := []unix.PollFd{{Fd: int32(w.listener), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLHUP != 0
}

// fatal stops the warden: every further call of the sandbox fails (the
// kernel answers ENOSYS once the listener is gone), never passes.
// The listener is closed once: closed twice, its number could meanwhile
// name another of the launcher's descriptors.
func (w *Warden) fatal(err error) {
	w.stop.Do(func() {
		fmt.Fprintf(os.Stderr, "claude-sandbox: the warden stopped: %v\n", err)
		unix.Close(w.listener)
	})
}

// dropCapabilities clears the calling thread's effective capabilities, which
// only a launcher run by root has: the sandbox has none, and the warden acts
// for it.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective == 0 && data[1].Effective == 0 {
		return nil
	}
	data[0].Effective, data[1].Effective = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// Totals are what every warden of this process carried out since it
// started: how many calls, and the time from receiving each to answering
// it (for an answer with a descriptor, until the task took it). The
// benchmarks report them.
func Totals() (calls int64, busy time.Duration) {
	return totalCalls.Load(), time.Duration(totalBusy.Load())
}

var totalCalls, totalBusy atomic.Int64

func (w *Warden) handle(n *notif, r *turn) {
	start := time.Now()
	defer func() {
		totalCalls.Add(1)
		totalBusy.Add(int64(time.Since(start)))
	}()
	var c *call
	for i, k := range callTable {
		if uintptr(n.nr) == k.nr {
			c = &callTable[i]
			break
		}
	}
	if c == nil || c.decode == nil {
		w.deliver(n.id, answer(w.listener, n.id, 0, unix.ENOSYS))
		return
	}
	t := &task{tid: int(n.pid), id: n.id, turn: r}
	req := c.decode(n.args)
	if req.op >= opBind {
		val, errno := w.socketCall(n, t, req)
		w.deliver(n.id, answer(w.listener, n.id, val, errno))
		return
	}
	fd, errno := w.carryOut(n, t, req)
	if errno == 0 && fd >= 0 {
		got, err := install(w.listener, n.id, fd, req.flags&unix.O_CLOEXEC != 0)
		unix.Close(fd)
		switch err {
		case nil:
			w.deliver(n.id, answer(w.listener, n.id, got, 0))
			return
		case unix.ENOENT, unix.ESRCH:
			return // the task is gone
		}
		// Not installed (a full descriptor table, no memory): the call is
		// still unanswered, and fails with why.
		errno = errnoOf(err)
	}
	w.deliver(n.id, answer(w.listener, n.id, 0, errno))
}

// deliver judges how an answer went. ENOENT, ESRCH: the task is gone
// (killed, or on a kernel before 5.19 interrupted by a signal, when its
// call starts again as a new notification): nobody waits for it. Anything else means
// the warden answered a call twice or not at all, and a task may wait
// forever or hold what it did not ask for: the warden stops, and every
// further call of the sandbox fails.
func (w *Warden) deliver(id uint64, err error) {
	if err == nil || err == unix.ENOENT || err == unix.ESRCH {
		return
	}
	w.fatal(fmt.Errorf("answering call %d: %w", id, err))
}

var callTable = calls()

// An op is what a call does.
type op int

const (
	opOpen op = iota
	opMkdir
	opMknod
	opSymlink
	opLink
	opRename
	opTruncate
	opBind
	opConnect
	opSendto
	opSendmsg
	opSendmmsg
)

// request is a call's arguments, decoded from its registers.
type request struct {
	op     op
	dirfd  int    // where path starts
	path   uint64 // the name being made (address in the task)
	dirfd2 int    // link, rename: where path2 starts
	path2  uint64 // link, rename: the existing name
	target uint64 // symlink: the link's content
	flags  uint64
	mode   uint32
	dev    uint64
	length int64 // truncate; sendto: the data's length
	// bind, connect, sendto, sendmsg, sendmmsg
	sock    int    // the task's socket
	addr    uint64 // bind, connect, sendto: the address (in the task)
	addrLen uint32
	buf     uint64 // sendto: the data
	msg     uint64 // sendmsg: the struct msghdr; sendmmsg: the array of struct mmsghdr
	vlen    uint32 // sendmmsg: how many
}

// carryOut does the call for the task. It returns a descriptor to install
// (open), or the errno to answer with.
func (w *Warden) carryOut(n *notif, t *task, req request) (int, unix.Errno) {
	path, err := t.string(req.path)
	if err != nil {
		return -1, errnoOf(err)
	}
	start, err := t.start(req.dirfd, path)
	if err != nil {
		return -1, errnoOf(err)
	}
	if start >= 0 {
		defer unix.Close(start)
	}
	var path2, target string
	start2 := -1
	switch req.op {
	case opSymlink:
		if target, err = t.string(req.target); err != nil {
			return -1, errnoOf(err)
		}
	case opLink, opRename:
		if path2, err = t.string(req.path2); err != nil {
			return -1, errnoOf(err)
		}
		if req.op == opLink && path2 == "" && req.flags&unix.AT_EMPTY_PATH != 0 {
			// Linking a descriptor needs a capability the task lacks.
			return -1, unix.ENOENT
		}
		if start2, err = t.start(req.dirfd2, path2); err != nil {
			return -1, errnoOf(err)
		}
		defer unix.Close(start2)
	}
	root, err := w.sandboxRoot(t)
	if err != nil {
		return -1, errnoOf(err)
	}
	// Everything the warden needs from the task is read: make sure it was
	// read from the task that asked, not one that took its PID since.
	if !valid(w.listener, n.id) {
		return -1, unix.ENOENT
	}
	wk := &walker{root: root, self: t.ids}
	if req.op == opLink || req.op == opRename || req.op == opSymlink {
		// Neither may put another file under a name a bind has just
		// made, before the warden records what it made (bindPath).
		w.sockets.names.RLock()
		defer w.sockets.names.RUnlock()
	}
	switch req.op {
	case opOpen:
		return w.open(n.id, t, wk, start, path, req)
	case opMkdir, opMknod:
		return -1, w.makeNode(t, wk, start, path, req)
	case opSymlink:
		return -1, w.symlink(wk, start, path, target)
	case opLink:
		return -1, w.link(t, wk, start2, path2, start, path, req)
	case opRename:
		return -1, w.rename(wk, start2, path2, start, path, req)
	case opTruncate:
		return -1, w.truncate(wk, start, path, req.length)
	}
	return -1, unix.ENOSYS
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
	w.onlyMounts = insideOnlyMounts(root, w.insideOnly)
	return root, nil
}

// refuse says why name may not be made or written in dir, and with which
// errno: a rule's name is read-only (EROFS, as its read-only mount would
// answer), an outside name is not permitted (EPERM). It returns "" and 0
// for a name the sandbox may use.
func (w *Warden) refuse(dir int, name string, emptyDir bool) (string, unix.Errno) {
	private, why, errno := w.refuseByRule(dir, name, emptyDir)
	if errno != 0 || private {
		return why, errno
	}
	for _, n := range w.outside {
		if foldname.Same(n.Name, name) {
			return n.Why, unix.EPERM
		}
	}
	return "", 0
}

// refuseByRule is refuse without the outside names: the rules of the plan
// alone. private reports a directory on one of the sandbox's own file
// systems.
func (w *Warden) refuseByRule(dir int, name string, emptyDir bool) (private bool, why string, errno unix.Errno) {
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return false, "cannot tell what directory this is", unix.EPERM
	}
	if w.isCopy(fileID{st.Dev, st.Ino}, dir, name) {
		return false, "", 0 // the sandbox's own copy of what the name holds outside
	}
	if r, ok := w.dirs[fileID{st.Dev, st.Ino}]; ok {
		for _, n := range r.Names {
			if foldname.Same(n, name) {
				return false, r.Why, unix.EROFS
			}
		}
	}
	private = w.private[st.Dev]
	if !private && (len(w.paths) > 0 || len(w.inNamed) > 0 || len(w.onlyMounts) > 0) {
		p := fdPath(dir)
		if w.onInsideOnly(p, dir) {
			return true, "", 0
		}
		if why, onTheWay := w.underPathRule(p + "/" + name); why != "" && !(onTheWay && emptyDir) {
			return false, why, unix.EROFS
		}
	}
	return private, "", 0
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

func (w *Warden) makeNode(t *task, wk *walker, start int, path string, req request) unix.Errno {
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	// An outside name spelled as it is that exists is answered as the
	// kernel answers, with nothing made: Mercurial makes its .hg before
	// each write to the repository and expects EEXIST. Another spelling
	// is refused whether or not it exists (a case-folding file system
	// finds ".Git" wherever ".git" is).
	var st unix.Stat_t
	if r.dir >= 0 && w.isOutsideName(r.name) && unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	if req.op == opMkdir {
		if inStore, e := w.toGitStore(r, true); e != 0 || inStore {
			if e == 0 {
				_, e = w.makeInGitStore(t, r, true, 0, req.mode)
			}
			return e
		}
	}
	if e := w.checkMake(r, req.op == opMkdir); e != 0 {
		return e
	}
	if e := setUmask(t); e != 0 {
		return e
	}
	if req.op == opMkdir {
		err = unix.Mkdirat(r.dir, r.name, req.mode)
	} else {
		err = unix.Mknodat(r.dir, r.name, req.mode, int(req.dev))
	}
	return errnoOf(err)
}

func (w *Warden) symlink(wk *walker, start int, path, target string) unix.Errno {
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if e := w.check(r); e != 0 {
		return e
	}
	return errnoOf(unix.Symlinkat(target, r.dir, r.name))
}

// link makes a hard link. The existing file is resolved to a descriptor and
// linked through the warden's own /proc/self/fd, the way an unprivileged
// process links a file it holds open.
func (w *Warden) link(t *task, wk *walker, start2 int, path2 string, start int, path string, req request) unix.Errno {
	if req.flags&^uint64(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL
	}
	var old int
	from, err := wk.walk(start2, path2, req.flags&unix.AT_SYMLINK_FOLLOW != 0)
	if err != nil {
		return errnoOf(err)
	}
	defer from.close()
	// A second name for a ruled file could be opened for writing.
	if e := w.checkRule(from); e != 0 {
		return e
	}
	if from.file >= 0 {
		old = from.file
	} else {
		if old, err = unix.Openat(from.dir, from.name, pathFlags, 0); err != nil {
			return errnoOf(err)
		}
		defer unix.Close(old)
		if e := w.copyFD(from, old); e != 0 {
			return e
		}
	}
	to, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer to.close()
	if e := w.check(to); e != 0 {
		return e
	}
	return errnoOf(unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", old), to.dir, to.name, unix.AT_SYMLINK_FOLLOW))
}

func (w *Warden) rename(wk *walker, start2 int, path2 string, start int, path string, req request) unix.Errno {
	from, err := wk.walk(start2, path2, false)
	if err != nil {
		return errnoOf(err)
	}
	defer from.close()
	to, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer to.close()
	if e := w.check(to); e != 0 {
		return e
	}
	if req.flags&unix.RENAME_EXCHANGE != 0 {
		// An exchange gives the old name a new file as well.
		if e := w.check(from); e != 0 {
			return e
		}
	} else if e := w.checkRule(from); e != 0 {
		// A ruled name moved away could be written under its new one.
		return e
	}
	if req.flags == 0 && to.dir >= 0 {
		var st unix.Stat_t
		if unix.Fstat(to.dir, &st) == nil && w.isCopy(fileID{st.Dev, st.Ino}, to.dir, to.name) {
			return w.copyInto(from, to)
		}
	}
	// The kernel refuses to rename a mount point only in the caller's own
	// mount namespace; in another one it dissolves the mount. The sandbox's
	// read-only binds are mounts of its namespace, not the warden's: the
	// warden refuses as the kernel would for the task. The sandbox can make
	// no mounts, so what is a mount point now stays one.
	for _, r := range []resolved{from, to} {
		if mounted, err := mountPoint(r); err != nil {
			return errnoOf(err)
		} else if mounted {
			return unix.EBUSY
		}
	}
	return errnoOf(unix.Renameat2(from.dir, from.name, to.dir, to.name, uint(req.flags)))
}

// Opens that would make a name; the rest never reach the warden.
const (
	ttyMajor     = 5 // /dev/tty is 5:0, /dev/console 5:1
	ttyMinor     = 0
	consoleMinor = 1
)

func (w *Warden) open(id uint64, t *task, wk *walker, start int, path string, req request) (int, unix.Errno) {
	flags := int(req.flags)
	follow := flags&(unix.O_NOFOLLOW|unix.O_EXCL) == 0
	for attempt := 0; ; attempt++ {
		fd, errno := w.openOnce(id, t, wk, start, path, flags, req.mode, follow)
		// A name that became a link after the walk looked at it: walk again.
		if errno == unix.ELOOP && follow && attempt < 3 {
			wk.links = 0
			continue
		}
		return fd, errno
	}
}

func (w *Warden) openOnce(id uint64, t *task, wk *walker, start int, path string, flags int, mode uint32, follow bool) (int, unix.Errno) {
	r, err := wk.walk(start, path, follow)
	if err != nil {
		return -1, errnoOf(err)
	}
	defer r.close()
	tmpfile := flags&unix.O_TMPFILE == unix.O_TMPFILE
	if strings.HasSuffix(path, "/") && !tmpfile {
		return -1, unix.EISDIR
	}
	if !tmpfile && flags&unix.O_CREAT != 0 {
		if inStore, e := w.toGitStore(r, false); e != 0 {
			return -1, e
		} else if inStore {
			return w.makeInGitStore(t, r, false, flags|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
		}
	}
	// An unnamed file makes no name in its directory; linking it later
	// does, and is checked then.
	if !tmpfile {
		if e := w.check(r); e != 0 {
			return -1, e
		}
	}
	// Never the warden's own controlling terminal, and never blocking the
	// warden on a FIFO's other end.
	flags |= unix.O_NOCTTY | unix.O_CLOEXEC
	var st unix.Stat_t
	var statErr error
	if r.file >= 0 {
		statErr = unix.Fstat(r.file, &st)
	} else {
		statErr = unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if w.copyName(r) {
			return w.openCopy(r, flags, statErr)
		}
	}
	if statErr == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFCHR:
			if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == ttyMinor {
				return t.openCtty(flags)
			}
			if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == consoleMinor {
				return -1, unix.EACCES
			}
		case unix.S_IFIFO:
			return w.openFIFO(t, r, flags)
		}
	}
	if r.file >= 0 {
		fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", r.file), flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW), 0)
		return fd, errnoOf(err)
	}
	if statErr == nil && flags&unix.O_EXCL == 0 {
		// An existing file is opened, not made: no umask to read. If it is
		// gone meanwhile, it is made below, as the kernel would.
		fd, err := unix.Openat(r.dir, r.name, flags&^unix.O_CREAT|unix.O_NOFOLLOW, 0)
		if err != unix.ENOENT {
			return fd, errnoOf(err)
		}
	}
	if e := setUmask(t); e != 0 {
		return -1, e
	}
	fd, err := unix.Openat(r.dir, r.name, flags|unix.O_NOFOLLOW, mode)
	return fd, errnoOf(err)
}

// openCtty opens the task's controlling terminal, which is what /dev/tty
// means to the task (opened by the warden, /dev/tty would be the
// launcher's terminal). The terminal is reached through a descriptor of the
// task's that refers to it.
func (t *task) openCtty(flags int) (int, unix.Errno) {
	tty, err := t.ctty()
	if err != nil {
		return -1, errnoOf(err)
	}
	if tty == 0 {
		return -1, unix.ENXIO
	}
	dir := fmt.Sprintf("/proc/%d/fd", t.tid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return -1, errnoOf(err)
	}
	for _, e := range entries {
		var st unix.Stat_t
		p := dir + "/" + e.Name()
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == tty {
			fd, err := unix.Open(p, flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_TRUNC), 0)
			return fd, errnoOf(err)
		}
	}
	return -1, unix.ENXIO
}

// openFIFO opens an existing FIFO without ever blocking a worker for good:
// the open waits for the other end as the task's would, but gives up when
// the task is gone, after waking itself by opening the FIFO both ways.
func (w *Warden) openFIFO(t *task, r resolved, flags int) (int, unix.Errno) {
	var fifo int
	var err error
	if r.file >= 0 {
		fifo, err = dup(r.file)
	} else {
		fifo, err = unix.Openat(r.dir, r.name, pathFlags, 0)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	defer unix.Close(fifo)
	path := fmt.Sprintf("/proc/self/fd/%d", fifo)
	flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_TRUNC
	if flags&unix.O_NONBLOCK != 0 {
		fd, err := unix.Open(path, flags, 0)
		return fd, errnoOf(err)
	}
	fd, err := w.blocking(t, func() (int, error) { return unix.Open(path, flags, 0) }, func() {
		// Opened both ways, a FIFO never blocks, and the waiting open
		// returns.
		if wake, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(wake)
		}
	})
	if err == nil && !valid(w.listener, t.id) {
		unix.Close(fd)
		return -1, unix.ENOENT
	}
	return fd, errnoOf(err)
}

// blocking runs call, which may block for as long as the task's own call
// would (an open of a FIFO, a connect), on an opener's thread, while the
// worker watches whether the task is still there. When it is gone, wake
// makes the call return, and blocking waits for it.
func (w *Warden) blocking(t *task, call func() (int, error), wake func()) (int, error) {
	t.turn.yield()
	o := <-w.openers // one is free: a worker holds at most one at a time
	defer func() { w.openers <- o }()
	done := make(chan fifoOpened, 1)
	o <- fifoOpen{call, done}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.fd, r.err
		case <-tick.C:
			if valid(w.listener, t.id) {
				continue
			}
			wake()
			r := <-done
			return r.fd, r.err
		}
	}
}

// A fifoOpener makes calls that block (opens of FIFOs, connects) on a
// thread of its own, as unprivileged as a worker's: the call blocks until
// its other end comes, while the worker watches whether the task is still
// there. The thread then waits for the next call; it is never handed back
// to the Go runtime.
type fifoOpener chan fifoOpen

type fifoOpen struct {
	call func() (int, error)
	done chan<- fifoOpened
}

type fifoOpened struct {
	fd  int
	err error
}

func newFIFOOpener() (fifoOpener, error) {
	o := make(fifoOpener)
	ready := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := dropCapabilities()
		ready <- err
		if err != nil {
			return // the thread ends with the goroutine
		}
		for req := range o {
			fd, err := req.call()
			req.done <- fifoOpened{fd, err}
		}
	}()
	return o, <-ready
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

// setUmask gives the worker's thread the task's umask, so the kernel
// applies it exactly as for the task (default ACLs included).
func setUmask(t *task) unix.Errno {
	u, err := t.umask()
	if err != nil {
		return errnoOf(err)
	}
	unix.Umask(int(u))
	return 0
}

// mountPoint reports whether r names the root of a mount: its mount differs
// from its directory's. A name that does not exist is none.
func mountPoint(r resolved) (bool, error) {
	var dir, f unix.Statx_t
	if err := unix.Statx(r.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir); err != nil {
		return false, err
	}
	err := unix.Statx(r.dir, r.name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &f)
	if err == unix.ENOENT {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return f.Mnt_id != dir.Mnt_id, nil
}

// truncate cuts a file to length through a descriptor of its own, after the
// same checks as an open for writing.
func (w *Warden) truncate(wk *walker, start int, path string, length int64) unix.Errno {
	r, err := wk.walk(start, path, true)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if e := w.check(r); e != 0 {
		return e
	}
	var fd int
	if r.file >= 0 {
		fd, err = unix.Open(fmt.Sprintf("/proc/self/fd/%d", r.file), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	} else {
		var st unix.Stat_t
		if err := unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return errnoOf(err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			return unix.EISDIR
		default:
			return unix.EINVAL
		}
		fd, err = unix.Openat(r.dir, r.name, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(fd)
	if e := w.copyFD(r, fd); e != 0 {
		return e
	}
	return errnoOf(unix.Ftruncate(fd, length))
}

// underPathRule returns why p, a path as the sandbox sees it, is at or
// below a path rule's path or one of the names refused in a directory of
// its name (git's own in a ".git" directory), or "". onTheWay reports a p that only leads to a path rule's
// path: there an empty directory may be made, and nothing else.
func (w *Warden) underPathRule(p string) (why string, onTheWay bool) {
	keys := pathKeys(p)
	for _, r := range w.paths {
		if len(keys) >= len(r.keys) && sameKeys(r.keys, keys[:len(r.keys)]) {
			return r.Why, false
		}
	}
	for i := 0; i+1 < len(keys); i++ {
		if why := w.namedWhy(keys[i], keys[i+1]); why != "" {
			return why, false
		}
	}
	for _, r := range w.paths {
		if len(keys) < len(r.keys) && sameKeys(r.keys[:len(keys)], keys) {
			return r.Why, true
		}
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

// fdPath is the path of a descriptor of the sandbox's. The kernel writes it
// from the root of the sandbox's mount namespace, so it is the path the
// sandbox sees (the workspace is bound at its own path).
func fdPath(fd int) string {
	p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	return strings.TrimSuffix(p, "/")
}
