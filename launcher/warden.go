package launcher

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// wardenRules are what the warden refuses, as the plan states them (but
// for what init reports: readWardenMessage), and the log its refusals are
// recorded in.
func wardenRules(pr *Prepared, stderr io.Writer) (warden.Rules, *egress.Log) {
	// The plan's rules on names reach the warden as the one value it
	// states them in; what init reports of the sandbox comes later.
	rules := warden.Rules{Rules: pr.Plan.NameRules, Siblings: pr.Running.siblings, Workspace: pr.Plan.Workspace}
	return rules, &egress.Log{Path: filepath.Join(pr.Launch.Home, layout.DenialsLog), Workspace: pr.Plan.Workspace, Errors: stderr}
}

// startWarden receives the warden's listener and the sandbox's own file
// systems from init, and serves it.
func (s *services) startWarden(conn *net.UnixConn) error {
	msg, fds, err := receiveFDs(conn, 2)
	if err != nil {
		return fmt.Errorf("the sandbox did not hand over the warden's listener and socket helper: %w", err)
	}
	fd := fds[0]
	helper := os.NewFile(uintptr(fds[1]), "socket-helper")
	if err := s.readWardenMessage(msg); err != nil {
		unix.Close(fd)
		helper.Close()
		return err
	}
	s.rules.Helper = helper
	w, err := warden.New(fd, s.rules)
	if err != nil {
		unix.Close(fd)
		helper.Close()
		return err
	}
	w.Refused = s.refused.RecordPath
	go w.Serve()
	return nil
}

// readWardenMessage reads what init says with the warden's listener:
// "warden SCOPE locked=DEV,... DEV...", the scope on abstract sockets, the
// file systems the kernel's lock grants, and the sandbox's own.
func (s *services) readWardenMessage(msg string) error {
	fields := strings.Fields(msg)
	if len(fields) < 3 || fields[0] != "warden" || (fields[1] != scopeOn && fields[1] != scopeOff) || !strings.HasPrefix(fields[2], lockedField) {
		return fmt.Errorf("the sandbox sent %q where the warden's listener belongs", msg)
	}
	s.rules.AbstractScoped = fields[1] == scopeOn
	parse := func(f string) (uint64, error) {
		dev, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the sandbox sent %q as a device number", f)
		}
		return dev, nil
	}
	for _, f := range fields[3:] {
		dev, err := parse(f)
		if err != nil {
			return err
		}
		s.rules.Private = append(s.rules.Private, dev)
	}
	if list := strings.TrimPrefix(fields[2], lockedField); list != "" {
		for _, f := range strings.Split(list, ",") {
			dev, err := parse(f)
			if err != nil {
				return err
			}
			if !slices.Contains(s.rules.Private, dev) {
				return fmt.Errorf("the sandbox's lock grants device %d, not one of its own file systems", dev)
			}
			s.rules.Locked = append(s.rules.Locked, dev)
		}
	}
	return nil
}
