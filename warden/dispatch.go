package warden

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// From a notification to its answer: the call's registers are decoded into
// a request (filter.go), which carryOut carries out on a name, or
// socketCall (sockets.go) on a socket.

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
		return w.open(t, wk, start, path, req)
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
