package launcher

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// newControlSocket makes the control socket: the launcher's end, and the
// child's, which bwrap passes to init as sandbox.ControlFD. Init hands
// the launcher its listening sockets over it and waits there for the
// answer that lets Claude run.
func newControlSocket() (control, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control-child"), nil
}

// receiveFD reads one message of init's and the one descriptor it carries.
func receiveFD(conn *net.UnixConn) (string, int, error) {
	msg, fds, err := receiveFDs(conn, 1)
	if err != nil {
		return "", -1, err
	}
	return msg, fds[0], nil
}

// receiveFDs reads one message of init's and the n descriptors it carries.
func receiveFDs(conn *net.UnixConn, n int) (string, []int, error) {
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4*n))
	size, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return "", nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return "", nil, errors.New("no descriptor arrived")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != n {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return "", nil, fmt.Errorf("%d descriptors arrived, not %d", len(fds), n)
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	return string(buf[:size]), fds, nil
}
