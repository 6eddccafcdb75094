package gitconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseCases are config texts with what git reads from them: "name=value"
// per entry ("name" alone for a key without a value), or the line of the
// error.
var parseCases = []struct {
	name string
	in   string
	want []string
	bad  int
}{
	{"plain", "[core]\n\tfsmonitor = touch x\n", []string{"core.fsmonitor=touch x"}, 0},
	{"case of section and key", "[CoRe]\n\tHooksPath = .Husky\n", []string{"core.hookspath=.Husky"}, 0},
	{"subsection keeps its case", "[diff \"PDF\"]\n\ttextconv = pdftotext\n", []string{"diff.PDF.textconv=pdftotext"}, 0},
	{"old subsection form is lower-cased", "[diff.PDF]\n\ttextconv = x\n", []string{"diff.pdf.textconv=x"}, 0},
	{"dots in a subsection", "[includeIf \"gitdir:~/w/\"]\n\tpath = a.inc\n", []string{"includeif.gitdir:~/w/.path=a.inc"}, 0},
	{"escapes in a subsection", "[s \"a\\\"b\\\\c\\d\"]\nk=v\n", []string{"s.a\"b\\cd.k=v"}, 0},
	{"key without value", "[core]\nbare\n", []string{"core.bare"}, 0},
	{"empty value", "[core]\nbare =\n", []string{"core.bare="}, 0},
	{"quotes keep spaces and comment characters", "[a]\nb = \"  x ; y # z  \"\n", []string{"a.b=  x ; y # z  "}, 0},
	{"comment after a value", "[a]\nb = x y ; comment\nc = z # comment\n", []string{"a.b=x y", "a.c=z"}, 0},
	{"inner whitespace becomes spaces", "[a]\nb = x\t\ty\n", []string{"a.b=x  y"}, 0},
	{"escapes in a value", "[a]\nb = x\\ty\\n\\\\\\\"\\b\n", []string{"a.b=x\ty\n\\\"\b"}, 0},
	{"continuation line", "[a]\nb = one \\\n  two\nc = 3\n", []string{"a.b=one   two", "a.c=3"}, 0},
	{"key on the header's line", "[a] b = 1\n", []string{"a.b=1"}, 0},
	{"CRLF", "[a]\r\nb = 1\r\n", []string{"a.b=1"}, 0},
	{"byte order mark", "\xef\xbb\xbf[a]\nb = 1\n", []string{"a.b=1"}, 0},
	{"no final newline", "[a]\nb = 1", []string{"a.b=1"}, 0},
	{"comment lines", "# x\n; y\n[a]\n  # z\nb\n", []string{"a.b"}, 0},
	{"key before any section", "k = v\n", []string{"k=v"}, 0},
	{"section of a subsection only", "[ \"x\"]\nk\n", []string{".x.k"}, 0},
	{"dash in a key", "[a]\nb-c = 1\n", []string{"a.b-c=1"}, 0},
	{"unknown escape", "[a]\nb = x\\q\n", nil, 2},
	{"unclosed quote", "[a]\nb = \"x\n", nil, 2},
	{"unclosed section", "[a\nb = 1\n", nil, 1},
	{"empty section", "[]\n", nil, 1},
	{"subsection without quotes", "[a b]\n", nil, 1},
	{"subsection split over lines", "[a \"b\n\"]\n", nil, 1},
	{"key starting with a digit", "[a]\n1b = x\n", nil, 2},
	{"underscore in a key", "[a]\nb_c = x\n", nil, 2},
	{"no equals sign", "[a]\nb c\n", nil, 2},
	{"partial byte order mark", "\xef\xbb[a]\n", nil, 1},
	{"vertical tab is not white space to git", "\v", nil, 1},
	{"bad line after good ones", "[a]\nb = 1\nc = 2\n!\n", nil, 4},
}

func entryStrings(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.NoValue {
			out = append(out, e.Name)
		} else {
			out = append(out, e.Name+"="+e.Value)
		}
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("f", []byte(tt.in))
			if tt.bad != 0 {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line != tt.bad || se.File != "f" {
					t.Fatalf("Parse = %v, %v; want an error at line %d", entryStrings(got), err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, entryStrings(got)); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEntryParts(t *testing.T) {
	for _, tt := range []struct{ name, section, sub, key string }{
		{"core.hookspath", "core", "", "hookspath"},
		{"diff.PDF.textconv", "diff", "PDF", "textconv"},
		{"includeif.gitdir:~/a.b/.path", "includeif", "gitdir:~/a.b/", "path"},
		{"k", "k", "", "k"},
	} {
		e := Entry{Name: tt.name}
		if e.Section() != tt.section || e.Subsection() != tt.sub || e.Key() != tt.key {
			t.Errorf("%s: got %q %q %q", tt.name, e.Section(), e.Subsection(), e.Key())
		}
	}
}

// TestParseAgreesWithGit reads every case with the installed git as well:
// the same entries, or an error at the same line.
func TestParseAgreesWithGit(t *testing.T) {
	git := findGit(t)
	for _, tt := range parseCases {
		if msg := agree(git, t.TempDir(), []byte(tt.in)); msg != "" {
			t.Errorf("%s: %s", tt.name, msg)
		}
	}
}

// FuzzParse compares the parser with the installed git on any input (or,
// without git, only checks that it never panics).
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 30s ./gitconfig/
func FuzzParse(f *testing.F) {
	for _, tt := range parseCases {
		f.Add([]byte(tt.in))
	}
	git, _ := exec.LookPath("git")
	f.Fuzz(func(t *testing.T, in []byte) {
		if git == "" {
			_, _ = Parse("f", in)
			return
		}
		if msg := agree(git, t.TempDir(), in); msg != "" {
			t.Error(msg)
		}
	})
}

func findGit(t *testing.T) string {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed under CI=true")
		}
		t.Skip("SKIPPING: git is not installed")
	}
	return git
}

var gitBadLine = regexp.MustCompile(`bad config line (\d+) in file`)

// agree returns "" when Parse and `git config --list` read in the same way.
func agree(git, dir string, in []byte) string {
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, in, 0o644); err != nil {
		return err.Error()
	}
	cmd := exec.Command(git, "config", "--file", file, "--list", "--null")
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "LC_ALL=C"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	gitErr := cmd.Run()
	got, err := Parse(file, in)
	if gitErr != nil {
		m := gitBadLine.FindStringSubmatch(stderr.String())
		if m == nil {
			return "git failed without a line number: " + stderr.String()
		}
		line, _ := strconv.Atoi(m[1])
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != line {
			return "git refuses line " + m[1] + ", Parse gives " + strings.Join(entryStrings(got), "|") + " " + errString(err)
		}
		return ""
	}
	if err != nil {
		return "git accepts the input, Parse refuses it: " + err.Error()
	}
	var want []string
	for _, rec := range strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		name, value, ok := strings.Cut(rec, "\n")
		if ok {
			want = append(want, name+"="+value)
		} else {
			want = append(want, name)
		}
	}
	if diff := cmp.Diff(want, entryStrings(got)); diff != "" {
		return "entries differ from git's (-git +Parse):\n" + diff
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
