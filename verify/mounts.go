package verify

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// visibleMounts returns the mounts a path lookup reaches: the kernel names
// the mount that holds each mount point (statx's mount id), so a mount
// hidden under a later one (a host mount under a tmpfs mask) is left out.
func visibleMounts() ([]mountinfo.Mount, error) {
	all, err := mountinfo.Read("self")
	if err != nil {
		return nil, err
	}
	var out []mountinfo.Mount
	for _, m := range all {
		var st unix.Statx_t
		if err := unix.Statx(unix.AT_FDCWD, m.Point, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &st); err != nil {
			continue // hidden below a mask
		}
		if st.Mask&unix.STATX_MNT_ID == 0 {
			return nil, errors.New("this kernel does not report mount ids (statx STATX_MNT_ID needs Linux 5.8)")
		}
		if st.Mnt_id == uint64(m.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}

// mountAt returns the visible mount whose mount point is path.
func (f *facts) mountAt(path string) (mountinfo.Mount, bool) {
	for _, m := range f.mounts {
		if m.Point == path {
			return m, true
		}
	}
	return mountinfo.Mount{}, false
}

// finalMounts returns the last mount of the plan at each point: the one
// on top. The directories and files the plan makes (--dir, --file) are no
// mounts.
func finalMounts(plan *sandbox.Plan) map[string]sandbox.Mount {
	out := map[string]sandbox.Mount{}
	for _, m := range plan.Mounts {
		if m.Op != sandbox.OpDir && m.Op != sandbox.OpFile {
			out[m.Dest] = m
		}
	}
	return out
}

// planEnv is the environment the plan gives the sandbox.
func planEnv(plan *sandbox.Plan) map[string]string {
	out := map[string]string{}
	for _, v := range plan.Env {
		out[v.Name] = v.Value
	}
	return out
}

// planned reports whether the visible mount m is the sandbox's doing: a
// mount of the plan, bwrap's own pieces of /dev and /proc, or a directory
// of the workspace bound onto itself (a pin or a protection the session
// asked for with CLAUDE_SANDBOX_PROTECT, which verify cannot see), which
// shows nothing but what the workspace shows anyway. Only a writable mount
// of the plan counts when writable is set.
func (f *facts) planned(m mountinfo.Mount, writable bool) bool {
	lv := f.launch
	for _, pm := range finalMounts(lv.plan) {
		switch {
		case (pm.Op == sandbox.OpDev || pm.Op == sandbox.OpProc) && subtree.Of(pm.Dest).Contains(m.Point):
			return true
		case pm.Dest == m.Point && !(writable && pm.Op.ReadOnly()):
			return true
		}
	}
	ws, ok := f.mountAt(lv.plan.Workspace)
	if !ok || !subtree.Of(ws.Point).Contains(m.Point) || m.Dev != ws.Dev {
		return false
	}
	rel, _ := filepath.Rel(ws.Point, m.Point)
	return m.Root == filepath.Join(ws.Root, rel)
}

// mountsPrivate: no mount of the sandbox receives mounts from outside or
// sends its own out. A mount with master:N (or shared:N) in its optional
// fields gets every mount made later in its peer group outside, with that
// mount's own flags: writable under a path the sandbox sees read-only, and
// visible under a mask. Hidden mounts count too: a mount below a mask would
// receive as well.
func mountsPrivate(*facts) (string, error) {
	all, err := mountinfo.Read("self")
	if err != nil {
		return "", err
	}
	var open []string
	for _, m := range all {
		if len(m.Optional) > 0 {
			open = append(open, m.Point+" ("+strings.Join(m.Optional, " ")+")")
		}
	}
	if len(open) > 0 {
		return "", fmt.Errorf("%d mounts receive or send mounts outside, such as %s", len(open), strings.Join(open[:min(len(open), 3)], ", "))
	}
	return fmt.Sprintf("%d mounts, none receives from outside", len(all)), nil
}
