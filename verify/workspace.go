package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// workspaceWritable: the workspace the policy names is mounted read-write,
// and writable by the user unless its own permissions say otherwise: the
// sandbox is usable, and it is this workspace. A workspace the user cannot
// write outside (root's, when the host user is root) is no fault of the
// sandbox's; one the user owns and still cannot write is.
func workspaceWritable(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	ws := f.launch.plan.Workspace
	m, ok := f.mountAt(ws)
	if !ok {
		return "", fmt.Errorf("the workspace %s is not mounted: the sandbox bound another directory", ws)
	}
	if m.ReadOnly() {
		return "", fmt.Errorf("the workspace %s is mounted read-only", ws)
	}
	err := unix.Access(ws, unix.W_OK)
	if err == nil {
		return ws + " is mounted and writable", nil
	}
	var st unix.Stat_t
	if !errors.Is(err, unix.EACCES) || unix.Stat(ws, &st) != nil || int(st.Uid) == unix.Getuid() {
		return "", fmt.Errorf("the workspace %s is not writable: %w", ws, err)
	}
	return fmt.Sprintf("%s is mounted read-write; another user owns it (mode %04o) and does not let this user write it, outside as inside", ws, st.Mode&0o7777), nil
}

// protectedPathsReadOnly: every protected workspace path of the plan (the
// defaults, protect lines, paths derived from git and dev container
// files) is read-only, every directory on the way to one is pinned (a
// mount point cannot be renamed, so none can be moved aside and replaced),
// and every protected path that was missing at launch cannot be made: the
// warden refuses it (and, should a program outside have made it since,
// anything written in it).
func protectedPathsReadOnly(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	ws := f.launch.plan.Workspace
	final := finalMounts(f.launch.plan)
	points := make([]string, 0, len(final))
	for point := range final {
		if point != ws && subtree.Of(ws).Contains(point) {
			points = append(points, point)
		}
	}
	sort.Strings(points)
	var held []string
	pins, warden := 0, 0
	for _, point := range points {
		rel := strings.TrimPrefix(point, ws+"/")
		_, mounted := f.mountAt(point)
		if !mounted && appearedLater(f.launch.plan, final[point]) {
			// Made outside since the launch: the warden holds it.
			if final[point].Op.ReadOnly() {
				if err := wardenRefuses(point); err != nil {
					return "", fmt.Errorf("protected %s, made during the session: %w", rel, err)
				}
				warden++
			}
			continue
		}
		if final[point].Op.ReadOnly() {
			if _, err := readOnly(point); err != nil {
				return "", fmt.Errorf("protected %s: %w", rel, err)
			}
			held = append(held, rel)
			continue
		}
		if !mounted {
			return "", fmt.Errorf("%s is not pinned: it could be renamed and replaced", rel)
		}
		pins++
	}
	for _, r := range f.launch.plan.NameRules.Paths {
		if err := wardenRefuses(r.Path); err != nil {
			return "", fmt.Errorf("protected %s, missing at launch: %w", strings.TrimPrefix(r.Path, ws+"/"), err)
		}
		warden++
	}
	return fmt.Sprintf("%d read-only (%s); %d directories on the way pinned; %d missing, refused by the warden", len(held), strings.Join(held, ", "), pins, warden), nil
}

// appearedLater reports whether what the recomputed plan mounts at m's
// point came after the launch: the point was made during the session, or,
// for the git store's binds, the repository they belong to was (the
// launcher makes their mount points before it starts the sandbox).
func appearedLater(plan *sandbox.Plan, m sandbox.Mount) bool {
	if m.Rule != sandbox.RuleGitStore {
		return subtree.Of(plan.Workspace).Contains(m.Dest) && madeDuringSession(m.Dest)
	}
	if m.Dest == layout.InsideRepoConfig {
		// The repository's configuration as the launch read it: there was
		// none to read if the repository came later.
		return len(plan.NameRules.CopyThrough) > 0 && madeDuringSession(plan.NameRules.CopyThrough[0].Dir)
	}
	if madeDuringSession(m.Dest) {
		return true
	}
	_, err := os.Lstat(m.Dest)
	return errors.Is(err, fs.ErrNotExist) || madeDuringSession(filepath.Dir(m.Dest))
}

// plannedMounts: every mount of the plan is in place, read-only exactly
// where the plan says so: the policy was applied in full. A planned
// workspace path that a program outside made during the session (so the
// plan, recomputed here, sees it) has no mount; protectedPathsReadOnly
// checks that the warden holds it.
func plannedMounts(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	final := finalMounts(f.launch.plan)
	points := make([]string, 0, len(final))
	for point := range final {
		points = append(points, point)
	}
	sort.Strings(points)
	var wrong []string
	absent, later := 0, 0
	for _, point := range points {
		pm := final[point]
		m, ok := f.mountAt(point)
		wantFS := map[sandbox.Op]string{sandbox.OpTmpfs: "tmpfs", sandbox.OpDev: "tmpfs", sandbox.OpProc: "proc"}[pm.Op]
		switch {
		case !ok && pm.Op == sandbox.OpRoBindTry:
			absent++
		case !ok && appearedLater(f.launch.plan, pm):
			later++
		case !ok:
			wrong = append(wrong, point+" is not mounted")
		case m.ReadOnly() != pm.Op.ReadOnly():
			wrong = append(wrong, fmt.Sprintf("%s is %s", point, map[bool]string{true: "read-only", false: "writable"}[m.ReadOnly()]))
		case wantFS != "" && m.FSType != wantFS:
			wrong = append(wrong, fmt.Sprintf("%s is %s, not %s", point, m.FSType, wantFS))
		}
	}
	if len(wrong) > 0 {
		return "", fmt.Errorf("the plan is not applied: %s", strings.Join(wrong, "; "))
	}
	return fmt.Sprintf("all %d mounts of the plan are in place (%d made in the workspace during the session, %d optional share-home binds absent)", len(points)-absent-later, later, absent), nil
}

// writableMounts: every writable mount is one the policy makes writable
// (the workspace, allow-write paths, ~/.claude, ~/.claude.json, the tmpfs
// masks) or bwrap's own /dev and /proc: nothing else can be written.
func writableMounts(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	var extra []string
	n := 0
	for _, m := range f.mounts {
		if m.ReadOnly() {
			continue
		}
		n++
		if !f.planned(m, true) {
			extra = append(extra, m.Point)
		}
	}
	if len(extra) > 0 {
		return "", fmt.Errorf("writable without the policy: %s", strings.Join(extra, ", "))
	}
	return fmt.Sprintf("%d writable mounts, all the policy's", n), nil
}
