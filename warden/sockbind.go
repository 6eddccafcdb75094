package warden

import "golang.org/x/sys/unix"

// bind gives the task's socket addr: an address of another family, or an
// unnamed one, as it is; an abstract name where the sandbox may use it; a
// path through the warden's walk (bindPath).
func (w *Warden) bind(s *socket, addr []byte) unix.Errno {
	a, ok := parseUnix(addr)
	if s.domain != unix.AF_UNIX || !ok {
		return rawBind(s.fd, addr)
	}
	if len(addr) > unix.SizeofSockaddrUnix {
		return unix.EINVAL // as the kernel (resolveName)
	}
	if a.abstract {
		return w.bindAbstract(s, addr)
	}
	return w.bindPath(s, a.path, addr)
}

// bindAbstract binds the task's socket to an abstract name, by the route
// the sandbox's network allows, or refuses it.
func (w *Warden) bindAbstract(s *socket, addr []byte) unix.Errno {
	switch w.abstractRoute(addr[3:]) {
	case byHelper:
		_, errno := w.helperCall(helperBind, s, []int{s.fd}, addr, nil, 0)
		return errno
	case direct:
		return rawBind(s.fd, addr)
	}
	return unix.EPERM
}

// bindPath binds the task's socket to path, addr's: the walk finds its
// directory and the rules check its name; the socket helper then makes it
// (bindFree).
func (w *Warden) bindPath(s *socket, path string, addr []byte) unix.Errno {
	if w.helper == nil {
		return unix.EPERM
	}
	wk, err := w.walkerFor(s.task)
	if err != nil {
		return errnoOf(err)
	}
	start, err := s.task.start(atFDCWD, path)
	if err != nil {
		return errnoOf(err)
	}
	if start >= 0 {
		defer unix.Close(start)
	}
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if r.dir < 0 {
		return unix.EADDRINUSE // a process's fd/N: it exists
	}
	if wk.viaProc {
		// The helper's kernel would read /proc/self, and a process's
		// fd/N, cwd and root, as the helper's, not the task's.
		return w.refuseBind(r, "a unix socket bound through a name of /proc, which would mean the socket helper, not the task, to the kernel")
	}
	if e := w.check(r); e != 0 {
		return e
	}
	umask, err := s.task.umask()
	if err != nil {
		return errnoOf(err)
	}
	from := start
	if from < 0 {
		from = wk.root
	}
	return w.bindFree(s, r, from, addr, umask)
}

// bindFree has the socket helper bind the task's socket at r, a name the
// walk found from the directory from and the rules let through, and
// records the file made as the sandbox's own.
//
// The helper binds with the task's own address (the kernel keeps it as
// given), from the very descriptor the walk started at. No link, rename
// or symbolic link is made meanwhile, and the name must be free (as the
// kernel's bind demands), so the file it makes is the one the walk
// checked; whether it is, the kernel says after (boundAt).
func (w *Warden) bindFree(s *socket, r resolved, from int, addr []byte, umask uint32) unix.Errno {
	w.sockets.names.Lock()
	defer w.sockets.names.Unlock()
	var st unix.Stat_t
	if err := unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
		return unix.EADDRINUSE
	}
	if _, e := w.helperCall(helperBind, s, []int{s.fd, from}, addr, nil, int(umask)); e != 0 {
		return e
	}
	file, ok := w.boundAt(s, r)
	if !ok {
		// Bound elsewhere than checked, by a race with the outside: the
		// socket can never be reached, nor send (a bound socket cannot be
		// unbound, but one shut down refuses every connect and datagram).
		_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
		return w.refuseBind(r, "a unix socket the kernel bound elsewhere than where the warden checked")
	}
	if id, _, err := statSock(file, "", unix.AT_EMPTY_PATH); err == nil {
		w.siblings.record(r.dir, id)
	}
	w.sockets.add(file)
	return 0
}

// refuseBind reports a refused bind at r, and answers EPERM.
func (w *Warden) refuseBind(r resolved, why string) unix.Errno {
	if w.Refused != nil {
		w.Refused(fdPath(r.dir)+"/"+r.name, why)
	}
	return unix.EPERM
}
