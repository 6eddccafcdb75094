package warden

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The warden's threads: the workers that receive and carry out calls, the
// turn that lets one of them at a time wait in receive, and the FIFO
// openers that make the calls which may block as long as the task's would.

// Workers is how many calls the warden carries out at once. A call can
// block (an open of a FIFO waits for its other end); the others wait in the
// kernel meanwhile.
const Workers = 8

// Threads is how many threads the warden holds: a worker's and a FIFO
// opener's, for each worker, and the reader of the socket helper's answers.
// Serve makes them all at once and keeps them: nothing the sandbox does
// makes the launcher create a thread, which a fork flood inside could make
// impossible.
const Threads = 2*Workers + 1

// Serve answers notifications until every task of the sandbox is gone.
func (w *Warden) Serve() {
	syncWakeUp(w.listener)
	w.receiver = make(chan struct{}, 1)
	w.receiver <- struct{}{}
	w.openers = make(chan fifoOpener, Workers)
	for range Workers {
		o, err := newFIFOOpener()
		if err != nil {
			w.fatal(err)
			return
		}
		w.openers <- o
	}
	var wg sync.WaitGroup
	for range Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
}

// work runs on a thread of its own: with its own umask (set to each task's)
// and, for a launcher run by root, without the capabilities the task lacks.
// The thread is never handed back to the Go runtime.
func (w *Warden) work() {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		w.fatal(fmt.Errorf("unshare(CLONE_FS): %w", err))
		return
	}
	if err := dropCapabilities(); err != nil {
		w.fatal(err)
		return
	}
	r := &turn{receiver: w.receiver}
	for {
		r.take()
		n, err := receive(w.listener)
		switch {
		case err == nil:
			w.handle(n, r)
		case err == unix.EINTR:
		case err == unix.ENOENT && !w.ended():
			// The task died before its call was received.
		default:
			r.yield() // the next worker finds the listener gone too
			return    // the listener failed, or no task of the sandbox is left
		}
	}
}

// A turn is a worker's hold on the right to receive. Only one worker waits
// in receive: the kernel wakes every thread waiting on a listener for each
// notification, and eight threads woken for every call of the sandbox cost
// more than the call. The worker holding the turn carries out the calls it
// receives itself and keeps the turn; before a call that may wait for as
// long as the task's own would (a FIFO's other end, a connect, room to
// send, the socket helper), it yields the turn to a free worker, and takes
// it again, after any other, once done.
type turn struct {
	receiver chan struct{}
	held     bool
}

func (r *turn) take() {
	if !r.held {
		<-r.receiver
		r.held = true
	}
}

func (r *turn) yield() {
	if r.held {
		r.held = false
		r.receiver <- struct{}{}
	}
}

// ended reports whether every task the filter applied to is gone: the
// listener then hangs up, and receive fails at once, for good.
func (w *Warden) ended() bool {
	fds := []unix.PollFd{{Fd: int32(w.listener), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLHUP != 0
}

// fatal stops the warden: every further call of the sandbox fails (the
// kernel answers ENOSYS once the listener is gone), never passes.
// The listener is closed once: closed twice, its number could meanwhile
// name another of the launcher's descriptors.
func (w *Warden) fatal(err error) {
	w.stop.Do(func() {
		fmt.Fprintf(os.Stderr, "claude-sandbox: the warden stopped: %v\n", err)
		unix.Close(w.listener)
	})
}

// dropCapabilities clears the calling thread's effective capabilities, which
// only a launcher run by root has: the sandbox has none, and the warden acts
// for it.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective == 0 && data[1].Effective == 0 {
		return nil
	}
	data[0].Effective, data[1].Effective = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// blocking runs call, which may block for as long as the task's own call
// would (an open of a FIFO, a connect), on an opener's thread, while the
// worker watches whether the task is still there. When it is gone, wake
// makes the call return, and blocking waits for it.
func (w *Warden) blocking(t *task, call func() (int, error), wake func()) (int, error) {
	t.turn.yield()
	o := <-w.openers // one is free: a worker holds at most one at a time
	defer func() { w.openers <- o }()
	done := make(chan fifoOpened, 1)
	o <- fifoOpen{call, done}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.fd, r.err
		case <-tick.C:
			if valid(w.listener, t.id) {
				continue
			}
			wake()
			r := <-done
			return r.fd, r.err
		}
	}
}

// A fifoOpener makes calls that block (opens of FIFOs, connects) on a
// thread of its own, as unprivileged as a worker's: the call blocks until
// its other end comes, while the worker watches whether the task is still
// there. The thread then waits for the next call; it is never handed back
// to the Go runtime.
type fifoOpener chan fifoOpen

type fifoOpen struct {
	call func() (int, error)
	done chan<- fifoOpened
}

type fifoOpened struct {
	fd  int
	err error
}

func newFIFOOpener() (fifoOpener, error) {
	o := make(fifoOpener)
	ready := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := dropCapabilities()
		ready <- err
		if err != nil {
			return // the thread ends with the goroutine
		}
		for req := range o {
			fd, err := req.call()
			req.done <- fifoOpened{fd, err}
		}
	}()
	return o, <-ready
}
