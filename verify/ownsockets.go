package verify

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// The sandbox's own unix sockets (ADR 0024): what it binds it can reach;
// what it did not bind it cannot, whatever the kernel alone would say.

// unixSocketsOwn: a stream socket bound in /tmp accepts a connection, a
// datagram reaches a datagram socket of the sandbox's, and an abstract
// name the sandbox binds answers, unless the sandbox shares the
// container's abstract names (network = open) without Landlock's scope,
// where the warden must refuse it. The detail says which mode is in force
// and why.
func unixSocketsOwn(f *facts) (string, error) {
	private, err := allowlist(f)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("/tmp", "verify-sockets-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	stream := filepath.Join(dir, "stream.sock")
	if err := echoOnce("unix", stream); err != nil {
		return "", fmt.Errorf("a stream socket bound in /tmp: %v", err)
	}
	if err := datagramToOwn(filepath.Join(dir, "dgram.sock")); err != nil {
		return "", fmt.Errorf("a datagram to a socket bound in /tmp: %v", err)
	}
	// The warden binds through the socket helper, to whose kernel
	// /proc/self is the helper (ADR 0031).
	if err := bindProcSelf(dir); !errors.Is(err, unix.EPERM) {
		return "", fmt.Errorf("a bind through /proc/self/root: %v, not the warden's EPERM", err)
	}
	network := map[bool]string{true: "network = allowlist", false: "network = open"}[private]
	abstract := "an abstract name works"
	err = echoOnce("unix", fmt.Sprintf("@claude-sandbox-verify-%d", os.Getpid()))
	switch {
	case private || warden.LandlockABI() >= warden.ScopeABI:
		if err != nil {
			return "", fmt.Errorf("an abstract socket of the sandbox's (%s): %v", network, err)
		}
	case err == nil:
		return "", errors.New("an abstract name works with network = open and no Landlock scope: the container's abstract names, a host process's among them, are within reach")
	case !errors.Is(err, unix.EPERM):
		return "", fmt.Errorf("an abstract name with network = open and no Landlock scope failed with %v, not the warden's EPERM", err)
	default:
		abstract = "an abstract name refused (EPERM)"
	}
	return fmt.Sprintf("bind, listen and connect in /tmp and a datagram work, a bind through /proc/self refused, %s with %s; %s", abstract, network, doctor.UnixSocketMode()), nil
}

// bindProcSelf binds a socket in dir by a name through /proc/self/root,
// and reports how it went.
func bindProcSelf(dir string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrUnix{Name: "/proc/self/root" + dir + "/via-proc.sock"})
}

// echoOnce listens on addr, connects to it and reads what the listener
// wrote.
func echoOnce(network, addr string) error {
	l, err := net.Listen(network, addr)
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("own"))
			c.Close()
		}
	}()
	c, err := net.Dial(network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 8)
	n, _ := c.Read(buf)
	if string(buf[:n]) != "own" {
		return fmt.Errorf("read %q, not what the listener wrote", buf[:n])
	}
	return nil
}

func datagramToOwn(path string) error {
	r, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	if err := unix.Sendto(s, []byte("own"), 0, &unix.SockaddrUnix{Name: path}); err != nil {
		return err
	}
	buf := make([]byte, 8)
	n, _, err := r.ReadFromUnix(buf)
	if err != nil || string(buf[:n]) != "own" {
		return fmt.Errorf("received %q, %v", buf[:n], err)
	}
	return nil
}

// unixSocketForeignRefused: a socket file no bind of the sandbox's made (one
// made by mknod, which nothing listens on) is refused with EPERM, by
// connect and by a datagram: the warden's answer, where the kernel alone
// says ECONNREFUSED. So a socket of the host's, seen through the
// workspace or a read-only bind, is refused the same way.
func unixSocketForeignRefused(*facts) (string, error) {
	dir, err := os.MkdirTemp("/tmp", "verify-sockets-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "foreign.sock")
	if err := unix.Mknod(path, unix.S_IFSOCK|0o600, 0); err != nil {
		return "", fmt.Errorf("mknod a socket file: %v", err)
	}
	stream, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(stream)
	dgram, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dgram)
	addr := &unix.SockaddrUnix{Name: path}
	calls := []string{"connect", "sendto"}
	errs := []error{unix.Connect(stream, addr), unix.Sendto(dgram, []byte("x"), 0, addr)}
	for i, err := range errs {
		switch {
		case err == nil:
			return "", fmt.Errorf("%s to a socket file the sandbox did not bind succeeded", calls[i])
		case errors.Is(err, unix.ECONNREFUSED):
			return "", fmt.Errorf("%s to a socket file the sandbox did not bind reached the kernel (connection refused): no warden decides, so a host socket would answer", calls[i])
		case !errors.Is(err, unix.EPERM):
			return "", fmt.Errorf("%s failed with %v, not the warden's EPERM", calls[i], err)
		}
	}
	return "connect and sendto to a socket file the sandbox did not bind refused with EPERM (the kernel alone answers connection refused)", nil
}
