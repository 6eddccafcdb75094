package installer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/jsonc"
	"github.com/tailscale/hujson"
)

// gateGroup is the UserPromptSubmit entry that runs the gate. "onFailure":
// "block" makes Claude Code refuse the prompt even when the gate cannot run
// at all (a missing binary would otherwise be a non-blocking error).
const gateGroup = `{"hooks": [{"type": "command", "command": "` + layout.GateCommand + `", "onFailure": "block"}]}`

// managedSettings is the part of the managed settings the installer reads.
type managedSettings struct {
	Env   map[string]any         `json:"env"`
	Hooks map[string][]hookGroup `json:"hooks"`
}

type hookGroup struct {
	Hooks []struct {
		Command string `json:"command"`
	} `json:"hooks"`
}

// planManagedSettings turns Claude Code's auto-updater off and stamps the
// prompt gate into its managed settings, which a session cannot edit and
// which user and project settings cannot override or switch off. The file
// is merged, never replaced: other keys, other tools' hooks, comments and
// formatting stay as they are.
func (in *run) planManagedSettings() error {
	p := in.path(layout.ManagedSettings)
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		next := []byte(ourSettings)
		in.add("wrote "+layout.ManagedSettings+" (auto-updates off, prompt gate)", lineDiff(layout.ManagedSettings, nil, next), func() error { return writeAtomic(p, next, 0o644) })
		return nil
	}
	if err != nil {
		return err
	}
	v, current, err := parseManaged(old)
	if err != nil {
		return err
	}
	var ops, what []string
	var env string
	switch got, ok := current.Env["DISABLE_AUTOUPDATER"]; {
	case current.Env == nil:
		env = `{"op": "add", "path": "/env", "value": {"DISABLE_AUTOUPDATER": "1"}}`
	case !ok:
		env = `{"op": "add", "path": "/env/DISABLE_AUTOUPDATER", "value": "1"}`
	case got != "1":
		env = `{"op": "replace", "path": "/env/DISABLE_AUTOUPDATER", "value": "1"}`
	}
	if env != "" {
		ops, what = append(ops, env), append(what, "auto-updates off")
	}
	var gate string
	switch groups, ok := current.Hooks["UserPromptSubmit"]; {
	case current.Hooks == nil:
		gate = `{"op": "add", "path": "/hooks", "value": {"UserPromptSubmit": [` + gateGroup + `]}}`
	case !ok:
		gate = `{"op": "add", "path": "/hooks/UserPromptSubmit", "value": [` + gateGroup + `]}`
	case len(gateGroups(groups)) == 0:
		gate = `{"op": "add", "path": "/hooks/UserPromptSubmit/-", "value": ` + gateGroup + `}`
	}
	if gate != "" {
		ops, what = append(ops, gate), append(what, "prompt gate")
	}
	if len(ops) == 0 {
		return nil
	}
	if err := v.Patch([]byte("[" + strings.Join(ops, ",") + "]")); err != nil {
		return fmt.Errorf("%s: %w", layout.ManagedSettings, err)
	}
	if root, ok := v.Value.(*hujson.Object); ok {
		lineUpPatched(root, "env", "DISABLE_AUTOUPDATER")
		lineUpPatched(root, "hooks", "UserPromptSubmit")
	}
	next := v.Pack()
	in.add("updated "+layout.ManagedSettings+" ("+strings.Join(what, ", ")+")", lineDiff(layout.ManagedSettings, old, next), func() error { return writeAtomic(p, next, 0o644) })
	return nil
}

// lineUpPatched gives what a patch added at outer.inner the layout of its
// neighbours, and the last element its neighbour's when inner is a list.
func lineUpPatched(root *hujson.Object, outer, inner string) {
	m := jsonc.LineUp(root, outer)
	if m == nil {
		return
	}
	obj, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		return
	}
	if m = jsonc.LineUp(obj, inner); m == nil {
		return
	}
	if arr, ok := m.Value.Value.(*hujson.Array); ok {
		jsonc.LineUpLast(arr)
	}
}

// planManagedRemoval takes the prompt gate out of the managed settings: with
// the launcher gone it could only block every prompt. A file that then holds
// nothing but what the installer put there is removed; any other is kept,
// with its DISABLE_AUTOUPDATER.
func (in *run) planManagedRemoval(out io.Writer) error {
	p := in.path(layout.ManagedSettings)
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if string(old) == ourSettings {
		in.add("removed "+layout.ManagedSettings, "", func() error { return os.Remove(p) })
		return nil
	}
	v, current, err := parseManaged(old)
	if err != nil {
		fmt.Fprintf(out, "claude-sandbox: left %s as it is: %v\n", layout.ManagedSettings, err)
		return nil
	}
	groups := current.Hooks["UserPromptSubmit"]
	ours := gateGroups(groups)
	if len(ours) == 0 {
		fmt.Fprintf(out, "claude-sandbox: left %s as it is (it has other settings)\n", layout.ManagedSettings)
		return nil
	}
	var ops []string
	switch {
	case len(ours) == len(groups) && len(current.Hooks) == 1:
		ops = []string{`{"op": "remove", "path": "/hooks"}`}
	case len(ours) == len(groups):
		ops = []string{`{"op": "remove", "path": "/hooks/UserPromptSubmit"}`}
	default:
		for i := len(ours) - 1; i >= 0; i-- {
			ops = append(ops, fmt.Sprintf(`{"op": "remove", "path": "/hooks/UserPromptSubmit/%d"}`, ours[i]))
		}
	}
	if err := v.Patch([]byte("[" + strings.Join(ops, ",") + "]")); err != nil {
		return fmt.Errorf("%s: %w", layout.ManagedSettings, err)
	}
	next := v.Pack()
	if onlyOurs(next) {
		in.add("removed "+layout.ManagedSettings, "", func() error { return os.Remove(p) })
		return nil
	}
	in.add("removed the prompt gate from "+layout.ManagedSettings+" (its other settings stay)", lineDiff(layout.ManagedSettings, old, next), func() error { return writeAtomic(p, next, 0o644) })
	return nil
}

// onlyOurs reports whether managed settings hold nothing but the auto-updater
// switch.
func onlyOurs(data []byte) bool {
	v, err := hujson.Parse(data)
	if err != nil {
		return false
	}
	v.Standardize()
	var got map[string]any
	if json.Unmarshal(v.Pack(), &got) != nil {
		return false
	}
	return reflect.DeepEqual(got, map[string]any{"env": map[string]any{"DISABLE_AUTOUPDATER": "1"}})
}

// parseManaged parses the managed settings with comments and trailing commas,
// as Claude Code accepts them.
func parseManaged(data []byte) (hujson.Value, managedSettings, error) {
	var current managedSettings
	v, err := hujson.Parse(data)
	if err != nil {
		return v, current, fmt.Errorf("%s is not valid JSON, so it was left alone: %w", layout.ManagedSettings, err)
	}
	std := v.Clone()
	std.Standardize()
	if err := json.Unmarshal(std.Pack(), &current); err != nil {
		return v, current, fmt.Errorf("%s is not the settings Claude Code reads, so it was left alone: %w", layout.ManagedSettings, err)
	}
	return v, current, nil
}

// gateGroups are the indexes of the UserPromptSubmit groups that run the gate.
func gateGroups(groups []hookGroup) []int {
	var out []int
	for i, g := range groups {
		for _, h := range g.Hooks {
			if h.Command == layout.GateCommand {
				out = append(out, i)
				break
			}
		}
	}
	return out
}
