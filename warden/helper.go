package warden

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The socket helper is the one part of the warden inside the sandbox: a
// process that init starts before it installs the warden's filter, in the
// sandbox's mount namespace, root, user and Landlock domain, and undumpable
// (nothing inside can trace it or take its descriptors). It makes the two
// kinds of socket call the warden cannot make from outside:
//   - a bind to a path, with the task's own address bytes, from the task's
//     working directory: the kernel keeps the address a socket was bound
//     with (getsockname, a datagram's source, a client's getpeername), and
//     only inside does "/tmp/x.sock" mean the sandbox's /tmp;
//   - a connect or send to an abstract name while the sandbox shares the
//     container's abstract names (network = open): Landlock's scope
//     (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET), which init put on the sandbox
//     before it started the helper, lets it reach only the sockets the
//     sandbox made.
// It acts only on what the warden sends it, on the task's own socket, after
// the warden's checks; it is no more than any process inside.

// Helper requests.
const (
	helperBind    = 'b'
	helperConnect = 'c'
	helperSend    = 's'
)

// maxHelperData is the largest datagram the helper sends: an abstract
// datagram socket's peer in the sandbox gets no larger one.
const maxHelperData = 64 << 10

// helperRequest: op (1), id (8), flags (4), address length (4), then the
// address and the data. Descriptors: the socket, and for a bind the task's
// working directory.
func encodeHelperRequest(op byte, id uint64, flags int, addr, data []byte) []byte {
	b := []byte{op}
	b = binary.NativeEndian.AppendUint64(b, id)
	b = binary.NativeEndian.AppendUint32(b, uint32(flags))
	b = binary.NativeEndian.AppendUint32(b, uint32(len(addr)))
	return append(append(b, addr...), data...)
}

// A helperClient is the warden's end of the helper's socket.
type helperClient struct {
	fd      int
	mu      sync.Mutex // one request written at a time
	next    atomic.Uint64
	waiting sync.Map // id: chan helperResult
}

type helperResult struct {
	val   int64
	errno unix.Errno
}

func newHelperClient(fd int) *helperClient {
	h := &helperClient{fd: fd}
	go h.read()
	return h
}

// read hands each answer to the call that waits for it. When the helper is
// gone, every waiting and later call fails (EPERM): nothing passes
// unchecked.
func (h *helperClient) read() {
	buf := make([]byte, 20)
	for {
		n, err := unix.Read(h.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != len(buf) {
			h.waiting.Range(func(k, v any) bool {
				v.(chan helperResult) <- helperResult{errno: unix.EPERM}
				h.waiting.Delete(k)
				return true
			})
			unix.Close(h.fd)
			h.fd = -1
			return
		}
		id := binary.NativeEndian.Uint64(buf)
		if c, ok := h.waiting.LoadAndDelete(id); ok {
			c.(chan helperResult) <- helperResult{
				val:   int64(binary.NativeEndian.Uint64(buf[12:])),
				errno: unix.Errno(binary.NativeEndian.Uint32(buf[8:])),
			}
		}
	}
}

// call sends a request with fds and waits for its answer while the task
// still waits for its own; when the task is gone, wake ends a call that
// blocks.
func (w *Warden) helperCall(op byte, s *socket, fds []int, addr, data []byte, flags int) (int64, unix.Errno) {
	h := w.helper
	if h == nil {
		return 0, unix.EPERM
	}
	// The helper's call may wait (a bind waits for links and renames, a
	// connect for a full backlog).
	s.task.turn.yield()
	id := h.next.Add(1)
	c := make(chan helperResult, 1)
	h.waiting.Store(id, c)
	h.mu.Lock()
	err := retryEINTR(func() error {
		return unix.Sendmsg(h.fd, encodeHelperRequest(op, id, flags, addr, data), unix.UnixRights(fds...), nil, 0)
	})
	h.mu.Unlock()
	if err != nil {
		h.waiting.Delete(id)
		return 0, unix.EPERM
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	woken := false
	for {
		select {
		case r := <-c:
			return r.val, r.errno
		case <-tick.C:
			if !woken && !valid(w.listener, s.task.id) {
				_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
				woken = true
			}
		}
	}
}

// ServeHelper is the helper's loop, run by init's child on fd: each request
// on a goroutine of its own (a connect may wait for its peer), binds one at
// a time (each changes the process's working directory). It returns when
// the launcher's end closes.
func ServeHelper(fd int) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %v", err)
	}
	var binds, writes sync.Mutex
	buf, oob := make([]byte, 21+maxAddr+maxHelperData), make([]byte, unix.CmsgSpace(2*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return nil
		}
		fds := receivedFDs(oob[:oobn])
		if n < 17 || len(fds) == 0 {
			closeAll(fds)
			continue
		}
		op, id := buf[0], binary.NativeEndian.Uint64(buf[1:])
		flags, alen := int(binary.NativeEndian.Uint32(buf[9:])), int(binary.NativeEndian.Uint32(buf[13:]))
		if 17+alen > n {
			closeAll(fds)
			continue
		}
		addr := append([]byte{}, buf[17:17+alen]...)
		data := append([]byte{}, buf[17+alen:n]...)
		go func() {
			defer closeAll(fds)
			val, errno := helperDo(op, flags, fds, addr, data, &binds)
			out := binary.NativeEndian.AppendUint64(nil, id)
			out = binary.NativeEndian.AppendUint32(out, uint32(errno))
			out = binary.NativeEndian.AppendUint64(out, uint64(val))
			writes.Lock()
			err := retryEINTR(func() error { _, err := unix.Write(fd, out); return err })
			writes.Unlock()
			if err != nil {
				// An answer that cannot be sent would leave its call
				// waiting: the helper ends instead, and every call
				// waiting for it fails.
				_ = unix.Shutdown(fd, unix.SHUT_RDWR)
			}
		}()
	}
}

// helperDo makes a request's call on the socket fds[0]; binds is held by
// a bind to a path, which changes the process's working directory and
// umask.
func helperDo(op byte, flags int, fds []int, addr, data []byte, binds *sync.Mutex) (val int64, errno unix.Errno) {
	switch {
	case op == helperBind && len(fds) == 2:
		// A path: from the directory the warden's walk started at, with
		// the task's umask (flags).
		binds.Lock()
		defer binds.Unlock()
		unix.Umask(flags)
		if err := unix.Fchdir(fds[1]); err != nil {
			return 0, errnoOf(err)
		}
		return 0, rawBind(fds[0], addr)
	case op == helperBind:
		return 0, rawBind(fds[0], addr)
	case op == helperConnect:
		return 0, rawSockCall(unix.SYS_CONNECT, fds[0], addr)
	case op == helperSend:
		sent, errno := rawSendmsg(fds[0], addr, data, nil, flags)
		return int64(sent), errno
	}
	return 0, unix.EINVAL
}

// retryEINTR makes call again while a signal interrupts it: a record of
// the helper's socket is sent whole or not at all.
func retryEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
