package gitconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// formatValues are values that, written carelessly, end their line early,
// start a comment, lose their spaces or add a variable.
var formatValues = []string{
	"plain", "", " leading and trailing ", "a # not a comment ; nor this",
	"x\n[core]\n\thooksPath = /tmp/evil", "quote \" and backslash \\", "trailing backslash \\",
	"tab\there", "back\bspace", "carriage\rreturn", "\r\n", "unicode é ☃",
	"\"\n[alias]\n\tx = !touch /tmp/p\n\"",
}

// TestFormatRoundTrip: what Format writes, Parse (and git, where it is
// installed) reads back as the same entries, a header and all; no value
// adds a variable.
func TestFormatRoundTrip(t *testing.T) {
	var in []Entry
	for i, v := range formatValues {
		name := "user.name"
		if i%2 == 1 {
			name = "color.Diff \"x] y\\.meta"
		}
		in = append(in, Entry{Name: name, Value: v})
	}
	in = append(in, Entry{Name: "core.bare", NoValue: true}, Entry{Name: "protocol.file.allow", Value: "always"})
	out, err := Format(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("f", out)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	if diff := cmp.Diff(entryStrings(in), entryStrings(got)); diff != "" {
		t.Errorf("read back (-written +read):\n%s\n%s", diff, out)
	}
	if git := findGit(t); git != "" {
		if msg := agree(git, t.TempDir(), out); msg != "" {
			t.Error(msg)
		}
	}
}

// TestFormatRefuses: a name git could not have read from a file, or a
// value with a NUL, is an error naming it, and nothing is written.
func TestFormatRefuses(t *testing.T) {
	for _, e := range []Entry{
		{Name: "k", Value: "no section"},
		{Name: ".x.k", Value: "empty section"},
		{Name: "user.Name", Value: "upper-case key"},
		{Name: "us_er.name", Value: "underscore in the section"},
		{Name: "user.1name", Value: "key starting with a digit"},
		{Name: "color.a\nb.k", Value: "newline in the subsection"},
		{Name: "color.a\x00b.k", Value: "NUL in the subsection"},
		{Name: "user.name", Value: "a\x00b"},
	} {
		out, err := Format([]Entry{{Name: "user.email", Value: "fine"}, e})
		if err == nil || out != nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", e.Name)) && !strings.Contains(err.Error(), "NUL") {
			t.Errorf("%q = %q: Format = %q, %v; want an error and nothing", e.Name, e.Value, out, err)
		}
	}
}

// TestLoadUnconditional follows include.path as Load does and leaves an
// includeIf, with what its file holds, out.
func TestLoadUnconditional(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitconfig", "[user]\n\tname = me\n[include]\n\tpath = more.inc\n[includeIf \"gitdir:~/work/\"]\n\tpath = work.inc\n")
	write("more.inc", "[user]\n\temail = me@example.com\n")
	write("work.inc", "[user]\n\temail = me@work.example\n")
	entries, files, err := LoadUnconditional(filepath.Join(dir, ".gitconfig"), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user.name=me", "include.path=more.inc", "user.email=me@example.com", "includeif.gitdir:~/work/.path=work.inc"}
	if diff := cmp.Diff(want, entryStrings(entries)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if len(files) != 2 {
		t.Errorf("files = %v; want the file and the one it includes", files)
	}
}
