package warden

import (
	"time"

	"golang.org/x/sys/unix"
)

// connectUnix makes a blocking unix connect, which waits only while the
// listener's backlog is full, for the sandbox's own listener to accept. It
// tries without waiting first; a connect that must wait yields the
// worker's turn, because the listener may be waiting for the warden.
func (w *Warden) connectUnix(s *socket, name []byte) unix.Errno {
	errno, err := withNonblock(s, func() unix.Errno { return rawSockCall(unix.SYS_CONNECT, s.fd, name) })
	if err != nil {
		return errnoOf(err)
	}
	if errno != unix.EAGAIN {
		return errno
	}
	s.task.turn.yield()
	return rawSockCall(unix.SYS_CONNECT, s.fd, name)
}

// connectHold is how long a connect waits holding the worker's turn: a
// connect on this host or a near network is done well within it.
const connectHold = 10 * time.Millisecond

// withSendTimeout runs call with the task's socket's send timeout set to d,
// and restores it.
func withSendTimeout(s *socket, d time.Duration, call func() unix.Errno) (unix.Errno, error) {
	old, err := unix.GetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO)
	if err != nil {
		return 0, err
	}
	hold := unix.NsecToTimeval(d.Nanoseconds())
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &hold); err != nil {
		return 0, err
	}
	errno := call()
	_ = unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, old)
	return errno, nil
}

// withNonblock runs call with the task's socket non-blocking, and restores
// its flags.
func withNonblock(s *socket, call func() unix.Errno) (unix.Errno, error) {
	fl, err := unix.FcntlInt(uintptr(s.fd), unix.F_GETFL, 0)
	if err != nil {
		return 0, err
	}
	if _, err := unix.FcntlInt(uintptr(s.fd), unix.F_SETFL, fl|unix.O_NONBLOCK); err != nil {
		return 0, err
	}
	errno := call()
	_, _ = unix.FcntlInt(uintptr(s.fd), unix.F_SETFL, fl)
	return errno, nil
}

// connectWaiting makes a blocking connect of another family (TCP, which may
// wait minutes for a host that does not answer) without holding a worker
// for good. The connect blocks as the task's would, but for connectHold at
// most (the socket's send timeout, which a connect waits by, is that long
// for the connect call only); one that takes longer goes on in the kernel,
// and the worker, having yielded its turn, waits for it while the task
// still waits for its answer. A blocking connect is woken by the handshake
// directly, which polling after a non-blocking one was not always: on
// loopback its completion then sometimes waited for the next timer tick.
func (w *Warden) connectWaiting(s *socket, name []byte) unix.Errno {
	errno, err := withSendTimeout(s, connectHold, func() unix.Errno { return rawSockCall(unix.SYS_CONNECT, s.fd, name) })
	if err != nil {
		return errnoOf(err)
	}
	// EINPROGRESS: the hold ran out; EINTR: a signal came; the connect
	// goes on either way.
	if errno != unix.EINPROGRESS && errno != unix.EINTR {
		return errno
	}
	s.task.turn.yield()
	for {
		fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, 100)
		if err == nil && n == 1 {
			soErr, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
			if err != nil {
				return errnoOf(err)
			}
			return unix.Errno(soErr)
		}
		if !valid(w.listener, s.task.id) {
			_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
			return unix.ENOENT
		}
	}
}

// waitWritable waits until s can take more, while the task still waits for
// its answer.
func (w *Warden) waitWritable(s *socket) bool {
	s.task.turn.yield()
	for {
		fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, 100)
		if !valid(w.listener, s.task.id) {
			return false
		}
		if err == nil && n == 1 {
			return true
		}
	}
}
