package promote

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/claude-sandbox/claude-sandbox/jsonc"
)

// FeatureRef is the product's devcontainer feature without its tag. A key
// in "features" that is this reference, with any tag or digest or none, is
// the product's feature.
const FeatureRef = "ghcr.io/claude-sandbox/features/claude-sandbox"

// minimalDevcontainer is what a target without a devcontainer.json gets:
// an image the feature supports and the feature, nothing more.
const minimalDevcontainer = `// Written by claude-sandbox promote: Claude Code runs in a bubblewrap
// sandbox in this dev container. Put your project's own image here.
{
    "image": "mcr.microsoft.com/devcontainers/base:ubuntu",
    "features": {
        "` + FeatureRef + `": {}
    }
}
`

// isProductFeature says whether a features key names the product's feature.
func isProductFeature(key string) bool {
	rest, ok := strings.CutPrefix(key, FeatureRef)
	return ok && (rest == "" || rest[0] == ':' || rest[0] == '@')
}

// featurePin finds the product's feature in a devcontainer.json: found, and
// the tag it is pinned to ("" when it has none).
func featurePin(data []byte) (pin string, found bool, err error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return "", false, err
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return "", false, fmt.Errorf("not a JSON object")
	}
	feats := member(root, "features")
	if feats == nil {
		return "", false, nil
	}
	obj, ok := feats.Value.Value.(*hujson.Object)
	if !ok {
		return "", false, nil
	}
	m := productFeature(obj)
	if m == nil {
		return "", false, nil
	}
	_, tag, _ := strings.Cut(strings.TrimPrefix(name(m), FeatureRef), ":")
	return tag, true, nil
}

// pinFeature returns the devcontainer.json with the product's feature pinned
// to version and the options applied, and the feature's entry as a snippet.
// The feature keeps its position; a new one goes last in "features". Every
// other byte of the file stays.
func pinFeature(data []byte, version string, options map[string]any) ([]byte, string, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, "", err
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, "", fmt.Errorf("not a JSON object")
	}
	key := FeatureRef + ":" + version
	if member(root, "features") == nil {
		if err := add(&v, root, []string{"features"}, "{}"); err != nil {
			return nil, "", err
		}
	}
	feats, ok := member(root, "features").Value.Value.(*hujson.Object)
	if !ok {
		return nil, "", fmt.Errorf(`"features" is not an object`)
	}
	m := productFeature(feats)
	if m == nil {
		if err := add(&v, feats, []string{"features", key}, "{}"); err != nil {
			return nil, "", err
		}
		m = productFeature(feats)
	} else if name(m) != key {
		m.Name.Value = hujson.String(key)
	}
	if err := setOptions(&v, m, key, options); err != nil {
		return nil, "", err
	}
	return v.Pack(), snippet(m), nil
}

// setOptions sets each option on the feature member m. A value equal to the
// option's default in the feature's metadata removes it: defaults stay
// implicit. Options not named are left as they are.
func setOptions(v *hujson.Value, m *hujson.ObjectMember, key string, options map[string]any) error {
	if len(options) == 0 {
		return nil
	}
	obj, ok := m.Value.Value.(*hujson.Object)
	if !ok { // a bare version string: the options need an object
		obj = &hujson.Object{}
		m.Value.Value = obj
	}
	declared := features.EmbeddedOptions()
	for _, n := range slices.Sorted(maps.Keys(options)) {
		value, err := json.Marshal(options[n])
		if err != nil {
			return err
		}
		if err := setOption(v, obj, key, n, value, options[n] == declared[n].Default); err != nil {
			return err
		}
	}
	return nil
}

func setOption(v *hujson.Value, obj *hujson.Object, key, opt string, value []byte, isDefault bool) error {
	old := member(obj, opt)
	switch {
	case old != nil && isDefault:
		return patch(v, "remove", []string{"features", key, opt}, "")
	case old != nil:
		lit, err := hujson.Parse(value)
		if err != nil {
			return err
		}
		old.Value.Value = lit.Value
		return nil
	case !isDefault:
		return add(v, obj, []string{"features", key, opt}, string(value))
	}
	return nil
}

// add adds the member at path (its last element is the name) to obj, with
// the layout of its siblings: their indentation, and a trailing comma if
// the last of them had one.
func add(v *hujson.Value, obj *hujson.Object, path []string, value string) error {
	n := len(obj.Members)
	trailingComma := n > 0 && obj.Members[n-1].Value.AfterExtra != nil
	if err := patch(v, "add", path, value); err != nil {
		return err
	}
	jsonc.LineUp(obj, path[len(path)-1])
	if last := &obj.Members[len(obj.Members)-1]; trailingComma && last.Value.AfterExtra == nil {
		last.Value.AfterExtra = hujson.Extra{}
	}
	return nil
}

func patch(v *hujson.Value, op string, path []string, value string) error {
	ptr := ""
	for _, p := range path {
		ptr += "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(p)
	}
	quoted, _ := json.Marshal(ptr)
	ops := fmt.Sprintf(`[{"op": %q, "path": %s}]`, op, quoted)
	if op != "remove" {
		ops = fmt.Sprintf(`[{"op": %q, "path": %s, "value": %s}]`, op, quoted, value)
	}
	return v.Patch([]byte(ops))
}

func member(obj *hujson.Object, n string) *hujson.ObjectMember {
	for i := range obj.Members {
		if name(&obj.Members[i]) == n {
			return &obj.Members[i]
		}
	}
	return nil
}

func productFeature(obj *hujson.Object) *hujson.ObjectMember {
	for i := range obj.Members {
		if isProductFeature(name(&obj.Members[i])) {
			return &obj.Members[i]
		}
	}
	return nil
}

func name(m *hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// snippet is the feature's entry on one line, as a person would paste it
// into "features".
func snippet(m *hujson.ObjectMember) string {
	value := hujson.Value{Value: m.Value.Value}.Clone()
	value.Standardize()
	value.Minimize()
	k, _ := json.Marshal(name(m))
	return fmt.Sprintf("%s: %s", k, value.Pack())
}

var hujsonPosition = regexp.MustCompile(`^hujson: line (\d+), column \d+: `)

// jsoncError names the file and line of a parse error, the way a compiler
// would, so an editor can jump to it.
func jsoncError(file string, err error) error {
	msg := err.Error()
	if loc := hujsonPosition.FindStringSubmatchIndex(msg); loc != nil {
		return fmt.Errorf("%s:%s: %s (promote left it untouched)", file, msg[loc[2]:loc[3]], msg[loc[1]:])
	}
	return fmt.Errorf("%s: %s (promote left it untouched)", file, msg)
}

// jsonError is jsoncError for encoding/json, whose syntax errors carry an
// offset instead of a line.
func jsonError(file string, data []byte, err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		line := 1 + strings.Count(string(data[:se.Offset]), "\n")
		return fmt.Errorf("%s:%d: %w", file, line, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}
