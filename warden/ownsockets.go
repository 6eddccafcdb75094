package warden

import (
	"sync"

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
//
// One subject a file: the sandbox's own socket files (here); each call's
// operation, from the notification to its act (socketcall.go); what an
// operation copies from the task, within bounds (sockargs.go); unix
// addresses (sockaddr.go); who makes a call on an address, and which
// socket it may reach (sockroute.go); binds (sockbind.go); waiting in a
// blocking connect or send (sockwait.go); descriptors a message passes
// (scmrights.go); the calls made with an address exactly as given
// (rawsock.go).

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
