package warden

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"golang.org/x/sys/unix"
)

// A task is the thread a notification came from, seen through /proc of the
// warden's PID namespace.
type task struct {
	tid int
	id  uint64 // the notification
	// turn is the worker's, yielded before a wait as long as the task's
	// own call's.
	turn *turn
	// status holds the task's umask and its IDs in the sandbox's PID
	// namespace; read on first use, from known where it holds. Its umask
	// is the task's only when umaskRead.
	status    *taskStatus
	umaskRead bool
	known     *knownTasks // the warden's; nil reads the status file each time
}

type taskStatus struct {
	umask     uint32
	tgid, tid string // in the innermost PID namespace
	outerTgid int    // in the warden's
	threads   int    // of its process
}

// root opens the task's root directory.
func (t *task) root() (int, error) {
	return unix.Open(fmt.Sprintf("/proc/%d/root", t.tid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// start opens where path starts: for a relative path the task's working
// directory (AT_FDCWD) or its descriptor dirfd. An absolute path starts at
// the sandbox's root, which the walk holds: -1 then.
func (t *task) start(dirfd int, path string) (int, error) {
	if strings.HasPrefix(path, "/") {
		return -1, nil
	}
	return t.dir(dirfd)
}

// dir opens the task's working directory for AT_FDCWD, else its descriptor
// dirfd.
func (t *task) dir(dirfd int) (int, error) {
	if dirfd == atFDCWD {
		return unix.Open(fmt.Sprintf("/proc/%d/cwd", t.tid), unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if dirfd < 0 {
		return -1, unix.EBADF
	}
	return unix.Open(fmt.Sprintf("/proc/%d/fd/%d", t.tid, dirfd), unix.O_PATH|unix.O_CLOEXEC, 0)
}

// shortPath is how much of a path string's first read asks for.
const shortPath = 256

// string reads a NUL-terminated path from the task's memory, once: the
// warden acts on this copy, never on what the task's memory holds later.
func (t *task) string(addr uint64) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	page := uint64(os.Getpagesize())
	// Most paths are short: the first read asks for as much as a short
	// one needs, the next ones for the rest of each page.
	want := uint64(shortPath)
	for len(out) < unix.PathMax {
		// Read to the end of the page at most: the next one may not exist.
		n := min(want, page-(addr+uint64(len(out)))%page)
		want = page
		buf := make([]byte, n)
		local := []unix.Iovec{{Base: &buf[0], Len: n}}
		remote := []unix.RemoteIovec{{Base: uintptr(addr) + uintptr(len(out)), Len: int(n)}}
		got, err := unix.ProcessVMReadv(t.tid, local, remote, 0)
		if err != nil {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			if out == nil {
				return string(buf[:i]), nil
			}
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:got]...)
	}
	return "", unix.ENAMETOOLONG
}

// readStatus is the task's status; needUmask asks for its umask, which a
// known task's entry may no longer hold when its IDs still do.
func (t *task) readStatus(needUmask bool) (*taskStatus, error) {
	if t.status != nil && (t.umaskRead || !needUmask) {
		return t.status, nil
	}
	st, umaskRead := (*taskStatus)(nil), true
	var err error
	if t.known != nil {
		st, umaskRead, err = t.known.status(t, needUmask)
	} else {
		st, err = readTaskStatus(t.tid)
	}
	if err != nil {
		return nil, err
	}
	t.status, t.umaskRead = st, umaskRead
	return st, nil
}

// readTaskStatus reads the status file of the thread tid.
func readTaskStatus(tid int) (*taskStatus, error) {
	data, err := readProcFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return nil, err
	}
	return parseStatus(data)
}

// readProcFile reads a small file of /proc whole, into a buffer sized for
// the status file, with as few reads as the kernel allows: the kernel
// makes the text anew at each open, and os.ReadFile's stat and growing
// buffer cost a call of the sandbox's more than the few lines it needs.
func readProcFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 4096)
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// parseStatus reads Umask, Tgid, NStgid, NSpid and Threads from a status
// file's text; the last field of the two lists is the ID in the innermost
// namespace, the sandbox's.
func parseStatus(data []byte) (*taskStatus, error) {
	st := &taskStatus{}
	seen := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		rawName, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		name := string(rawName)
		if !slices.Contains(statusFields, name) {
			continue
		}
		fields := strings.Fields(string(value))
		if len(fields) == 0 {
			continue
		}
		switch name {
		case "Umask":
			u, err := strconv.ParseUint(fields[0], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("status: Umask %q: %w", fields[0], err)
			}
			st.umask = uint32(u)
			seen++
		case "NStgid":
			st.tgid = fields[len(fields)-1]
			seen++
		case "NSpid":
			st.tid = fields[len(fields)-1]
			seen++
		case "Tgid", "Threads":
			n, err := strconv.Atoi(fields[0])
			if err != nil {
				return nil, fmt.Errorf("status: %s %q: %w", name, fields[0], err)
			}
			if name == "Tgid" {
				st.outerTgid = n
			} else {
				st.threads = n
			}
			seen++
		}
	}
	if seen != len(statusFields) {
		return nil, fmt.Errorf("status: one of %s missing", strings.Join(statusFields, ", "))
	}
	return st, nil
}

// statusFields are the lines of a status file parseStatus reads.
var statusFields = []string{"Umask", "Tgid", "NStgid", "NSpid", "Threads"}

func (t *task) ids() (string, string, error) {
	st, err := t.readStatus(false)
	if err != nil {
		return "", "", err
	}
	return st.tgid, st.tid, nil
}

func (t *task) umask() (uint32, error) {
	st, err := t.readStatus(true)
	if err != nil {
		return 0, err
	}
	return st.umask, nil
}

// ctty returns the number of the task's controlling terminal (field 7 of
// /proc/TID/stat), 0 for none.
func (t *task) ctty() (uint64, error) {
	data, err := readProcFile(fmt.Sprintf("/proc/%d/stat", t.tid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// from its closing one.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 5 {
		return 0, fmt.Errorf("stat: too short")
	}
	return strconv.ParseUint(fields[4], 10, 64)
}

// pidfdThread is PIDFD_THREAD (Linux 6.9): a pidfd of one thread, whose
// descriptor table may be its own.
const pidfdThread = unix.O_EXCL

// pidfd opens a pidfd of the task: of the thread itself where the kernel
// can, else of its process. Whether it is still the task that asked is
// known only once the notification is checked to be live.
func (t *task) pidfd() (int, error) {
	fd, err := unix.PidfdOpen(t.tid, pidfdThread)
	if err != unix.EINVAL {
		return fd, err
	}
	fd, err = unix.PidfdOpen(t.tid, 0)
	if err != unix.EINVAL {
		return fd, err
	}
	tgid, err := t.outerTgid()
	if err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

// outerTgid is the task's process ID in the warden's PID namespace.
func (t *task) outerTgid() (int, error) {
	status, err := procstatus.Read(strconv.Itoa(t.tid))
	if err != nil {
		return 0, err
	}
	tgid, ok := status["Tgid"]
	if !ok {
		return 0, fmt.Errorf("status: no Tgid")
	}
	return strconv.Atoi(tgid)
}

// read copies n bytes at addr from the task's memory, once.
func (t *task) read(addr, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if addr == 0 {
		return nil, unix.EFAULT
	}
	buf := make([]byte, n)
	local := []unix.Iovec{{Base: &buf[0], Len: n}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: int(n)}}
	got, err := unix.ProcessVMReadv(t.tid, local, remote, 0)
	if err != nil || uint64(got) != n {
		return nil, unix.EFAULT
	}
	return buf, nil
}

// write copies b into the task's memory at addr (sendmmsg's lengths).
func (t *task) write(addr uint64, b []byte) error {
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	got, err := unix.ProcessVMWritev(t.tid, local, remote, 0)
	if err == nil && got != len(b) {
		err = unix.EFAULT
	}
	return err
}
