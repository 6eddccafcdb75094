package sandbox

import "strconv"

// bwrap's options: the plan's operations and namespaces, and the rest the
// argv uses. No other code writes an option name.
const (
	OpBind      Op = "--bind"        // SRC DEST, read-write
	OpRoBind    Op = "--ro-bind"     // SRC DEST, read-only
	OpRoBindTry Op = "--ro-bind-try" // SRC DEST, read-only, nothing if SRC is missing
	OpTmpfs     Op = "--tmpfs"       // DEST, an empty tmpfs
	OpDev       Op = "--dev"         // DEST, a new /dev
	OpProc      Op = "--proc"        // DEST, a new /proc
	OpDir       Op = "--dir"         // DEST, a directory
	// OpFile is FD DEST: a file made with what bwrap reads from the
	// descriptor, on a file system of the sandbox's own; rendered after
	// optPerms, since bwrap otherwise makes it writable by anyone.
	OpFile Op = "--file"

	UnshareUser      Unshare = "--unshare-user"
	UnshareIPC       Unshare = "--unshare-ipc"
	UnsharePID       Unshare = "--unshare-pid"
	UnshareUTS       Unshare = "--unshare-uts"
	UnshareCgroupTry Unshare = "--unshare-cgroup-try" // where the kernel has cgroup namespaces
	UnshareNet       Unshare = "--unshare-net"

	optDieWithParent = "--die-with-parent"
	optCapDrop       = "--cap-drop"
	optClearenv      = "--clearenv"
	optChdir         = "--chdir"
	optSeccomp       = "--seccomp"
	optStatusFD      = "--json-status-fd"
	optSetenv        = "--setenv"
	optPerms         = "--perms"
	// filePerms are the permissions of a file bwrap makes, git's own for
	// its configuration.
	filePerms = "0644"
)

// BwrapArgs are the plan's bwrap options, which the launcher hands bwrap
// on its --args descriptor.
func (p *Plan) BwrapArgs() []string { return p.render(false) }

// RedactedArgs are BwrapArgs with the values copied from the caller, and
// the session token, shown as EnvVar.Shown: what `claude-sandbox argv`
// prints.
func (p *Plan) RedactedArgs() []string { return p.render(true) }

// render writes the options in the order the argv has always had. bwrap
// takes the options that are not file-system operations (the namespaces,
// --chdir, the descriptors) before it mounts anything, so only the
// mounts' order among themselves matters: that is the plan's.
func (p *Plan) render(redact bool) []string {
	var args []string
	for _, ns := range p.Namespaces {
		if ns.Unshare != UnshareNet {
			args = append(args, string(ns.Unshare))
		}
	}
	args = append(args, optDieWithParent, optCapDrop, "ALL", optClearenv)
	// The cover of the login comes with the network's part of the plan,
	// after the descriptors.
	for _, m := range p.Mounts {
		if m.Rule != RuleCredentialsFile {
			args = m.append(args)
		}
	}
	args = append(args, optChdir, p.Chdir, optSeccomp, strconv.Itoa(p.SeccompFD), optStatusFD, strconv.Itoa(p.StatusFD))
	for _, m := range p.Mounts {
		if m.Rule == RuleCredentialsFile {
			args = m.append(args)
		}
	}
	for _, ns := range p.Namespaces {
		if ns.Unshare == UnshareNet {
			args = append(args, string(ns.Unshare))
		}
	}
	for _, v := range p.Env {
		value := v.Value
		if redact {
			value = v.Shown
		}
		args = append(args, optSetenv, v.Name, value)
	}
	return args
}

func (m Mount) append(args []string) []string {
	switch m.Op {
	case OpBind, OpRoBind, OpRoBindTry:
		return append(args, string(m.Op), m.Source, m.Dest)
	case OpFile:
		return append(args, optPerms, filePerms, string(m.Op), strconv.Itoa(m.FD), m.Dest)
	}
	return append(args, string(m.Op), m.Dest)
}
