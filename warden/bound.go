package warden

import (
	"encoding/binary"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// What the kernel bound a socket to. A bind to a path is made by the socket
// helper, from the very directory the walk started at; what the warden
// records as the sandbox's own is then not the file at the name it checked
// but the file the kernel says the socket is bound to, and only if the two
// are one (ADR 0031).

// siocUnixFile is SIOCUNIXFILE: on a bound unix socket, an O_PATH
// descriptor of its file. It needs CAP_NET_ADMIN over the socket's network
// namespace, which the launcher has over the sandbox's own: the sandbox's
// user namespace owns it, and the launcher's user owns that.
const siocUnixFile = unix.SIOCPROTOPRIVATE

// The kernel's socket table for unix sockets (linux/unix_diag.h), which
// golang.org/x/sys does not name.
const (
	udiagShowVFS = 0x2 // UDIAG_SHOW_VFS
	unixDiagVFS  = 1   // UNIX_DIAG_VFS
	diagReqSize  = 24  // struct unix_diag_req
	diagMsgSize  = 16  // struct unix_diag_msg
)

// boundAt returns an O_PATH descriptor of the socket file at r if the kernel
// bound s to it, and false otherwise.
func (w *Warden) boundAt(s *socket, r resolved) (int, bool) {
	here, err := unix.Openat(r.dir, r.name, pathFlags, 0)
	if err != nil {
		return -1, false
	}
	var st unix.Stat_t
	if unix.Fstat(here, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK || !w.sockets.diag.boundTo(s.fd, st) {
		unix.Close(here)
		return -1, false
	}
	return here, true
}

// sockDiag asks the kernel which file a socket is bound to: the socket
// itself (SIOCUNIXFILE) where the warden may, else the kernel's table of
// the warden's network namespace (sock_diag), which is the sandbox's when
// it shares the container's (network = open).
type sockDiag struct {
	mu     sync.Mutex
	fd     int
	opened bool
}

// boundTo reports whether the unix socket sock is bound to the file st.
func (d *sockDiag) boundTo(sock int, st unix.Stat_t) bool {
	if f, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), siocUnixFile, 0); errno == 0 {
		var b unix.Stat_t
		err := unix.Fstat(int(f), &b)
		unix.Close(int(f))
		return err == nil && b.Dev == st.Dev && b.Ino == st.Ino
	}
	var s unix.Stat_t
	if unix.Fstat(sock, &s) != nil {
		return false
	}
	dev, ino, err := d.vfs(uint32(s.Ino))
	// The table gives the kernel's own device number and 32 bits of the
	// inode's.
	return err == nil && dev>>20 == unix.Major(st.Dev) && dev&(1<<20-1) == unix.Minor(st.Dev) && ino == uint32(st.Ino)
}

// vfs asks the kernel's table for the file the socket with inode sockIno
// (in sockfs) is bound to: its device and inode.
func (d *sockDiag) vfs(sockIno uint32) (dev, ino uint32, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.opened {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return 0, 0, err
		}
		d.fd, d.opened = fd, true
	}
	req := diagRequest(sockIno)
	if err := retryEINTR(func() error { return unix.Sendto(d.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}) }); err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 4096)
	for {
		var n int
		err := retryEINTR(func() (err error) { n, _, err = unix.Recvfrom(d.fd, buf, 0); return err })
		if err != nil {
			return 0, 0, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, 0, err
		}
		for _, m := range msgs {
			if m.Header.Seq != sockIno {
				continue // an answer to an earlier request, abandoned
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				return 0, 0, diagError(m.Data)
			case unix.SOCK_DIAG_BY_FAMILY:
				return diagVFS(m.Data, sockIno)
			}
		}
	}
}

// diagRequest asks for the file the unix socket with inode sockIno is
// bound to; the request's sequence number is the inode too.
func diagRequest(sockIno uint32) []byte {
	ne := binary.NativeEndian
	req := make([]byte, unix.NLMSG_HDRLEN+diagReqSize)
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], sockIno) // the sequence number: this request's own
	b := req[unix.NLMSG_HDRLEN:]
	b[0] = unix.AF_UNIX
	ne.PutUint32(b[4:], ^uint32(0)) // every state
	ne.PutUint32(b[8:], sockIno)
	ne.PutUint32(b[12:], udiagShowVFS)
	ne.PutUint32(b[16:], ^uint32(0)) // no cookie
	ne.PutUint32(b[20:], ^uint32(0))
	return req
}

// diagError is the error an NLMSG_ERROR answer carries, ENOENT if none.
func diagError(data []byte) error {
	if len(data) >= 4 {
		if e := int32(binary.NativeEndian.Uint32(data)); e < 0 {
			return unix.Errno(-e)
		}
	}
	return unix.ENOENT
}

// diagVFS reads the device and inode of the file the socket sockIno is
// bound to from its struct unix_diag_msg and the attributes after it.
func diagVFS(data []byte, sockIno uint32) (dev, ino uint32, err error) {
	ne := binary.NativeEndian
	if len(data) < diagMsgSize || ne.Uint32(data[4:]) != sockIno {
		return 0, 0, unix.ENOENT
	}
	for a := data[diagMsgSize:]; len(a) >= unix.SizeofRtAttr; {
		l, typ := int(ne.Uint16(a)), ne.Uint16(a[2:])
		if l < unix.SizeofRtAttr || l > len(a) {
			break
		}
		if typ == unixDiagVFS && l >= unix.SizeofRtAttr+8 {
			return ne.Uint32(a[unix.SizeofRtAttr+4:]), ne.Uint32(a[unix.SizeofRtAttr:]), nil
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return 0, 0, unix.ENOENT // bound to no file
}
