package warden

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sentMsg is a struct msghdr in this process's memory, and what it points to.
type sentMsg struct {
	name    []byte
	iov     [][]byte
	control []byte
	// nameLen, iovLen and controlLen, when not 0, are put in the header
	// instead of the true lengths.
	nameLen, iovLen, controlLen uint64
}

// header builds m's struct msghdr, pinned until the test ends, and returns
// its address.
func (m sentMsg) header(t *testing.T) uint64 {
	t.Helper()
	var pin runtime.Pinner
	t.Cleanup(pin.Unpin)
	h := &unix.Msghdr{}
	pin.Pin(h)
	if len(m.name) > 0 {
		pin.Pin(&m.name[0])
		h.Name = &m.name[0]
		h.Namelen = uint32(len(m.name))
	}
	if m.nameLen != 0 {
		h.Namelen = uint32(m.nameLen)
	}
	if len(m.iov) > 0 {
		vec := make([]unix.Iovec, len(m.iov))
		pin.Pin(&vec[0])
		for i, b := range m.iov {
			pin.Pin(&b[0])
			vec[i].Base = &b[0]
			vec[i].SetLen(len(b))
		}
		h.Iov = &vec[0]
		h.SetIovlen(len(vec))
	}
	if m.iovLen != 0 {
		h.Iovlen = m.iovLen
	}
	if len(m.control) > 0 {
		pin.Pin(&m.control[0])
		h.Control = &m.control[0]
		h.SetControllen(len(m.control))
	}
	if m.controlLen != 0 {
		h.Controllen = m.controlLen
	}
	return uint64(uintptr(unsafe.Pointer(h)))
}

// TestReadMsg reads struct msghdrs this process built with the library's
// types from its own memory, as the warden reads a task's: the name, the
// data of every iovec and the control messages come out as they went in,
// and each bound on what is copied refuses as the kernel would.
func TestReadMsg(t *testing.T) {
	self := &task{tid: os.Getpid()}
	stream := &socket{typ: unix.SOCK_STREAM, task: self}
	dgram := &socket{typ: unix.SOCK_DGRAM, task: self}
	addr := sockaddrUnix("/tmp/own.sock")
	control := unix.UnixRights(0, 1)
	big := bytes.Repeat([]byte{'x'}, maxData)

	got, errno := stream.readMsg(sentMsg{name: addr, iov: [][]byte{[]byte("ab"), []byte("cde")}, control: control}.header(t), unix.MSG_DONTWAIT)
	if errno != 0 {
		t.Fatalf("readMsg: %v", errno)
	}
	if !bytes.Equal(got.name, addr) || string(got.data) != "abcde" || !bytes.Equal(got.control, control) || got.flags != unix.MSG_DONTWAIT {
		t.Errorf("readMsg = name %q, data %q, control %x, flags %#x", got.name, got.data, got.control, got.flags)
	}
	got, errno = stream.readMsg(sentMsg{iov: [][]byte{big, []byte("more")}}.header(t), 0)
	if errno != 0 || len(got.data) != maxData {
		t.Errorf("a stream's send past %d bytes: %d bytes, %v; want the first %d", maxData, len(got.data), errno, maxData)
	}
	for _, tc := range []struct {
		name string
		s    *socket
		m    sentMsg
		want unix.Errno
	}{
		{"a name longer than any address", stream, sentMsg{name: make([]byte, maxAddr+1)}, unix.EINVAL},
		{"more iovecs than the kernel takes", stream, sentMsg{iov: [][]byte{[]byte("a")}, iovLen: maxIovecs + 1}, unix.EMSGSIZE},
		{"a datagram past the bound", dgram, sentMsg{iov: [][]byte{big, []byte("more")}}, unix.EMSGSIZE},
		{"control messages past the bound", stream, sentMsg{control: control, controlLen: maxControl + 1}, unix.ENOBUFS},
	} {
		if _, errno := tc.s.readMsg(tc.m.header(t), 0); errno != tc.want {
			t.Errorf("%s: readMsg answered %v, want %v", tc.name, errno, tc.want)
		}
	}
}
