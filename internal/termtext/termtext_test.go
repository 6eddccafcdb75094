package termtext

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var escapes = []struct {
	why, in, want string
}{
	{"plain ASCII", "/workspaces/proj/src/main.go", "/workspaces/proj/src/main.go"},
	{"spaces and punctuation", `a b "c" 'd' $e`, `a b "c" 'd' $e`},
	{"letters of other scripts", "/w/café/日本語/Ελληνικά/עברית", "/w/café/日本語/Ελληνικά/עברית"},
	{"emoji and combining marks", "🔒 e\u0301", "🔒 e\u0301"},
	{"a real replacement character", "a\uFFFDb", "a\uFFFDb"},
	{"the empty string", "", ""},
	{"backslash, so the escapes read back", `C:\x1b`, `C:\\x1b`},
	{"tab", "a\tb", `a\tb`},
	{"newline: a second line forged", "a\nclaude-sandbox: forged", `a\nclaude-sandbox: forged`},
	{"carriage return: the line overwritten", "a\rb", `a\rb`},
	{"OSC 0: the window title", "x\x1b]0;owned\x07y", `x\x1b]0;owned\x07y`},
	{"OSC 52: the clipboard", "\x1b]52;c;ZWNobyBvd25lZA==\x07", `\x1b]52;c;ZWNobyBvd25lZA==\x07`},
	{"OSC ended by ST", "\x1b]0;t\x1b\\", `\x1b]0;t\x1b\\`},
	{"CSI: cursor up, erase the line", "\x1b[2A\x1b[2K", `\x1b[2A\x1b[2K`},
	{"NUL, backspace, vertical tab, form feed", "\x00\x08\x0b\x0c", `\x00\x08\x0b\x0c`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"C1 CSI", "\u009b31m", `\u009b31m`},
	{"C1 next line", "a\u0085b", `a\u0085b`},
	{"C1 OSC and ST", "\u009d0;t\u009c", `\u009d0;t\u009c`},
	{"an invalid byte", "a\xffb", `a\xffb`},
	{"a truncated sequence", "a\xe2\x80", `a\xe2\x80`},
	{"an encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
	{"an 8-bit CSI, not UTF-8", "\x9b31m", `\x9b31m`},
	{"right-to-left override", "evil\u202Etxt.exe", `evil\u202etxt.exe`},
	{"every bidi embedding and override", "\u202A\u202B\u202C\u202D\u202E", `\u202a\u202b\u202c\u202d\u202e`},
	{"every bidi isolate", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
	{"bidi marks", "\u200E\u200F\u061C", `\u200e\u200f\u061c`},
	{"zero-width characters hide in a name", ".git\u200B \u200C\u200D\u2060\uFEFF", `.git\u200b \u200c\u200d\u2060\ufeff`},
	{"soft hyphen", "a\u00ADb", `a\u00adb`},
	{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag characters hide text", "a\U000E0041\U000E007F", `a\U000e0041\U000e007f`},
}

func TestEscape(t *testing.T) {
	for _, tt := range escapes {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", tt.why, tt.in, got, tt.want)
		}
	}
}

// The escaped text is a Go string literal's body: it reads back as the
// original, and holds nothing a terminal acts on.
func FuzzEscape(f *testing.F) {
	for _, tt := range escapes {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q, not UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, got, r)
			}
		}
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(got, `"`, `\"`) + `"`)
		if err != nil || back != s {
			t.Fatalf("Escape(%q) = %q reads back as %q (%v)", s, got, back, err)
		}
	})
}

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		why, in, want string
	}{
		{"a file's layout and code stay", "{\n\t\"cmd\": \"echo \\\"hi\\\"\"\n}\n", "{\n\t\"cmd\": \"echo \\\"hi\\\"\"\n}\n"},
		{"letters of other scripts", "café 日本語\n", "café 日本語\n"},
		{"OSC 0 and OSC 52", "a\x1b]0;t\x07\x1b]52;c;ZQ==\x07\n", `a\x1b]0;t\x07\x1b]52;c;ZQ==\x07` + "\n"},
		{"CSI", "\x1b[2A\x1b[2K", `\x1b[2A\x1b[2K`},
		{"carriage return: a line overwritten", "safe\revil\n", `safe\revil` + "\n"},
		{"DEL, C1 CSI", "\x7f\u009b2J", `\x7f\u009b2J`},
		{"an invalid byte", "a\xffb", `a\xffb`},
		{"bidi override and isolate", "x\u202Ey\u2066z", `x\u202ey\u2066z`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"tag character", "a\U000E0041", `a\U000e0041`},
	} {
		if got := Lines(tt.in); got != tt.want {
			t.Errorf("%s: Lines(%q) = %q, want %q", tt.why, tt.in, got, tt.want)
		}
	}
}

// What Lines returns holds nothing a terminal acts on but newlines and tabs.
func FuzzLines(f *testing.F) {
	for _, tt := range escapes {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Lines(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Lines(%q) = %q, not UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) && r != '\n' && r != '\t' {
				t.Fatalf("Lines(%q) = %q holds %U", s, got, r)
			}
		}
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Lines(%q) = %q: its lines are not the file's", s, got)
		}
	})
}

func TestJSON(t *testing.T) {
	type denial struct{ Path, Reason string }
	for _, tt := range escapes {
		in := denial{Path: tt.in, Reason: "a"}
		js, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(js)
		for _, r := range string(got) {
			if unsafeRune(r) {
				t.Errorf("%s: JSON(%s) = %s holds %U", tt.why, js, got, r)
			}
		}
		var back denial
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%s: JSON(%s) = %s does not parse: %v", tt.why, js, got, err)
			continue
		}
		var want denial
		json.Unmarshal(js, &want)
		if back != want {
			t.Errorf("%s: JSON(%s) = %s decodes to %q, want %q", tt.why, js, got, back, want)
		}
	}
}

func TestJSONKeepsItsLayout(t *testing.T) {
	js, err := json.MarshalIndent([]any{map[string]any{"id": "a", "detail": "x\u202Ey\u009b\x7f\U000E0041"}, 1}, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n\t{\n\t\t\"detail\": \"x\\u202ey\\u009b\\u007f\\udb40\\udc41\",\n\t\t\"id\": \"a\"\n\t},\n\t1\n]"
	if got := string(JSON(js)); got != want {
		t.Errorf("JSON(%s) = %q, want %q", js, got, want)
	}
}
