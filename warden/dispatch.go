package warden

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// From a notification to its answer: the call's registers are decoded into
// a request (filter.go), and its op picks the operation that carries it
// out from one of two tables: of operations on names (fileOps, run by
// carryOut) or on sockets (socketOps in socketcall.go, run by socketCall).

// handle answers one notification: a call the filter names is decoded and
// carried out, and its result, or a descriptor installed in the task, is
// the answer; any other call fails with ENOSYS.
func (w *Warden) handle(n *notif, r *turn) {
	start := time.Now()
	defer func() {
		totalCalls.Add(1)
		totalBusy.Add(int64(time.Since(start)))
	}()
	var c *call
	for i, k := range callTable {
		if uintptr(n.nr) == k.nr() {
			c = &callTable[i]
			break
		}
	}
	if c == nil || c.decode == nil {
		w.deliver(n.id, answer(w.listener, n.id, 0, unix.ENOSYS))
		return
	}
	t := &task{tid: int(n.pid), id: n.id, turn: r, known: w.known}
	req := c.decode(n.args)
	if req.op == opUmask {
		w.known.umaskCalled(t.tid, req.mode)
		count(req.op, landUnlooked, wentOn)
		w.deliver(n.id, answerContinue(w.listener, n.id))
		return
	}
	if req.op >= opBind {
		val, errno := w.socketCall(t, req)
		count(req.op, landUnlooked, answerOf(errno))
		w.deliver(n.id, answer(w.listener, n.id, val, errno))
		return
	}
	fd, errno, land := w.carryOut(t, req)
	if land.goesOn {
		count(req.op, land.landing, wentOn)
		w.deliver(n.id, answerContinue(w.listener, n.id))
		return
	}
	count(req.op, land.landing, answerOf(errno))
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
	opBind // and those after it: on sockets (socketOps)
	opConnect
	opSendto
	opSendmsg
	opSendmmsg
	// opUmask touches no name: the warden learns of it (knownTasks) and
	// lets the kernel carry it out.
	opUmask
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

func answerOf(errno unix.Errno) answerKind {
	if errno != 0 {
		return failed
	}
	return carried
}

// A look is where the warden's look found a call lands, and whether the
// call goes on in the kernel (goesOn).
type look struct {
	landing landing
	goesOn  bool
}

// carryOut does a call on a name for the task. It reads the path, and
// where it starts, then what the call's operation needs besides
// (fileOps); once everything is read from the task, the operation acts,
// unless the call goes on in the kernel (look.goesOn). It returns a
// descriptor to install (open), or the errno to answer with.
func (w *Warden) carryOut(t *task, req request) (int, unix.Errno, look) {
	read, ok := fileOps[req.op]
	if !ok {
		return -1, unix.ENOSYS, look{}
	}
	path, err := t.string(req.path)
	if err != nil {
		return -1, errnoOf(err), look{}
	}
	start, err := t.start(req.dirfd, path)
	if err != nil {
		return -1, errnoOf(err), look{}
	}
	c := &fileCall{t: t, req: req, path: path, start: start, start2: -1}
	defer c.close()
	wk, err := w.walkerFor(t)
	if err != nil {
		return -1, errnoOf(err), look{}
	}
	var l look
	if l.goesOn, l.landing = w.goesOn(c, wk); l.goesOn {
		return -1, 0, l
	}
	act, errno := read(w, c)
	if errno != 0 {
		return -1, errno, l
	}
	// Everything the warden needs from the task is read: make sure it was
	// read from the task that asked, not one that took its PID since.
	if !valid(w.listener, t.id) {
		return -1, unix.ENOENT, l
	}
	fd, errno := act(wk)
	return fd, errno, l
}

// A fileCall is a call on a name as carryOut has read it: the path, copied
// from the task once, and the directory it starts at.
type fileCall struct {
	t      *task
	req    request
	path   string
	start  int // -1 for an absolute path: the walk starts at the root
	start2 int // link, rename: where the existing name's path starts, or -1
}

func (c *fileCall) close() {
	for _, fd := range []int{c.start, c.start2} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// A fileOp reads from the task what its operation needs besides the path,
// and returns the act that carries the operation out; or the errno to
// answer with.
type fileOp func(w *Warden, c *fileCall) (fileAct, unix.Errno)

// A fileAct carries out an operation, with a walker from the sandbox's
// root. It returns a descriptor to install (open), or the errno to answer
// with.
type fileAct func(wk *walker) (fd int, errno unix.Errno)

// fileOps are the operations on names, by op.
var fileOps = map[op]fileOp{
	opOpen:     openOp,
	opMkdir:    makeNodeOp,
	opMknod:    makeNodeOp,
	opSymlink:  symlinkOp,
	opLink:     linkOp,
	opRename:   renameOp,
	opTruncate: truncateOp,
}

func openOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	return func(wk *walker) (int, unix.Errno) {
		return w.open(c.t, wk, c.start, c.path, c.req)
	}, 0
}

// makeNodeOp is mkdir and mknod.
func makeNodeOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	return func(wk *walker) (int, unix.Errno) {
		return -1, w.makeNode(c.t, wk, c.start, c.path, c.req)
	}, 0
}

// symlinkOp reads the link's content.
func symlinkOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	target, err := c.t.string(c.req.target)
	if err != nil {
		return nil, errnoOf(err)
	}
	return w.holdingNames(func(wk *walker) (int, unix.Errno) {
		return -1, w.symlink(wk, c.start, c.path, target)
	}), 0
}

// linkOp reads the existing name's path, and opens where it starts.
func linkOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	path2, err := c.t.string(c.req.path2)
	if err != nil {
		return nil, errnoOf(err)
	}
	if path2 == "" && c.req.flags&unix.AT_EMPTY_PATH != 0 {
		// Linking a descriptor needs a capability the task lacks.
		return nil, unix.ENOENT
	}
	start2, err := c.t.start(c.req.dirfd2, path2)
	if err != nil {
		return nil, errnoOf(err)
	}
	c.start2 = start2
	return w.holdingNames(func(wk *walker) (int, unix.Errno) {
		return -1, w.link(wk, c.start2, path2, c.start, c.path, c.req)
	}), 0
}

// renameOp reads the existing name's path, and opens where it starts.
func renameOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	path2, err := c.t.string(c.req.path2)
	if err != nil {
		return nil, errnoOf(err)
	}
	start2, err := c.t.start(c.req.dirfd2, path2)
	if err != nil {
		return nil, errnoOf(err)
	}
	c.start2 = start2
	return w.holdingNames(func(wk *walker) (int, unix.Errno) {
		return -1, w.rename(wk, c.start2, path2, c.start, c.path, c.req)
	}), 0
}

func truncateOp(w *Warden, c *fileCall) (fileAct, unix.Errno) {
	return func(wk *walker) (int, unix.Errno) {
		return -1, w.truncate(wk, c.start, c.path, c.req.length)
	}, 0
}

// holdingNames is act holding the names of the sandbox's sockets for
// reading: a link, rename or symbolic link may not put another file under
// a name a bind has just made, before the warden records what it made
// (bind).
func (w *Warden) holdingNames(act fileAct) fileAct {
	return func(wk *walker) (int, unix.Errno) {
		w.sockets.names.RLock()
		defer w.sockets.names.RUnlock()
		return act(wk)
	}
}
