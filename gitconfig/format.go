package gitconfig

import (
	"fmt"
	"strings"
)

// Format writes entries as a config file that git reads as exactly those
// entries, in the same order: a header at each change of section or
// subsection, every value in double quotes with git's escapes, so that no
// value, whatever it holds (a newline, a quote, '#', a leading space, a
// trailing backslash), ends its line early or adds a variable. A name git
// could not have read from a file, or a value holding a NUL (which git
// would cut there), is an error: nothing is written for it.
func Format(entries []Entry) ([]byte, error) {
	var b strings.Builder
	header := ""
	for _, e := range entries {
		section, sub, key := e.Section(), e.Subsection(), e.Key()
		if err := checkName(e, section, key); err != nil {
			return nil, err
		}
		if strings.ContainsRune(e.Value, 0) {
			return nil, fmt.Errorf("%s (%s:%d): a value holding a NUL cannot be written", e.Name, e.File, e.Line)
		}
		h := "[" + section + "]\n"
		if sub != "" {
			h = "[" + section + " " + quote(sub, false) + "]\n"
		}
		if h != header {
			b.WriteString(h)
			header = h
		}
		b.WriteString("\t" + key)
		if !e.NoValue {
			b.WriteString(" = " + quote(e.Value, true))
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

// checkName refuses a name whose parts git's parser would not read back
// as they are: a section and a key, both lower-case key characters
// (the key starting with a letter), and the subsection holds no newline
// or NUL, which no escape can write.
func checkName(e Entry, section, key string) error {
	bad := !strings.Contains(e.Name, ".") || section == "" || key == "" || !isAlpha(key[0]) || strings.ContainsAny(e.Subsection(), "\n\x00")
	for _, part := range []string{section, key} {
		for i := 0; i < len(part); i++ {
			if !isKeyChar(part[i]) || part[i] != lower(part[i]) {
				bad = true
			}
		}
	}
	if bad {
		return fmt.Errorf("%q (%s:%d): not a name git reads from a config file", e.Name, e.File, e.Line)
	}
	return nil
}

// quote writes s between double quotes with the escapes git's parser
// reads: a backslash and a quote always; in a value, the newline, tab and
// backspace too (a subsection knows no other escape, and holds no
// newline).
func quote(s string, value bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case value && c == '\n':
			b.WriteString(`\n`)
		case value && c == '\t':
			b.WriteString(`\t`)
		case value && c == '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
