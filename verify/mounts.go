package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// mount is one line of /proc/self/mountinfo.
type mount struct {
	id, parent int
	dev        string // major:minor of the file system
	root       string // the directory of that file system mounted here
	point      string
	readOnly   bool // the mount's own flag, the one a bind's "ro" sets
	fsType     string
}

// parseMountinfo reads /proc/PID/mountinfo (proc(5)).
func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		before, after, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 6 || len(tail) < 1 {
			return nil, fmt.Errorf("mountinfo line does not parse: %q", line)
		}
		id, err1 := strconv.Atoi(fields[0])
		parent, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mountinfo line does not parse: %q", line)
		}
		out = append(out, mount{
			id: id, parent: parent, dev: fields[2],
			root: unescapeMountPath(fields[3]), point: unescapeMountPath(fields[4]),
			readOnly: hasOption(fields[5], "ro"), fsType: tail[0],
		})
	}
	return out, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasOption(options, want string) bool {
	for _, o := range strings.Split(options, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// visibleMounts returns the mounts a path lookup reaches: the kernel names
// the mount that holds each mount point (statx's mount id), so a mount
// hidden under a later one (a host mount under a tmpfs mask) is left out.
func visibleMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := parseMountinfo(f)
	if err != nil {
		return nil, err
	}
	var out []mount
	for _, m := range all {
		var st unix.Statx_t
		if err := unix.Statx(unix.AT_FDCWD, m.point, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &st); err != nil {
			continue // hidden below a mask
		}
		if st.Mask&unix.STATX_MNT_ID == 0 {
			return nil, errors.New("this kernel does not report mount ids (statx STATX_MNT_ID needs Linux 5.8)")
		}
		if st.Mnt_id == uint64(m.id) {
			out = append(out, m)
		}
	}
	return out, nil
}

// mountAt returns the visible mount whose mount point is path.
func (f *facts) mountAt(path string) (mount, bool) {
	for _, m := range f.mounts {
		if m.point == path {
			return m, true
		}
	}
	return mount{}, false
}

// finalMounts returns the last mount of the plan at each point: the one
// on top. The directories the plan makes (--dir) are no mounts.
func finalMounts(plan *sandbox.Plan) map[string]sandbox.Mount {
	out := map[string]sandbox.Mount{}
	for _, m := range plan.Mounts {
		if m.Op != sandbox.OpDir {
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
func (f *facts) planned(m mount, writable bool) bool {
	lv := f.launch
	for _, pm := range finalMounts(lv.plan) {
		switch {
		case (pm.Op == sandbox.OpDev || pm.Op == sandbox.OpProc) && within(pm.Dest, m.point):
			return true
		case pm.Dest == m.point && !(writable && pm.Op.ReadOnly()):
			return true
		}
	}
	ws, ok := f.mountAt(lv.plan.Workspace)
	if !ok || !within(ws.point, m.point) || m.dev != ws.dev {
		return false
	}
	rel, _ := filepath.Rel(ws.point, m.point)
	return m.root == filepath.Join(ws.root, rel)
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
