// Package promote brings a repository to this version of claude-sandbox:
// curated .claude files copied by value and recorded in a lock file, the
// status line wired into .claude/settings.json, and the devcontainer
// feature pinned to this version in devcontainer.json. It plans every
// change before it writes any, so a refusal or a parse error writes nothing.
package promote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/jsonc"
)

// Options are what the user asked of a promote.
type Options struct {
	// FeatureOptions are the feature's options to set, by the feature's
	// option name: a string or a bool. A value equal to the option's
	// default in the feature's metadata removes the option; options not
	// named keep what the file has.
	FeatureOptions map[string]any
	// Force overwrites curated files edited locally since the last promote.
	Force bool
	// PrintOnly prints the feature's entry and the diffs, and writes nothing.
	PrintOnly bool
	// NoFeature installs from postCreate.sh instead of the feature, for dev
	// containers that cannot use features. A repository promoted so stays
	// so (its lock file says it).
	NoFeature bool
}

// SettingsPath is where the status line is wired, if the target has none.
const SettingsPath = ".claude/settings.json"

// devcontainerPaths are where the dev container CLI looks for the file, in
// the order promote picks the one to edit; with neither, it writes the first.
var devcontainerPaths = []string{".devcontainer/devcontainer.json", ".devcontainer.json"}

// freshSettings is the settings.json of a target that has none.
const freshSettings = "{\n  \"statusLine\": " + layout.StatusLine + "\n}\n"

// write is one planned change to a file below the target.
type write struct {
	path, what string
	old, new   []byte // old is nil when the file is absent
	mode       os.FileMode
}

// plan is everything a promote would do, and every way the target differs
// from this version (what --check lists).
type plan struct {
	version    string
	postCreate bool // install from postCreate.sh, not the feature
	writes     []write
	kept       []string // curated files edited locally, left as they are
	drift      []string
	snippet    string // the feature's entry in devcontainer.json, or the postCreate.sh line
}

// Promote brings the target to this version (or, with PrintOnly, prints
// what that would change).
func Promote(root string, o Options, out io.Writer) error {
	if err := CheckOptions(o.FeatureOptions); err != nil {
		return err
	}
	t, err := openTarget(root)
	if err != nil {
		return err
	}
	defer t.close()
	p, err := makePlan(t, o)
	if err != nil {
		return err
	}
	if o.PrintOnly {
		p.print(out)
		return nil
	}
	for _, k := range p.kept {
		fmt.Fprintf(out, "kept %s: edited locally since the last promote (--force overwrites it)\n", k)
	}
	if len(p.writes) == 0 {
		fmt.Fprintln(out, "claude-sandbox promote: nothing to change")
	}
	for _, w := range p.writes {
		if err := t.write(w.path, w.new, w.mode); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s (%s)\n", w.path, w.what)
	}
	return nil
}

// CheckOptions refuses an option the feature does not have, and a value
// outside an option's enum, which the dev container CLI would refuse only
// at the next rebuild.
func CheckOptions(options map[string]any) error {
	declared := features.EmbeddedOptions()
	for _, name := range slices.Sorted(maps.Keys(options)) {
		o, ok := declared[name]
		if !ok {
			return fmt.Errorf("the feature has no option %q", name)
		}
		if v, _ := options[name].(string); len(o.Enum) > 0 && !slices.Contains(o.Enum, v) {
			return fmt.Errorf("%s: %q is not one of the feature's values (%s)", name, v, strings.Join(o.Enum, ", "))
		}
	}
	return nil
}

// Check lists every way the target differs from this version; current is
// true when there is none, that is when a promote without flags would
// change nothing.
func Check(root string, out io.Writer) (current bool, err error) {
	t, err := openTarget(root)
	if err != nil {
		return false, err
	}
	defer t.close()
	p, err := makePlan(t, Options{})
	if err != nil {
		return false, err
	}
	// The target and what its files say (a pin, a version) may be a
	// session's: each line is escaped (termtext).
	if len(p.drift) == 0 {
		fmt.Fprintf(out, "claude-sandbox promote --check: %s is current with claude-sandbox %s\n", termtext.Escape(root), p.version)
		return true, nil
	}
	fmt.Fprintf(out, "claude-sandbox promote --check: %s differs from claude-sandbox %s:\n", termtext.Escape(root), p.version)
	for _, d := range p.drift {
		fmt.Fprintf(out, "  %s\n", termtext.Escape(d))
	}
	return false, nil
}

func (p *plan) print(out io.Writer) {
	if p.postCreate {
		fmt.Fprintf(out, "the line for %s:\n  %s\n", PostCreatePath, p.snippet)
	} else {
		fmt.Fprintf(out, "the feature's entry in \"features\":\n  %s\n", p.snippet)
	}
	for _, k := range p.kept {
		fmt.Fprintf(out, "would keep %s: edited locally since the last promote (--force overwrites it)\n", k)
	}
	if len(p.writes) == 0 {
		fmt.Fprintln(out, "claude-sandbox promote: nothing to change")
	}
	for _, w := range p.writes {
		fmt.Fprintf(out, "would write %s (%s)\n", w.path, w.what)
		// The old lines are the target's: a session may have written them.
		io.WriteString(out, termtext.Lines(string(diff.Diff(w.path, w.old, w.path+" (promoted)", w.new))))
	}
}

func makePlan(t *target, o Options) (*plan, error) {
	if err := refuseProduct(t); err != nil {
		return nil, err
	}
	last, oldLock, err := readLock(t)
	if err != nil {
		return nil, err
	}
	p := &plan{version: features.Embedded().Version, postCreate: o.NoFeature || last.Install == installMode}
	if p.postCreate {
		p.snippet = installLine(o.FeatureOptions)
		err = p.wirePostCreateScript(t, o.FeatureOptions)
	} else {
		err = p.devcontainer(t, o.FeatureOptions)
	}
	if err != nil {
		return nil, err
	}
	if err := p.settings(t); err != nil {
		return nil, err
	}
	return p, p.curated(t, last, oldLock, o.Force)
}

// readLock reads the lock file of the last promote; without one, the lock
// is empty and its bytes nil.
func readLock(t *target) (lock, []byte, error) {
	data, _, err := readOptional(t, LockPath)
	if err != nil || data == nil {
		return lock{}, data, err
	}
	l, err := parseLock(data)
	return l, data, err
}

func (p *plan) add(path, what string, old, new []byte, mode os.FileMode) {
	if mode == 0 {
		mode = 0o644
	}
	if old == nil || !bytes.Equal(old, new) {
		p.writes = append(p.writes, write{path: path, what: what, old: old, new: new, mode: mode})
	}
}

// readOptional reads a file below the target; a missing one is nil data.
func readOptional(t *target, rel string) ([]byte, os.FileMode, error) {
	data, mode, err := t.read(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	return data, mode, err // an empty file is non-nil data: present
}

// findDevcontainer returns the devcontainer.json the target has, or the path
// to create with nil data.
func findDevcontainer(t *target) (string, []byte, os.FileMode, error) {
	for _, rel := range devcontainerPaths {
		data, mode, err := readOptional(t, rel)
		if err != nil || data != nil {
			return rel, data, mode, err
		}
	}
	return devcontainerPaths[0], nil, 0, nil
}

func (p *plan) devcontainer(t *target, options map[string]any) error {
	rel, old, mode, err := findDevcontainer(t)
	if err != nil {
		return err
	}
	base := old
	if old == nil {
		base = []byte(minimalDevcontainer)
		p.drift = append(p.drift, rel+": missing (promote writes a minimal one with the feature)")
	} else if err := p.pinDrift(rel, old); err != nil {
		return err
	}
	next, snippet, err := pinFeature(base, p.version, options)
	if err != nil {
		return jsoncError(rel, err)
	}
	p.snippet = snippet
	p.add(rel, "the claude-sandbox feature, pinned to "+p.version, old, next, mode)
	return nil
}

func (p *plan) pinDrift(rel string, data []byte) error {
	pin, found, err := featurePin(data)
	switch {
	case err != nil:
		return jsoncError(rel, err)
	case !found:
		p.drift = append(p.drift, rel+": no claude-sandbox feature (missing wiring)")
	case pin == "":
		p.drift = append(p.drift, rel+": the feature has no version pin")
	case pin != p.version:
		p.drift = append(p.drift, fmt.Sprintf("%s: the feature is pinned to %s", rel, pin))
	}
	return nil
}

// settings wires the status line, create-if-absent: a statusLine the target
// has, whatever its value, is the team's choice and is kept.
func (p *plan) settings(t *target) error {
	old, mode, err := readOptional(t, SettingsPath)
	if err != nil {
		return err
	}
	next := []byte(freshSettings)
	if old != nil {
		var changed bool
		if next, changed, err = jsonc.AddIfAbsent(old, "statusLine", layout.StatusLine); err != nil {
			return jsoncError(SettingsPath, err)
		}
		if !changed {
			return nil
		}
	}
	p.drift = append(p.drift, SettingsPath+": no statusLine (missing wiring)")
	p.add(SettingsPath, "the sandbox's status line", old, next, mode)
	return nil
}

// curated plans the curated files and then the lock that records them.
func (p *plan) curated(t *target, l lock, oldLock []byte, force bool) error {
	files, err := curatedFiles(p.version, p.postCreate)
	if err != nil {
		return err
	}
	next := lock{Version: p.version, Files: map[string]string{}}
	if p.postCreate {
		next.Install = installMode
	}
	for _, f := range files {
		if err := p.curatedFile(t, f, l, next, force); err != nil {
			return err
		}
	}
	p.lockDrift(l, oldLock, next)
	p.add(LockPath, "the versions of the files above", oldLock, next.bytes(), 0)
	return nil
}

// curatedFile plans one curated file: written when missing or when the
// file is what the last promote wrote; kept, unless forced, when it was
// edited locally since (or is not known to be ours).
func (p *plan) curatedFile(t *target, f curatedFile, last, next lock, force bool) error {
	old, mode, err := readOptional(t, f.path)
	if err != nil {
		return err
	}
	want := hash(f.data)
	next.Files[f.path] = want
	switch {
	case old == nil:
		p.drift = append(p.drift, f.path+": missing")
	case bytes.Equal(old, f.data):
		return nil
	case hash(old) == last.Files[f.path]:
		p.drift = append(p.drift, fmt.Sprintf("%s: changed upstream (promoted at %s)", f.path, last.Version))
	case !force:
		p.drift = append(p.drift, f.path+": edited locally (promote keeps it; --force overwrites it)")
		p.kept = append(p.kept, f.path)
		if h, ok := last.Files[f.path]; ok {
			next.Files[f.path] = h
		} else {
			delete(next.Files, f.path)
		}
		return nil
	}
	p.add(f.path, f.what, old, f.data, mode)
	return nil
}

func (p *plan) lockDrift(last lock, old []byte, next lock) {
	switch {
	case old == nil:
		p.drift = append(p.drift, LockPath+": missing (never promoted)")
	case last.Version != p.version:
		p.drift = append(p.drift, fmt.Sprintf("%s: promoted at %s", LockPath, last.Version))
	case !bytes.Equal(old, next.bytes()):
		p.drift = append(p.drift, LockPath+": does not record the files as they are")
	}
}

// refuseProduct refuses the product's own repository: promoting it would
// overwrite its sources with copies of themselves.
func refuseProduct(t *target) error {
	if gomod, _, err := t.read("go.mod"); err == nil {
		for _, line := range strings.Split(string(gomod), "\n") {
			if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok && strings.Trim(strings.TrimSpace(mod), `"`) == "github.com/claude-sandbox/claude-sandbox" {
				return fmt.Errorf("refusing %s: it is the claude-sandbox repository itself (go.mod)", t.root)
			}
		}
	}
	if meta, _, err := t.read("devcontainer-feature.json"); err == nil {
		var m features.Metadata
		if json.Unmarshal(meta, &m) == nil && m.ID == "claude-sandbox" {
			return fmt.Errorf("refusing %s: it is the claude-sandbox repository itself (devcontainer-feature.json)", t.root)
		}
	}
	return nil
}
