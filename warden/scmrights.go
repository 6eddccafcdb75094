package warden

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// translateControl rewrites the descriptors of SCM_RIGHTS messages, which
// are numbers in the task's table, as the same files in the warden's.
// SCM_CREDENTIALS on a unix socket is refused: the kernel checks it against
// the sender, which is the warden, and the sandbox has no PID of the
// warden's to claim. A header whose length runs short of itself or past
// the buffer fails the send with EINVAL, as the kernel's would.
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
	msgs, err := unix.ParseSocketControlMessage(out)
	if err != nil {
		return nil, nil, unix.EINVAL
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET {
			continue
		}
		switch {
		case m.Header.Type == unix.SCM_CREDENTIALS && s.domain == unix.AF_UNIX:
			closeAll()
			return nil, nil, unix.EPERM
		case m.Header.Type == unix.SCM_RIGHTS:
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				closeAll()
				return nil, nil, unix.EINVAL
			}
			for i, taskFD := range fds {
				fd, err := unix.PidfdGetfd(s.pidfd, taskFD, 0)
				if err != nil {
					closeAll()
					return nil, nil, unix.EBADF
				}
				held = append(held, fd)
				// m.Data is out's own bytes: the message is rewritten in place.
				binary.NativeEndian.PutUint32(m.Data[4*i:], uint32(fd))
			}
		}
	}
	return out, closeAll, 0
}
