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

// check refuses a value the conf would refuse, naming its flag, before the
// install changes anything (bubblewrap included). Each value is parsed as
// the one line the template makes of it; a line break in a value would make
// it two lines, the second unchecked here, so it is refused.
func (c ConfOptions) check() error {
	for _, kv := range c.values() {
		key, value := kv[0], kv[1]
		switch {
		case strings.TrimSpace(value) == "":
			return fmt.Errorf("--%s: the value is empty", key)
		case strings.ContainsAny(value, "\r\n"):
			return fmt.Errorf("--%s: %q is more than one line", key, value)
		}
		if _, err := sandbox.ParseConf("--"+key, strings.NewReader(key+" = "+value)); err != nil {
			var ce *sandbox.ConfError
			if errors.As(err, &ce) {
				return fmt.Errorf("--%s", ce.Msg) // the message starts with the key
			}
			return err
		}
	}
	return nil
}

// values are the key and value of each line with a value the template
// stamps, in its order (TestValuesAreTheTemplatesLines keeps the two in
// step); an unset single-valued option makes no line.
func (c ConfOptions) values() [][2]string {
	optional := func(v string) []string {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	var out [][2]string
	for _, k := range []struct {
		key  string
		list []string
	}{
		{"workspace-root", optional(c.WorkspaceRoot)},
		{"allow-write", c.AllowWrite},
		{"allow-write-executable", c.AllowWriteExecutable},
		{"sandbox-cache", c.SandboxCache},
		{"pass-env", c.PassEnv},
		{"protect", c.Protect},
		{"share-home", c.ShareHome},
		{"append-path", c.AppendPath},
		{"network", optional(c.Network)},
		{"allow-domain", c.AllowDomain},
		{"allow-ip", c.AllowIP},
		{"credentials", optional(c.Credentials)},
	} {
		for _, v := range k.list {
			out = append(out, [2]string{k.key, v})
		}
	}
	return out
}

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

// confLine splits a non-comment conf line into its key and value.
func confLine(l string) (key, value string) {
	t := strings.TrimSpace(l)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", ""
	}
	k, v, _ := strings.Cut(t, "=")
	return strings.TrimSpace(k), strings.TrimSpace(v)
}
