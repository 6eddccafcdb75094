package gitconfig

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		want Kind
	}{
		{"core.fsmonitor", Command},
		{"core.hookspath", HooksDir},
		{"core.worktree", Worktree},
		{"init.templatedir", TemplateDir},
		{"include.path", Include},
		{"includeif.gitdir:~/w/.path", Include},
		{"includeif.path", Other}, // a condition is required
		{"include.x.path", Other},
		{"diff.PDF.textconv", Command},
		{"diff.textconv", Other},
		{"diff.external", Command},
		{"filter.lfs.process", Command},
		{"credential.helper", Command},
		{"credential.https://example.com.helper", Command},
		{"gpg.ssh.program", Command},
		{"gpg.ssh.defaultkeycommand", Command},
		{"alias.st", Command},
		{"pager.log", Command},
		{"hook.lint.command", Command},
		{"hook.lint.event", Other},
		{"submodule.lib.update", Command},
		{"remote.origin.uploadpack", Command},
		{"remote.origin.url", Other},
		{"core.bare", Other},
		{"user.name", Other},
	} {
		if got := (Entry{Name: tt.name}).Kind(); got != tt.want {
			t.Errorf("Kind(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"./tools/fsmon --watch", []string{"./tools/fsmon", "--watch"}},
		{"!sh scripts/x.sh && make", []string{"sh", "scripts/x.sh", "make"}},
		{`"/opt/my tools/run" 'a b' c\ d`, []string{"/opt/my tools/run", "a b", "c d"}},
		{"cat|tee out;rm x", []string{"cat", "tee", "out", "rm", "x"}},
		{"store --file=.creds/store", []string{"store", "--file=.creds/store", ".creds/store"}},
		{"-c core.pager=./p log", []string{"-c", "core.pager=./p", "./p", "log"}},
		{`"a\"b" $(./x)`, []string{`a"b`, "$", "./x"}},
		// Read as a shell reads them: a -c line's commands, the home in
		// any spelling as ~, a wrapper's command.
		{"!sh -c 'cd sub && ./tools/x.sh --a'", []string{"sh", "-c", "cd", "sub", "./tools/x.sh", "--a"}},
		{`"$HOME"/bin/x ${HOME}/y --out=$HOME/z $OTHER/w`, []string{"~/bin/x", "~/y", "--out=$HOME/z", "~/z", "$/w"}},
		{"env GIT_PAGER=x ./p", []string{"env", "GIT_PAGER=x", "x", "./p"}},
		// git refuses none of these values; a line that does not parse is
		// split at blanks and operators.
		{"!echo it's ./x", []string{"echo", "its", "./x"}},
		{"", nil},
	} {
		if diff := cmp.Diff(tt.want, Words(tt.in)); diff != "" {
			t.Errorf("Words(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestProgramDirs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"tools/*.sh --watch", []string{"tools/"}},
		{"!X=1 run/$MODE && sh -c 'hooks/[a-z]*' && bin/fixed", []string{"run/", "hooks/"}},
		{`"$HOME"/bin/$X; ${HOME}/*.sh`, []string{"~/bin/", "~/"}},
		{"./*.sh", []string{"./"}},
		// A shell's or an interpreter's script is what it runs.
		{"sh scripts/*.sh; python3 -u py/$X.py", []string{"scripts/", "py/"}},
		// So is each script a loop runs.
		{`!for f in lint/*.sh; do sh "$f"; done`, []string{"lint/"}},
		// Not an argument's, not a computed directory's, not a bare glob.
		{"cat scripts/*.sh; $D/x; *.sh; tools/fsmon", nil},
	} {
		if diff := cmp.Diff(tt.want, ProgramDirs(tt.in)); diff != "" {
			t.Errorf("ProgramDirs(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestScripts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"!bash check.sh && python3 -u tools/lint.py", []string{"./check.sh", "tools/lint.py"}},
		{`sh -c '. env.sh; sh "$HOME"/s.sh'; perl -e 1 x.pl; node -`, []string{"./env.sh", "~/s.sh"}},
		// A script read from the input, or through cat.
		{"!sh < hooks/a.sh; cat b.sh | bash; eval \"$(cat ~/c.sh)\"", []string{"hooks/a.sh", "./b.sh", "~/c.sh"}},
		// Not a program, not an argument, not a computed script.
		{"./run check.sh; cat x.sh; sh $X.sh", nil},
	} {
		if diff := cmp.Diff(tt.want, Scripts(tt.in)); diff != "" {
			t.Errorf("Scripts(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestImportDirs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{`"/usr/bin/python3" -m nbstripout`, []string{"."}},
		{`!python3 -c 'import x' && python3 tools/t.py && python3 "$HOME"/bin/u.py && PYTHONPATH=lib python3 -P -m v`, []string{".", "tools", "~/bin", "lib"}},
		{"python3 -P -m x; sh -c 'python3 -I y.py'; node -e x", nil},
		{"perl -I lib x.pl", []string{"lib"}},
	} {
		if _, got := ImportDirs(tt.in); !cmp.Equal(tt.want, got) {
			t.Errorf("ImportDirs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".gitconfig"), "[include]\n\tpath = team.inc\n\tpath = ~/missing.inc\n[includeIf \"gitdir:/nowhere/\"]\n\tpath = "+dir+"/ws/.gitconfig\n[user]\n\tname = me\n")
	write(filepath.Join(home, "team.inc"), "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ~other/x\n")
	write(filepath.Join(dir, "ws/.gitconfig"), "[core]\n\tfsmonitor = ./fsmon\n")
	if err := os.MkdirAll(filepath.Join(dir, "ws/dir.inc"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "loop"), "[include]\n\tpath = loop\n")

	entries, files, err := Load(filepath.Join(home, ".gitconfig"), home)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, strings.TrimPrefix(e.File, dir+"/")+": "+e.Name+"="+e.Value)
	}
	want := []string{
		"home/.gitconfig: include.path=team.inc",
		"home/team.inc: core.hookspath=.githooks",
		"home/team.inc: include.path=~other/x",
		"home/.gitconfig: include.path=~/missing.inc",
		"home/.gitconfig: includeif.gitdir:/nowhere/.path=" + dir + "/ws/.gitconfig",
		"ws/.gitconfig: core.fsmonitor=./fsmon",
		"home/.gitconfig: user.name=me",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
	var gotFiles []string
	for _, f := range files {
		gotFiles = append(gotFiles, strings.TrimPrefix(f.Path, dir+"/")+map[bool]string{true: "", false: " (missing)"}[f.Exists])
	}
	wantFiles := []string{"home/.gitconfig", "home/team.inc", "home/missing.inc (missing)", "ws/.gitconfig"}
	if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}

	// A directory is listed and read as nothing (git refuses it); a cycle
	// ends at git's depth limit.
	write(filepath.Join(dir, "top"), "[include]\n\tpath = ws/dir.inc\n")
	if _, files, err := Load(filepath.Join(dir, "top"), home); err != nil || len(files) != 2 || !files[1].Exists {
		t.Errorf("directory include: %v, %v", files, err)
	}
	if _, files, err := Load(filepath.Join(dir, "loop"), home); err != nil || len(files) != maxIncludeDepth+1 {
		t.Errorf("include cycle: %d files, %v", len(files), err)
	}

	// A bad line in an included file names that file and line.
	write(filepath.Join(home, "team.inc"), "[core\n")
	if _, _, err := Load(filepath.Join(home, ".gitconfig"), home); err == nil || err.Error() != filepath.Join(home, "team.inc")+":1: bad git config line (git refuses this file too)" {
		t.Errorf("bad include: %v", err)
	}
}

// A config a session could have left as a FIFO, or grown past the bound,
// is an error, never waited on or held; /dev/null, which users name to
// load no global config, is an empty file.
func TestLoadReadsOnlyPlainFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.inc")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.inc")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxConfigFile+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ inc, want string }{
		{fifo, fifo + " is a FIFO, not a regular file"},
		{huge, huge + " is larger than the 4194304 bytes"},
	} {
		cfg := filepath.Join(dir, "config")
		if err := os.WriteFile(cfg, []byte("[include]\n\tpath = "+c.inc+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(cfg, dir); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("an include of %s: %v; want %q...", c.inc, err, c.want)
		}
	}
	entries, files, err := Load(os.DevNull, dir)
	if err != nil || len(entries) != 0 || len(files) != 1 || !files[0].Exists {
		t.Errorf("Load(/dev/null) = %v, %v, %v; want one existing file without entries", entries, files, err)
	}
}
