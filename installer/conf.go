package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/templates"
)

// planConf stamps /etc/claude-sandbox.conf from the template. An existing
// conf is kept line for line: the lines the options ask for and that are
// missing are appended, a single-valued key the options set differently is
// changed in place, and nothing the admin wrote is dropped. The result must
// parse, or nothing is written.
func (in *run) planConf() error {
	p := in.path(sandbox.ConfPath)
	rendered, err := templates.Render("claude-sandbox.conf.tmpl", in.opts.Conf)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		old = nil
	} else if err != nil {
		return err
	}
	if old != nil {
		if _, err := sandbox.ParseConf(sandbox.ConfPath, bytes.NewReader(old)); err != nil {
			return fmt.Errorf("the existing conf is not valid, so it was left alone: %v", err)
		}
	}
	next := mergeConf(old, rendered)
	if _, err := sandbox.ParseConf(sandbox.ConfPath, bytes.NewReader(next)); err != nil {
		return fmt.Errorf("the options make an invalid conf: %v", err)
	}
	if bytes.Equal(old, next) {
		return nil
	}
	what := "wrote " + sandbox.ConfPath
	if old != nil {
		what = "updated " + sandbox.ConfPath
	}
	in.add(what, lineDiff(sandbox.ConfPath, old, next), func() error { return writeAtomic(p, next, 0o644) })
	return nil
}

var singleKeys = map[string]bool{"workspace-root": true}

func mergeConf(old, rendered []byte) []byte {
	if old == nil {
		return rendered
	}
	lines := splitLines(string(old))
	have := map[string]bool{}
	keyLine := map[string]int{}
	for i, l := range lines {
		key, value := confLine(l)
		if key != "" {
			have[key+"="+value] = true
			keyLine[key] = i
		}
	}
	var added []string
	for _, l := range splitLines(string(rendered)) {
		key, value := confLine(l)
		if key == "" || have[key+"="+value] {
			continue
		}
		if i, ok := keyLine[key]; ok && singleKeys[key] {
			lines[i] = l
			continue
		}
		added = append(added, l)
	}
	out := strings.Join(lines, "\n")
	if len(lines) > 0 {
		out += "\n"
	}
	if len(added) > 0 {
		out += strings.Join(added, "\n") + "\n"
	}
	return []byte(out)
}

// confLine splits a non-comment conf line into its key and value.
func confLine(l string) (key, value string) {
	t := strings.TrimSpace(l)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", ""
	}
	k, v, _ := strings.Cut(t, "=")
	return strings.TrimSpace(k), strings.TrimSpace(v)
}
