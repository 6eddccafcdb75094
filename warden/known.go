package warden

import (
	"sync"

	"golang.org/x/sys/unix"
)

// What the warden learns of a task once: its umask and its IDs, which it
// would otherwise read from /proc/TID/status (10 to 14 µs, most of a
// carried-out call's own work) at every call that makes a name. The umask
// decides the mode of what the warden makes for the task; wrong, it would
// make a private key readable by every user of the host, so an entry is
// used only where it provably still holds, and a doubt reads the status
// file as before (ADR 0041). The IDs never change for a task; the umask
// changes only by umask(2), which the filter sends to the warden (filter.go):
//
//   - A task is known by its pidfs inode (Linux 6.9), which no other task
//     of the boot ever has: a thread that took a dead one's TID, in a
//     session that makes more tasks than pid_max, is another task, and
//     read anew. A kernel without pidfs, or without pidfds of threads,
//     caches nothing.
//   - Threads made with CLONE_FS share one umask, and unshare(CLONE_FS) or
//     a clone without it copies the umask at that moment: which tasks share
//     one cannot be seen from outside, so every umask call anywhere in the
//     sandbox makes every entry stale (changes). Children, forked, vforked
//     or cloned, are new tasks and read once; exec keeps the umask, and the
//     entry with it.
//   - The warden lets umask go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the
//     kernel changes the mask only after the answer. A status read while a
//     umask call is answered but perhaps not yet carried out (pending) may
//     show the old mask, and is used for its own call only (the umask call
//     and that one are concurrent, and either mask is what the kernel could
//     give) but never kept. A pending call is known carried out once its
//     task makes another call the warden sees, or its status shows the mask
//     it asked for (carried out, or a call that changes nothing), or the
//     task is gone.
//   - A thread that execs in a process of several threads takes its leader's
//     TID, and with it the leader's pidfs inode: the leader's entry would
//     then stand for a thread whose umask may differ (after
//     unshare(CLONE_FS)). A leader's umask is kept only when it was read
//     while its process had one thread: every thread made since started
//     with the same mask, and any change since is a umask call.
type knownTasks struct {
	mu    sync.Mutex
	byTID map[int]knownTask
	// changes counts the umask calls received.
	changes uint64
	// pending are the umask calls answered but not known carried out, by
	// TID.
	pending map[int]pendingUmask
	// overflowed: more umask calls were pending at once than are kept;
	// nothing is kept for the rest of the session.
	overflowed bool
}

type knownTask struct {
	ino     uint64 // the thread's pidfs inode
	changes uint64 // knownTasks.changes when read
	status  taskStatus
	// umaskHolds is false for a leader read while its process had other
	// threads: its IDs are kept, its umask read again at each call.
	umaskHolds bool
}

type pendingUmask struct {
	mask uint32
	call uint64 // knownTasks.changes after it was received
}

// maxKnown and maxPending bound what a session can make the warden hold,
// which may make millions of tasks: a new entry in a full table takes an
// old one's place.
const (
	maxKnown   = 1024
	maxPending = 64
)

func newKnownTasks() *knownTasks {
	return &knownTasks{byTID: map[int]knownTask{}, pending: map[int]pendingUmask{}}
}

// umaskCalled hears of a umask call by tid, received and about to be let
// go on.
func (k *knownTasks) umaskCalled(tid int, mask uint32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.changes++
	if _, ok := k.pending[tid]; !ok && len(k.pending) >= maxPending {
		k.overflowed = true
		clear(k.byTID)
		return
	}
	k.pending[tid] = pendingUmask{mask: mask & 0o777, call: k.changes}
}

// status is t's status as the kernel would show it now: the entry learned
// when it still holds (needUmask: for the umask too), else the status file,
// kept when nothing can have changed it meanwhile. umaskRead says whether
// its umask is the task's.
func (k *knownTasks) status(t *task, needUmask bool) (st *taskStatus, umaskRead bool, err error) {
	ino, identified := pidfsInode(t.tid)
	if identified {
		if st, umaskRead, ok := k.lookup(t.tid, ino, needUmask); ok {
			return st, umaskRead, nil
		}
	}
	return k.learn(t.tid, ino, identified)
}

// lookup is the entry of the thread tid whose pidfs inode is ino, if it
// holds what the caller needs.
func (k *knownTasks) lookup(tid int, ino uint64, needUmask bool) (st *taskStatus, umaskRead, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	// The task makes a call: a umask call it made before is carried out
	// (were it another task on a reused TID, that one is gone).
	delete(k.pending, tid)
	e, found := k.byTID[tid]
	if !found || e.ino != ino {
		return nil, false, false
	}
	umaskRead = e.umaskHolds && e.changes == k.changes
	if !umaskRead && needUmask {
		return nil, false, false
	}
	status := e.status
	return &status, umaskRead, true
}

// learn reads the status file of the thread tid, whose pidfs inode is ino
// (identified: known), and keeps what it read unless a umask call may have
// changed it meanwhile.
func (k *knownTasks) learn(tid int, ino uint64, identified bool) (*taskStatus, bool, error) {
	k.mu.Lock()
	keep := identified && !k.overflowed
	changes := k.changes
	pending := len(k.pending) > 0
	k.mu.Unlock()
	if keep && pending {
		keep = k.settle()
	}
	st, err := readTaskStatus(tid)
	if err != nil || !keep {
		return st, true, err
	}
	if again, ok := pidfsInode(tid); ok && again == ino {
		// Else the status may be another task's: not kept.
		k.keep(tid, knownTask{ino: ino, changes: changes, status: *st, umaskHolds: st.outerTgid != tid || st.threads == 1})
	}
	return st, true, nil
}

// keep enters e for the thread tid, unless a umask call came since it was
// read.
func (k *knownTasks) keep(tid int, e knownTask) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.changes != e.changes || k.overflowed {
		return
	}
	if _, ok := k.byTID[tid]; !ok && len(k.byTID) >= maxKnown {
		for old := range k.byTID {
			delete(k.byTID, old)
			break
		}
	}
	k.byTID[tid] = e
}

// settle drops the pending umask calls known carried out, from their
// tasks' status files, and reports whether none is left.
func (k *knownTasks) settle() bool {
	k.mu.Lock()
	calls := make(map[int]pendingUmask, len(k.pending))
	for tid, p := range k.pending {
		calls[tid] = p
	}
	k.mu.Unlock()
	for tid, p := range calls {
		st, err := readTaskStatus(tid)
		gone := err == unix.ENOENT || err == unix.ESRCH
		if !gone && (err != nil || st.umask != p.mask) {
			return false // perhaps still to be carried out
		}
		k.mu.Lock()
		if k.pending[tid] == p {
			delete(k.pending, tid)
		}
		k.mu.Unlock()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.pending) == 0
}

// pidfsMagic is PID_FS_MAGIC, pidfs' f_type.
const pidfsMagic = 0x50494446

// onPidfs reports whether pidfds of threads (PIDFD_THREAD) live on pidfs,
// where each has its task's own inode: before Linux 6.9 every pidfd had
// one anonymous inode, which tells no task from another.
var onPidfs = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(unix.Gettid(), pidfdThread)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == pidfsMagic
})

// pidfsInode is the pidfs inode of the thread tid; ok is false where the
// kernel gives none (onPidfs) or the thread is gone.
func pidfsInode(tid int) (ino uint64, ok bool) {
	if !onPidfs() {
		return 0, false
	}
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}
