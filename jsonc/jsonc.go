// Package jsonc edits JSON with comments (Claude Code's settings, dev
// container files) the way a person would: what is added takes the layout
// of its neighbours, and every byte that was there stays.
package jsonc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tailscale/hujson"
)

// AddIfAbsent adds the top-level member name with the JSON value, unless the
// object already has a member of that name (whatever its value). It returns
// the new bytes and whether anything changed.
func AddIfAbsent(data []byte, name, value string) ([]byte, bool, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, false, err
	}
	std := v.Clone()
	std.Standardize()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(std.Pack(), &members); err != nil {
		return nil, false, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := members[name]; ok {
		return data, false, nil
	}
	path, _ := json.Marshal("/" + name)
	if err := v.Patch([]byte(fmt.Sprintf(`[{"op": "add", "path": %s, "value": %s}]`, path, value))); err != nil {
		return nil, false, err
	}
	if root, ok := v.Value.(*hujson.Object); ok {
		LineUp(root, name)
	}
	return v.Pack(), true, nil
}

// LineUp gives a member the patch just added the layout of its siblings:
// the same indentation before its name when it has siblings, and a space
// after its colon. Members that were already there keep their bytes.
func LineUp(obj *hujson.Object, name string) *hujson.ObjectMember {
	for i := range obj.Members {
		m := &obj.Members[i]
		if lit, ok := m.Name.Value.(hujson.Literal); !ok || lit.String() != name {
			continue
		}
		if len(obj.Members) > 1 {
			first := obj.Members[0].Name.BeforeExtra
			before := m.Name.BeforeExtra
			switch nl := bytes.LastIndexByte(first, '\n'); {
			case nl >= 0 && len(before) == 0:
				m.Name.BeforeExtra = append(hujson.Extra{}, first[nl:]...)
			case nl >= 0 && before[len(before)-1] == '\n':
				// a comment after the member before it came along, without the indentation
				m.Name.BeforeExtra = append(append(hujson.Extra{}, before...), first[nl+1:]...)
			case nl < 0 && len(before) == 0 && !bytes.Contains(obj.AfterExtra, []byte("\n")):
				m.Name.BeforeExtra = hujson.Extra(" ") // an object on one line
			}
		}
		if len(m.Value.BeforeExtra) == 0 {
			m.Value.BeforeExtra = hujson.Extra(" ")
		}
		return m
	}
	return nil
}

// LineUpLast gives an element appended to a list the spacing before it of the
// element before it, so a list written one element per line stays so.
func LineUpLast(arr *hujson.Array) {
	if n := len(arr.Elements); n > 1 && len(arr.Elements[n-1].BeforeExtra) == 0 {
		arr.Elements[n-1].BeforeExtra = append(hujson.Extra{}, arr.Elements[n-2].BeforeExtra...)
	}
}
