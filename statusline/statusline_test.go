package statusline

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name, home, input string
		inside            bool
		want              string
	}{
		{"project dir under the home", "/home/dev", `{"workspace":{"project_dir":"/home/dev/src/app","current_dir":"/home/dev/src/app/web"}}`, true, "🔒 sandboxed · ~/src/app · network open"},
		{"the home itself", "/home/dev", `{"workspace":{"project_dir":"/home/dev"}}`, true, "🔒 sandboxed · ~ · network open"},
		{"a sibling of the home is not under it", "/home/dev", `{"workspace":{"project_dir":"/home/devops/app"}}`, true, "🔒 sandboxed · /home/devops/app · network open"},
		{"current_dir when there is no project_dir", "", `{"workspace":{"current_dir":"/srv/app"}}`, true, "🔒 sandboxed · /srv/app · network open"},
		{"cwd last", "", `{"cwd":"/srv/app"}`, false, "⚠ NOT SANDBOXED (start Claude with `claude`) · /srv/app"},
		{"no input", "", ``, true, "🔒 sandboxed · network open"},
		{"a directory a session named", "/home/dev", `{"workspace":{"current_dir":"/home/dev/x\u001b]0;title\u0007\nforged\u202e\u009b2J"}}`, true, `🔒 sandboxed · ~/x\x1b]0;title\x07\nforged\u202e\u009b2J · network open`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			Render(tc.inside, "open", tc.home, strings.NewReader(tc.input), &out)
			if got := strings.TrimSuffix(out.String(), "\n"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
