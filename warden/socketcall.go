package warden

import "golang.org/x/sys/unix"

// socketCall carries out a bind, connect or send for the task, on its own
// socket: the call's operation (socketOps) reads what it needs from the
// task, and acts once everything is known to be read from the task that
// asked. It returns the call's result (a send's byte or message count) or
// its errno.
func (w *Warden) socketCall(t *task, req request) (int64, unix.Errno) {
	read, ok := socketOps[req.op]
	if !ok {
		return 0, unix.ENOSYS
	}
	pidfd, err := t.pidfd()
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, req.sock, 0)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(sock)
	s, err := socketOf(sock)
	if err != nil {
		return 0, errnoOf(err)
	}
	s.task, s.pidfd = t, pidfd
	act, errno := read(w, s, req)
	if errno != 0 {
		return 0, errno
	}
	// Everything is read: make sure it was read from the task that asked.
	if !valid(w.listener, t.id) {
		return 0, unix.ENOENT
	}
	return act()
}

// A socketOp reads from the task what its operation needs (an address,
// messages), and returns the act that carries the operation out on s; or
// the errno to answer with.
type socketOp func(w *Warden, s *socket, req request) (socketAct, unix.Errno)

// A socketAct carries out an operation: it returns the call's result or
// its errno.
type socketAct func() (int64, unix.Errno)

// socketOps are the operations on sockets, by op.
var socketOps = map[op]socketOp{
	opBind:     bindOp,
	opConnect:  connectOp,
	opSendto:   sendtoOp,
	opSendmsg:  sendmsgOp,
	opSendmmsg: sendmmsgOp,
}

func bindOp(w *Warden, s *socket, req request) (socketAct, unix.Errno) {
	addr, errno := s.readAddr(req)
	if errno != 0 {
		return nil, errno
	}
	return func() (int64, unix.Errno) { return 0, w.bind(s, addr) }, 0
}

func connectOp(w *Warden, s *socket, req request) (socketAct, unix.Errno) {
	addr, errno := s.readAddr(req)
	if errno != 0 {
		return nil, errno
	}
	return func() (int64, unix.Errno) { return 0, w.connect(s, addr) }, 0
}

func sendtoOp(w *Warden, s *socket, req request) (socketAct, unix.Errno) {
	t := s.task
	m := message{flags: int(req.flags)}
	var err error
	if m.name, err = t.read(req.addr, min(uint64(req.addrLen), maxAddr+1)); err != nil {
		return nil, errnoOf(err)
	}
	size, errno := s.dataSize(uint64(req.length))
	if errno != 0 {
		return nil, errno
	}
	if m.data, err = t.read(req.buf, size); err != nil {
		return nil, errnoOf(err)
	}
	return func() (int64, unix.Errno) { return w.send(s, m) }, 0
}

func sendmsgOp(w *Warden, s *socket, req request) (socketAct, unix.Errno) {
	m, errno := s.readMsg(req.msg, int(req.flags))
	if errno != 0 {
		return nil, errno
	}
	return func() (int64, unix.Errno) { return w.send(s, m) }, 0
}

// sendmmsgOp reads up to maxMsgs messages; one that cannot be read ends
// them, and fails the call only if it is the first.
func sendmmsgOp(w *Warden, s *socket, req request) (socketAct, unix.Errno) {
	var msgs []message
	for i := range min(req.vlen, maxMsgs) {
		m, errno := s.readMsg(req.msg+uint64(i)*unix.SizeofMmsghdr, int(req.flags))
		if errno != 0 {
			if i == 0 {
				return nil, errno
			}
			break
		}
		msgs = append(msgs, m)
	}
	return func() (int64, unix.Errno) { return w.sendMessages(s, req.msg, msgs) }, 0
}

// A socket is the task's socket, held by the warden.
type socket struct {
	fd, domain, typ int
	nonblock        bool
	task            *task
	pidfd           int
}

func socketOf(fd int) (*socket, error) {
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return nil, err
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return nil, err
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, err
	}
	return &socket{fd: fd, domain: domain, typ: typ, nonblock: fl&unix.O_NONBLOCK != 0}, nil
}
