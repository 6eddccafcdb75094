package sandbox

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hookSettings writes Claude settings whose hooks run commands.
func hookSettings(t *testing.T, commands ...string) string {
	t.Helper()
	var hooks []map[string]string
	for _, c := range commands {
		hooks = append(hooks, map[string]string{"type": "command", "command": c})
	}
	b, err := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"hooks": hooks}}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProjectCommandFiles(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	makeFiles(t, dir, map[string]string{
		"ws/.claude/settings.json": hookSettings(t,
			`"$CLAUDE_PROJECT_DIR"/hooks/quoted.sh`,
			`${CLAUDE_PROJECT_DIR}/hooks/missing.sh --fast`,
			`python3 scripts/check.py; echo a/b; /usr/bin/true`,
			`prettier --write $CLAUDE_PROJECT_DIR/src > "$CLAUDE_PROJECT_DIR"/log/out.txt`,
			`$CLAUDE_PROJECT_DIR/hooks/*.sh; $CLAUDE_PROJECT_DIR/hooks/$NAME.sh`,
			// Read as a shell reads them: a -c line's commands, quotes within
			// it, the program of every command of a list, a substitution, a
			// wrapper.
			`bash -c 'cd "$CLAUDE_PROJECT_DIR" && ./hooks/inner.sh --fast'`,
			`sh -c "\"$CLAUDE_PROJECT_DIR\"/hooks/inner-quoted.sh"`,
			`true && $CLAUDE_PROJECT_DIR/hooks/later.sh`,
			`echo "$($CLAUDE_PROJECT_DIR/hooks/substituted.sh)"`,
			`env MODE=x "$CLAUDE_PROJECT_DIR/hooks/wrapped.sh"`,
			// Every wrapper that runs its operands, past its options and
			// the operands it takes first.
			`timeout -s KILL 30 nice -n 5 "$CLAUDE_PROJECT_DIR"/hooks/timed.sh; flock -w 3 /tmp/lock -c "$CLAUDE_PROJECT_DIR/hooks/locked.sh"`,
			// A program picked in a directory: the directory, missing or
			// not, but never the workspace's root, nor for an argument.
			`$CLAUDE_PROJECT_DIR/bin/run-*; $CLAUDE_PROJECT_DIR/*.sh; prettier --write $CLAUDE_PROJECT_DIR/src/*.ts`,
			`$CLAUDE_PROJECT_DIR/linked/*.sh; $CLAUDE_PROJECT_DIR/status.sh/*`,
			// A shell's or an interpreter's script is what it runs: a missing
			// one counts, and so does the directory one is picked in; not
			// after an option that gives the code itself.
			`bash -e "$CLAUDE_PROJECT_DIR"/.claude/hooks/absent.sh; node tools/*.js; python3 -P -m mod py/absent.py`,
			// A script named without a directory is read from the working
			// directory, the project's: missing or not.
			`bash check.sh; python3 -P -u lint.py; . env.sh; node -; cat plain.txt`,
			// A script a shell reads from its input, or through cat.
			`sh < "$CLAUDE_PROJECT_DIR"/hooks/piped.sh; cat hooks/catted.sh | bash; source <(cat sourced.sh)`,
			// A loop that runs each script it lists.
			`for f in "$CLAUDE_PROJECT_DIR"/each/*.sh; do sh "$f"; done`,
		),
		"ws/.claude/settings.local.json": `{"statusLine": {"type": "command", "command": "GUARD=$CLAUDE_PROJECT_DIR/hooks/guard.sh ./status.sh"}}`,
		"ws/hooks/quoted.sh":             "",
		"ws/hooks/inner.sh":              "",
		"ws/hooks/inner-quoted.sh":       "",
		"ws/hooks/guard.sh":              "",
		"ws/hooks/a.sh":                  "",
		"ws/scripts/check.py":            "",
		"ws/status.sh":                   "",
		"ws/lint.py":                     "",
		"ws/plain.txt":                   "",
		"ws/src/":                        "",
		"ws/linked":                      "->hooks",
	})
	got, err := ProjectCommandFiles(ws)
	if err != nil {
		t.Fatal(err)
	}
	// Not a/b (a missing argument), src (a directory), log/out.txt (a
	// missing file a redirection writes), a glob's or a variable's file,
	// but the directory a program is picked in (hooks/, the missing bin/,
	// a link to one), not a file named as one.
	want := []string{
		".claude/hooks/absent.sh",
		"bin/",
		"check.sh",
		"each/",
		"env.sh",
		"hooks/",
		"hooks/catted.sh",
		"hooks/guard.sh",
		"hooks/inner-quoted.sh",
		"hooks/inner.sh",
		"hooks/later.sh",
		"hooks/locked.sh",
		"hooks/missing.sh",
		"hooks/piped.sh",
		"hooks/quoted.sh",
		"hooks/substituted.sh",
		"hooks/timed.sh",
		"hooks/wrapped.sh",
		"linked/",
		"lint.py",
		"scripts/",
		"scripts/check.py",
		"sourced.sh",
		"status.sh",
		"tools/",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProjectCommandFiles mismatch (-want +got):\n%s", diff)
	}
}

func TestClaudeCommandFiles(t *testing.T) {
	home := t.TempDir()
	makeFiles(t, home, map[string]string{
		".claude/settings.json": `{"statusLine": {"type": "command", "command": "bash -c 'cd ~ && ~/.claude/bin/status.sh'"},
			"apiKeyHelper": "\"$HOME\"/.claude/bin/key.sh --for=${HOME}/.claude/keys/k",
			"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "~/.claude/hooks/held.sh; $HOME/.claude/bin/$X.sh"}]},
				{"hooks": [{"type": "command", "command": "~/.claude/hooks/*.sh; ~/.claude/*.sh; MODE=a ~/.claude/gen/run-$MODE; bash ~/.claude/scripts/*.sh; cat ~/.claude/args/*.txt; for s in ~/.claude/each/*; do \"$s\"; done"}]},
				{"hooks": [{"type": "command", "command": "~/.claude/linked/*.sh; ~/.claude/file/*.sh; ~/.claude/$D/run.sh"}]}]}}`,
		".claude/file":   "not a directory",
		".claude/real/":  "",
		".claude/linked": "->real",
	})
	got, err := ClaudeCommandFiles(home)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		got[i] = strings.TrimPrefix(p, home+"/")
	}
	// A program (or a shell's script) picked in a directory holds the
	// directory (a missing one too, and a link, which the launch refuses
	// below ~/.claude); not ~/.claude/hooks, which the policy holds itself,
	// nor ~/.claude itself, nor another argument's directory, a file's, or
	// a computed one.
	want := []string{".claude/bin/", ".claude/bin/key.sh", ".claude/bin/status.sh", ".claude/each/", ".claude/gen/", ".claude/keys/k", ".claude/linked/", ".claude/scripts/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClaudeCommandFiles mismatch (-want +got):\n%s", diff)
	}
}
