package warden

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// Where the fields of struct msghdr, struct mmsghdr and struct iovec are:
// the library's layouts (unix.Msghdr, unix.Mmsghdr, unix.Iovec). Their
// pointers, copied from the task, are addresses in the task's memory, not
// the warden's: they are read as numbers at these offsets, never as Go
// pointers.
const (
	msghdrName       = uint64(unsafe.Offsetof(unix.Msghdr{}.Name))
	msghdrNamelen    = uint64(unsafe.Offsetof(unix.Msghdr{}.Namelen))
	msghdrIov        = uint64(unsafe.Offsetof(unix.Msghdr{}.Iov))
	msghdrIovlen     = uint64(unsafe.Offsetof(unix.Msghdr{}.Iovlen))
	msghdrControl    = uint64(unsafe.Offsetof(unix.Msghdr{}.Control))
	msghdrControllen = uint64(unsafe.Offsetof(unix.Msghdr{}.Controllen))
	mmsghdrLen       = uint64(unsafe.Offsetof(unix.Mmsghdr{}.Len))
	iovecBase        = uint64(unsafe.Offsetof(unix.Iovec{}.Base))
	iovecLen         = uint64(unsafe.Offsetof(unix.Iovec{}.Len))
)

// readMsg copies a struct msghdr and what it points to from the task.
func (s *socket) readMsg(addr uint64, flags int) (message, unix.Errno) {
	t := s.task
	h, err := t.read(addr, unix.SizeofMsghdr)
	if err != nil {
		return message{}, errnoOf(err)
	}
	le := binary.NativeEndian
	name, nameLen := le.Uint64(h[msghdrName:]), le.Uint32(h[msghdrNamelen:])
	iov, iovLen := le.Uint64(h[msghdrIov:]), le.Uint64(h[msghdrIovlen:])
	control, controlLen := le.Uint64(h[msghdrControl:]), le.Uint64(h[msghdrControllen:])
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
	vec, err := t.read(iov, iovLen*unix.SizeofIovec)
	if err != nil {
		return nil, errnoOf(err)
	}
	var total uint64
	for i := range iovLen {
		total += le.Uint64(vec[i*unix.SizeofIovec+iovecLen:])
	}
	size, errno := s.dataSize(total)
	if errno != 0 {
		return nil, errno
	}
	data := make([]byte, 0, size)
	for i := uint64(0); i < iovLen && uint64(len(data)) < size; i++ {
		v := vec[i*unix.SizeofIovec:]
		base, n := le.Uint64(v[iovecBase:]), le.Uint64(v[iovecLen:])
		part, err := t.read(base, min(n, size-uint64(len(data))))
		if err != nil {
			return nil, errnoOf(err)
		}
		data = append(data, part...)
	}
	return data, 0
}
