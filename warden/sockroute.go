package warden

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// How a call on an address is made.
type route int

const (
	direct   route = iota // by the warden, on the task's socket
	byHelper              // by the socket helper, inside the sandbox
	refused
)

// abstractRoute says who may make a call on an abstract name, or reports
// its refusal: in a network namespace of the sandbox's own every name is
// its own; in the container's, only the helper, confined by Landlock, may
// try one.
func (w *Warden) abstractRoute(name []byte) route {
	switch {
	case w.sockets.scoped:
		return byHelper
	case w.sockets.privateNet:
		return direct
	}
	if w.Refused != nil {
		w.Refused("@"+string(name), "an abstract unix socket name: the sandbox shares the container's abstract names (network = open), and this kernel has no Landlock scope (ABI 6) to keep it to its own")
	}
	return refused
}

// peer opens the socket file a path names, for a connect or send: only one
// of the sandbox's own. The caller reaches it as procPath(fd).
func (w *Warden) peer(s *socket, path string) (int, unix.Errno) {
	wk, err := w.walkerFor(s.task)
	if err != nil {
		return -1, errnoOf(err)
	}
	start, err := s.task.start(atFDCWD, path)
	if err != nil {
		return -1, errnoOf(err)
	}
	if start >= 0 {
		defer unix.Close(start)
	}
	r, err := wk.walk(start, path, true)
	if err != nil {
		return -1, errnoOf(err)
	}
	defer r.close()
	var fd int
	if r.file >= 0 {
		fd, err = dup(r.file)
	} else {
		fd, err = unix.Openat(r.dir, r.name, pathFlags, 0)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	id, isSock, err := statSock(fd, "", unix.AT_EMPTY_PATH)
	switch {
	case err != nil:
		unix.Close(fd)
		return -1, errnoOf(err)
	case !isSock:
		unix.Close(fd)
		return -1, unix.ECONNREFUSED // what the kernel answers
	case !w.sockets.has(id) && !w.siblings.has(id):
		if w.Refused != nil {
			w.Refused(fdPath(fd), "a unix socket the sandbox did not make: read-only binds do not stop connect(), and it may be the Docker daemon's, an agent's or the editor's")
		}
		unix.Close(fd)
		return -1, unix.EPERM
	}
	return fd, 0
}

// resolveName turns a unix send's or connect's address into the one the
// call is made with, and says who makes it; done closes what it holds.
func (w *Warden) resolveName(s *socket, addr []byte) (name []byte, via route, done func(), errno unix.Errno) {
	a, ok := parseUnix(addr)
	if s.domain != unix.AF_UNIX || !ok {
		return addr, direct, func() {}, 0
	}
	if len(addr) > unix.SizeofSockaddrUnix {
		// The kernel refuses a unix address longer than a sockaddr_un;
		// the warden, which makes the call with a name of its own
		// (/proc/self/fd/N), refuses it too, and never passes it on.
		return nil, refused, nil, unix.EINVAL
	}
	if a.abstract {
		if via = w.abstractRoute(addr[3:]); via == refused {
			return nil, via, nil, unix.EPERM
		}
		return addr, via, func() {}, 0
	}
	fd, errno := w.peer(s, a.path)
	if errno != 0 {
		return nil, refused, nil, errno
	}
	return sockaddrUnix(procPath(fd)), direct, func() { unix.Close(fd) }, 0
}

func (w *Warden) connect(s *socket, addr []byte) unix.Errno {
	name, via, done, errno := w.resolveName(s, addr)
	if errno != 0 {
		return errno
	}
	defer done()
	if via == byHelper {
		_, errno := w.helperCall(helperConnect, s, []int{s.fd}, name, nil, 0)
		return errno
	}
	if s.nonblock {
		return rawSockCall(unix.SYS_CONNECT, s.fd, name)
	}
	if s.domain == unix.AF_UNIX {
		return w.connectUnix(s, name)
	}
	return w.connectWaiting(s, name)
}

// send sends one message on the task's socket. The warden never blocks in
// a send: it waits, as the task's blocking send would, for room, checking
// that the task is still there.
func (w *Warden) send(s *socket, m message) (int64, unix.Errno) {
	name, via, done, errno := w.resolveName(s, m.name)
	if errno != 0 {
		return 0, errno
	}
	defer done()
	if via == byHelper {
		// An abstract datagram in the container's namespace: sent by the
		// helper, without control messages.
		if len(m.control) > 0 {
			return 0, unix.EPERM
		}
		if len(m.data) > maxHelperData {
			return 0, unix.EMSGSIZE
		}
		return w.helperCall(helperSend, s, []int{s.fd}, name, m.data, m.flags|unix.MSG_NOSIGNAL)
	}
	control, closeFDs, errno := w.translateControl(s, m.control)
	if errno != 0 {
		return 0, errno
	}
	defer closeFDs()
	flags := m.flags | unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
	for {
		n, errno := rawSendmsg(s.fd, name, m.data, control, flags)
		if errno == unix.EAGAIN && !s.nonblock && m.flags&unix.MSG_DONTWAIT == 0 {
			if !w.waitWritable(s) {
				return 0, unix.ENOENT
			}
			continue
		}
		if errno == unix.EPIPE && m.flags&unix.MSG_NOSIGNAL == 0 {
			// The task's own send would have raised SIGPIPE.
			_ = unix.PidfdSendSignal(s.pidfd, unix.SIGPIPE, nil, 0)
		}
		return int64(n), errno
	}
}

// sendMessages is sendmmsg: each message in turn, each one's length written
// back to the task; a failure after the first ends the count.
func (w *Warden) sendMessages(s *socket, vec uint64, msgs []message) (int64, unix.Errno) {
	for i, m := range msgs {
		n, errno := w.send(s, m)
		if errno != 0 {
			if i == 0 {
				return 0, errno
			}
			return int64(i), 0
		}
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], uint32(n))
		if err := s.task.write(vec+uint64(i)*unix.SizeofMmsghdr+mmsghdrLen, b[:]); err != nil {
			return int64(i), 0
		}
	}
	return int64(len(msgs)), 0
}
