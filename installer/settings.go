package installer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tailscale/hujson"
)

// planManagedSettings turns Claude Code's auto-updater off in its managed
// settings, which a session cannot edit and which win over user and project
// settings. The file is merged, never replaced: other keys, other tools'
// hooks, comments and formatting stay as they are.
func (in *run) planManagedSettings() error {
	p := in.path(ManagedPath)
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		next := []byte(ourSettings)
		in.add("wrote "+ManagedPath+" (auto-updates off)", lineDiff(ManagedPath, nil, next), func() error { return writeAtomic(p, next, 0o644) })
		return nil
	}
	if err != nil {
		return err
	}
	v, err := hujson.Parse(old)
	if err != nil {
		return fmt.Errorf("%s is not valid JSON, so it was left alone: %v", ManagedPath, err)
	}
	var current struct {
		Env map[string]any `json:"env"`
	}
	std := v.Clone()
	std.Standardize()
	if err := json.Unmarshal(std.Pack(), &current); err != nil {
		return fmt.Errorf("%s: %v", ManagedPath, err)
	}
	var patch string
	switch got, ok := current.Env["DISABLE_AUTOUPDATER"]; {
	case current.Env == nil:
		patch = `[{"op": "add", "path": "/env", "value": {"DISABLE_AUTOUPDATER": "1"}}]`
	case !ok:
		patch = `[{"op": "add", "path": "/env/DISABLE_AUTOUPDATER", "value": "1"}]`
	case got != "1":
		patch = `[{"op": "replace", "path": "/env/DISABLE_AUTOUPDATER", "value": "1"}]`
	default:
		return nil
	}
	if err := v.Patch([]byte(patch)); err != nil {
		return fmt.Errorf("%s: %v", ManagedPath, err)
	}
	if root, ok := v.Value.(*hujson.Object); ok {
		if env := lineUp(root, "env"); env != nil {
			if inner, ok := env.Value.Value.(*hujson.Object); ok {
				lineUp(inner, "DISABLE_AUTOUPDATER")
			}
		}
	}
	next := v.Pack()
	in.add("updated "+ManagedPath+" (auto-updates off)", lineDiff(ManagedPath, old, next), func() error { return writeAtomic(p, next, 0o644) })
	return nil
}

// lineUp gives a member the patch just added the layout of its siblings:
// the same indentation before its name when it has siblings, and a space
// after its colon. Members that were already there keep their bytes.
func lineUp(obj *hujson.Object, name string) *hujson.ObjectMember {
	for i := range obj.Members {
		m := &obj.Members[i]
		if lit, ok := m.Name.Value.(hujson.Literal); !ok || lit.String() != name {
			continue
		}
		if len(m.Name.BeforeExtra) == 0 && len(obj.Members) > 1 {
			first := obj.Members[0].Name.BeforeExtra
			if nl := bytes.LastIndexByte(first, '\n'); nl >= 0 {
				m.Name.BeforeExtra = append(hujson.Extra{}, first[nl:]...)
			}
		}
		if len(m.Value.BeforeExtra) == 0 {
			m.Value.BeforeExtra = hujson.Extra(" ")
		}
		return m
	}
	return nil
}
