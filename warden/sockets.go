package warden

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unix sockets of the sandbox's own (ADR 0024). The sandbox may create unix
// sockets, but the filter cannot see which address a bind, connect or send
// names: it is in the task's memory. Every such call comes here. The warden
// reads the address once, takes the task's own socket (pidfd_getfd: the same
// open file description, so its type, flags and network namespace are
// kept), and makes the call on it itself:
//   - a bind to a path makes the socket file through the walk's directory,
//     and records the file's identity: the sandbox's own sockets;
//   - a connect or send to a path opens what the walk finds (O_PATH, never
//     following a link the walk did not follow), and goes ahead only if it
//     is one of the sandbox's own socket files, through /proc/self/fd/N of
//     that very descriptor: nothing renamed or swapped after the check can
//     change which socket is reached;
//   - an abstract name is the sandbox's own only in a network namespace of
//     its own (network = allowlist); in the container's it is refused;
//   - any other family's address (inet, netlink) is passed on as it was
//     read.
// The warden never lets the task's call go on by itself.

// A sockID is a socket file: its inode, and its birth time, so that an inode
// number freed and given to a socket made outside later is not mistaken for
// a sibling's (siblings.go: the registry outlives this warden).
type sockID struct {
	dev, ino uint64
	born     unix.StatxTimestamp
}

// ownSockets are the socket files the sandbox bound, each held open (O_PATH)
// while it has a name: a held inode cannot be freed and given to another
// file, so its device and inode number alone name it, on file systems
// without birth times too.
type ownSockets struct {
	// names is held for writing from a bind until its file is recorded,
	// and for reading by every link and rename: neither can put another
	// file under the name meanwhile.
	names      sync.RWMutex
	mu         sync.Mutex
	files      map[fileID]int
	privateNet bool
	scoped     bool // the helper reaches abstract names under Landlock's scope
	diag       sockDiag
}

// add records the socket file fd (O_PATH), which it keeps. Files no name
// leads to any more are let go first: no path can reach them.
func (o *ownSockets) add(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, held := range o.files {
		var h unix.Stat_t
		if unix.Fstat(held, &h) != nil || h.Nlink == 0 {
			unix.Close(held)
			delete(o.files, id)
		}
	}
	id := fileID{uint64(st.Dev), st.Ino}
	if old, ok := o.files[id]; ok {
		unix.Close(old)
	}
	o.files[id] = fd
}

func (o *ownSockets) has(id sockID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.files[fileID{id.dev, id.ino}]
	return ok
}

// statSock returns the identity of the file fd names (an O_PATH
// descriptor), and whether it is a socket.
func statSock(dir int, name string, flags int) (sockID, bool, error) {
	var st unix.Statx_t
	if err := unix.Statx(dir, name, flags|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return sockID{}, false, err
	}
	id := sockID{dev: unix.Mkdev(st.Dev_major, st.Dev_minor), ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.born = st.Btime
	}
	return id, st.Mode&unix.S_IFMT == unix.S_IFSOCK, nil
}

// Limits on what the warden copies from a task: a socket address, a
// message's data (a stream socket gets a shorter write, which every caller
// handles; a datagram larger than this is larger than any socket's send
// buffer), its control messages (the kernel's optmem_max is smaller), and
// sendmmsg's count (the kernel's UIO_MAXIOV).
const (
	maxAddr    = 128 // sizeof(struct sockaddr_storage)
	maxData    = 1 << 20
	maxControl = 1 << 16
	maxIovecs  = 1024
	maxMsgs    = 1024
)

// A message is a send's arguments, copied from the task.
type message struct {
	name    []byte
	data    []byte
	control []byte
	flags   int
}

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
		m, errno := s.readMsg(req.msg+uint64(i)*mmsghdrSize, int(req.flags))
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

// readAddr copies a bind's or connect's address from the task: a byte
// more than an address can hold at most, so that a longer one is refused.
func (s *socket) readAddr(req request) ([]byte, unix.Errno) {
	addr, err := s.task.read(req.addr, min(uint64(req.addrLen), maxAddr+1))
	if err != nil {
		return nil, errnoOf(err)
	}
	if len(addr) > maxAddr {
		return nil, unix.EINVAL
	}
	return addr, 0
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

// dataSize is how much of a send of n bytes the warden copies: a stream
// socket takes a part, anything else the whole or nothing.
func (s *socket) dataSize(n uint64) (uint64, unix.Errno) {
	if n <= maxData {
		return n, 0
	}
	if s.typ == unix.SOCK_STREAM {
		return maxData, 0
	}
	return 0, unix.EMSGSIZE
}

// The 64-bit layouts of struct msghdr and struct mmsghdr.
const (
	msghdrSize  = 56
	mmsghdrSize = 64
	iovecSize   = 16
	cmsghdrSize = 16
)

// readMsg copies a struct msghdr and what it points to from the task.
func (s *socket) readMsg(addr uint64, flags int) (message, unix.Errno) {
	t := s.task
	h, err := t.read(addr, msghdrSize)
	if err != nil {
		return message{}, errnoOf(err)
	}
	le := binary.NativeEndian
	name, nameLen := le.Uint64(h[0:]), le.Uint32(h[8:])
	iov, iovLen := le.Uint64(h[16:]), le.Uint64(h[24:])
	control, controlLen := le.Uint64(h[32:]), le.Uint64(h[40:])
	m := message{flags: flags}
	if name != 0 && nameLen > 0 {
		if m.name, err = t.read(name, min(uint64(nameLen), maxAddr+1)); err != nil {
			return message{}, errnoOf(err)
		}
		if len(m.name) > maxAddr {
			return message{}, unix.EINVAL
		}
	}
	var errno unix.Errno
	if m.data, errno = s.readIovecs(iov, iovLen); errno != 0 {
		return message{}, errno
	}
	if control != 0 && controlLen > 0 {
		if controlLen > maxControl {
			return message{}, unix.ENOBUFS
		}
		if m.control, err = t.read(control, controlLen); err != nil {
			return message{}, errnoOf(err)
		}
	}
	return m, 0
}

// readIovecs copies the data an array of iovLen struct iovec at iov
// points to from the task, as much of it as dataSize lets a send take.
func (s *socket) readIovecs(iov, iovLen uint64) ([]byte, unix.Errno) {
	t := s.task
	le := binary.NativeEndian
	if iovLen > maxIovecs {
		return nil, unix.EMSGSIZE
	}
	vec, err := t.read(iov, iovLen*iovecSize)
	if err != nil {
		return nil, errnoOf(err)
	}
	var total uint64
	for i := range iovLen {
		total += le.Uint64(vec[i*iovecSize+8:])
	}
	size, errno := s.dataSize(total)
	if errno != 0 {
		return nil, errno
	}
	data := make([]byte, 0, size)
	for i := uint64(0); i < iovLen && uint64(len(data)) < size; i++ {
		base, n := le.Uint64(vec[i*iovecSize:]), le.Uint64(vec[i*iovecSize+8:])
		part, err := t.read(base, min(n, size-uint64(len(data))))
		if err != nil {
			return nil, errnoOf(err)
		}
		data = append(data, part...)
	}
	return data, 0
}

// A unix socket address, parsed.
type unixAddr struct {
	path     string // a name in the file system
	abstract bool
}

// parseUnix reads a struct sockaddr_un. ok is false for an address the
// kernel itself refuses or reads no name from (too short, another family,
// an unnamed bind): that one is passed on as it is.
func parseUnix(addr []byte) (a unixAddr, ok bool) {
	if len(addr) <= 2 || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return unixAddr{}, false
	}
	p := addr[2:]
	if p[0] == 0 {
		return unixAddr{abstract: true}, true
	}
	for i, c := range p {
		if c == 0 {
			p = p[:i]
			break
		}
	}
	return unixAddr{path: string(p)}, true
}

// sockaddrUnix is a struct sockaddr_un for path.
func sockaddrUnix(path string) []byte {
	b := binary.NativeEndian.AppendUint16(nil, unix.AF_UNIX)
	return append(append(b, path...), 0)
}

// procPath is the name by which the warden reaches the file it holds as fd,
// whatever is at its old name now.
func procPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

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

// bind gives the task's socket addr: an address of another family, or an
// unnamed one, as it is; an abstract name where the sandbox may use it; a
// path through the warden's walk (bindPath).
func (w *Warden) bind(s *socket, addr []byte) unix.Errno {
	a, ok := parseUnix(addr)
	if s.domain != unix.AF_UNIX || !ok {
		return rawBind(s.fd, addr)
	}
	if len(addr) > unix.SizeofSockaddrUnix {
		return unix.EINVAL // as the kernel (resolveName)
	}
	if a.abstract {
		return w.bindAbstract(s, addr)
	}
	return w.bindPath(s, a.path, addr)
}

// bindAbstract binds the task's socket to an abstract name, by the route
// the sandbox's network allows, or refuses it.
func (w *Warden) bindAbstract(s *socket, addr []byte) unix.Errno {
	switch w.abstractRoute(addr[3:]) {
	case byHelper:
		_, errno := w.helperCall(helperBind, s, []int{s.fd}, addr, nil, 0)
		return errno
	case direct:
		return rawBind(s.fd, addr)
	}
	return unix.EPERM
}

// bindPath binds the task's socket to path, addr's: the walk finds its
// directory and the rules check its name; the socket helper then makes it
// (bindFree).
func (w *Warden) bindPath(s *socket, path string, addr []byte) unix.Errno {
	if w.helper == nil {
		return unix.EPERM
	}
	wk, err := w.walkerFor(s.task)
	if err != nil {
		return errnoOf(err)
	}
	start, err := s.task.start(atFDCWD, path)
	if err != nil {
		return errnoOf(err)
	}
	if start >= 0 {
		defer unix.Close(start)
	}
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if r.dir < 0 {
		return unix.EADDRINUSE // a process's fd/N: it exists
	}
	if wk.viaProc {
		// The helper's kernel would read /proc/self, and a process's
		// fd/N, cwd and root, as the helper's, not the task's.
		return w.refuseBind(r, "a unix socket bound through a name of /proc, which would mean the socket helper, not the task, to the kernel")
	}
	if e := w.check(r); e != 0 {
		return e
	}
	umask, err := s.task.umask()
	if err != nil {
		return errnoOf(err)
	}
	from := start
	if from < 0 {
		from = wk.root
	}
	return w.bindFree(s, r, from, addr, umask)
}

// bindFree has the socket helper bind the task's socket at r, a name the
// walk found from the directory from and the rules let through, and
// records the file made as the sandbox's own.
//
// The helper binds with the task's own address (the kernel keeps it as
// given), from the very descriptor the walk started at. No link, rename
// or symbolic link is made meanwhile, and the name must be free (as the
// kernel's bind demands), so the file it makes is the one the walk
// checked; whether it is, the kernel says after (boundAt).
func (w *Warden) bindFree(s *socket, r resolved, from int, addr []byte, umask uint32) unix.Errno {
	w.sockets.names.Lock()
	defer w.sockets.names.Unlock()
	var st unix.Stat_t
	if err := unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
		return unix.EADDRINUSE
	}
	if _, e := w.helperCall(helperBind, s, []int{s.fd, from}, addr, nil, int(umask)); e != 0 {
		return e
	}
	file, ok := w.boundAt(s, r)
	if !ok {
		// Bound elsewhere than checked, by a race with the outside: the
		// socket can never be reached, nor send (a bound socket cannot be
		// unbound, but one shut down refuses every connect and datagram).
		_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
		return w.refuseBind(r, "a unix socket the kernel bound elsewhere than where the warden checked")
	}
	if id, _, err := statSock(file, "", unix.AT_EMPTY_PATH); err == nil {
		w.siblings.record(r.dir, id)
	}
	w.sockets.add(file)
	return 0
}

// refuseBind reports a refused bind at r, and answers EPERM.
func (w *Warden) refuseBind(r resolved, why string) unix.Errno {
	if w.Refused != nil {
		w.Refused(fdPath(r.dir)+"/"+r.name, why)
	}
	return unix.EPERM
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
		if err := s.task.write(vec+uint64(i)*mmsghdrSize+msghdrSize, b[:]); err != nil {
			return int64(i), 0
		}
	}
	return int64(len(msgs)), 0
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

// translateControl rewrites the descriptors of SCM_RIGHTS messages, which
// are numbers in the task's table, as the same files in the warden's.
// SCM_CREDENTIALS on a unix socket is refused: the kernel checks it against
// the sender, which is the warden, and the sandbox has no PID of the
// warden's to claim.
func (w *Warden) translateControl(s *socket, control []byte) ([]byte, func(), unix.Errno) {
	var held []int
	closeAll := func() {
		for _, fd := range held {
			unix.Close(fd)
		}
	}
	if len(control) == 0 {
		return nil, closeAll, 0
	}
	out := append([]byte{}, control...)
	le := binary.NativeEndian
	for off := 0; off+cmsghdrSize <= len(out); {
		size := int(le.Uint64(out[off:]))
		if size < cmsghdrSize || off+size > len(out) {
			closeAll()
			return nil, nil, unix.EINVAL
		}
		level, typ := int32(le.Uint32(out[off+8:])), int32(le.Uint32(out[off+12:]))
		if level == unix.SOL_SOCKET && typ == unix.SCM_CREDENTIALS && s.domain == unix.AF_UNIX {
			closeAll()
			return nil, nil, unix.EPERM
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_RIGHTS {
			for p := off + cmsghdrSize; p+4 <= off+size; p += 4 {
				fd, err := unix.PidfdGetfd(s.pidfd, int(int32(le.Uint32(out[p:]))), 0)
				if err != nil {
					closeAll()
					return nil, nil, unix.EBADF
				}
				held = append(held, fd)
				le.PutUint32(out[p:], uint32(fd))
			}
		}
		off += (size + 7) &^ 7
	}
	return out, closeAll, 0
}

// rawSockCall makes bind or connect with addr exactly as given.
func rawSockCall(nr uintptr, fd int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(nr, uintptr(fd), uintptr(p), uintptr(len(addr)))
	return errno
}

// rawBind binds fd to addr exactly as given. A bind a signal interrupted
// has made nothing (a path's file is unlinked again): it is made again,
// since the signal came to the warden or the helper, whose Go runtimes
// signal their own threads, and not to the task, which would get EINTR from
// no signal of its own.
func rawBind(fd int, addr []byte) unix.Errno {
	for {
		if errno := rawSockCall(unix.SYS_BIND, fd, addr); errno != unix.EINTR {
			return errno
		}
	}
}

// rawSendmsg sends one message, with name and control exactly as given.
func rawSendmsg(fd int, name, data, control []byte, flags int) (int, unix.Errno) {
	var h unix.Msghdr
	if len(name) > 0 {
		h.Name = &name[0]
		h.Namelen = uint32(len(name))
	}
	var iov unix.Iovec
	if len(data) > 0 {
		iov.Base = &data[0]
		iov.SetLen(len(data))
		h.Iov = &iov
		h.SetIovlen(1)
	}
	if len(control) > 0 {
		h.Control = &control[0]
		h.SetControllen(len(control))
	}
	n, _, errno := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&h)), uintptr(flags))
	return int(n), errno
}
