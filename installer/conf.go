package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/templates"
)

// planConf stamps /etc/claude-sandbox.conf from the template. An existing
// conf is kept line for line: the lines the options ask for and that are
// missing are appended, a single-valued key the options set differently is
// changed in place, and nothing the admin wrote is dropped. The result must
// parse, or nothing is written.
func (in *run) planConf() error {
	p := in.path(layout.Conf)
	rendered, err := in.opts.Conf.render()
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
		if _, err := sandbox.ParseConf(layout.Conf, bytes.NewReader(old)); err != nil {
			return fmt.Errorf("the existing conf is not valid, so it was left alone: %w", err)
		}
	}
	next := mergeConf(old, rendered)
	if _, err := sandbox.ParseConf(layout.Conf, bytes.NewReader(next)); err != nil {
		return fmt.Errorf("the options make an invalid conf: %w", err)
	}
	if bytes.Equal(old, next) {
		return nil
	}
	what := "wrote " + layout.Conf
	if old != nil {
		what = "updated " + layout.Conf
	}
	in.add(what, lineDiff(layout.Conf, old, next), func() error { return writeAtomic(p, next, 0o644) })
	return nil
}

// check refuses a value the conf would refuse, naming its flag, before the
// install changes anything (bubblewrap included). Each value is parsed as
// the one line it becomes; a line break in a value would make it two
// lines, the second unchecked here, so it is refused.
func (c ConfOptions) check() error {
	for _, key := range slices.Sorted(maps.Keys(c)) {
		if k, ok := sandbox.LookupConfKey(key); !ok || k.Kind == sandbox.KeyRetired {
			return fmt.Errorf("--%s: not a conf key", key)
		}
	}
	for _, l := range c.lines() {
		if l.flag {
			continue
		}
		switch {
		case strings.TrimSpace(l.value) == "":
			return fmt.Errorf("--%s: the value is empty", l.key)
		case strings.ContainsAny(l.value, "\r\n"):
			return fmt.Errorf("--%s: %q is more than one line", l.key, l.value)
		}
		if _, err := sandbox.ParseConf("--"+l.key, strings.NewReader(l.String())); err != nil {
			var ce *sandbox.ConfError
			if errors.As(err, &ce) {
				return fmt.Errorf("--%s", ce.Msg) // the message starts with the key
			}
			return err
		}
	}
	return nil
}

// confLine is one line the options ask for: a key and its value, or a bare flag.
type confLine struct {
	key, value string
	flag       bool
}

func (l confLine) String() string {
	if l.flag {
		return l.key
	}
	return l.key + " = " + l.value
}

// lines are the conf lines the options ask for, in the order of
// sandbox.ConfKeys.
func (c ConfOptions) lines() []confLine {
	var out []confLine
	for _, k := range sandbox.ConfKeys() {
		values := c[k.Name]
		if len(values) == 0 {
			continue
		}
		last := values[len(values)-1]
		switch k.Kind {
		case sandbox.KeyRepeatable:
			for _, v := range values {
				out = append(out, confLine{key: k.Name, value: v})
			}
		case sandbox.KeySingle:
			if last != "" {
				out = append(out, confLine{key: k.Name, value: last})
			}
		case sandbox.KeyFlag:
			if last == "true" {
				out = append(out, confLine{key: k.Name, flag: true})
			}
		}
	}
	return out
}

// render is the conf the options make by themselves.
func (c ConfOptions) render() ([]byte, error) {
	var lines []string
	for _, l := range c.lines() {
		lines = append(lines, l.String())
	}
	return templates.Render("claude-sandbox.conf.tmpl", lines)
}

func mergeConf(old, rendered []byte) []byte {
	if old == nil {
		return rendered
	}
	lines := splitLines(string(old))
	have := map[string]bool{}
	keyLine := map[string]int{}
	for i, l := range lines {
		key, value := splitConfLine(l)
		if key != "" {
			have[key+"="+value] = true
			keyLine[key] = i
		}
	}
	var added []string
	for _, l := range splitLines(string(rendered)) {
		key, value := splitConfLine(l)
		if key == "" || have[key+"="+value] {
			continue
		}
		if i, ok := keyLine[key]; ok && once(key) {
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

// once reports whether key may be set only once, so its line is replaced
// instead of another added.
func once(key string) bool {
	k, _ := sandbox.LookupConfKey(key)
	return k.Once()
}

// splitConfLine splits a non-comment conf line into its key and value.
func splitConfLine(l string) (key, value string) {
	t := strings.TrimSpace(l)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", ""
	}
	k, v, _ := strings.Cut(t, "=")
	return strings.TrimSpace(k), strings.TrimSpace(v)
}
