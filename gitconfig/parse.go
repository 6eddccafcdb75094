// Package gitconfig reads git's configuration files the way git does: the
// syntax (sections, subsections, quoting, escapes, continuation lines,
// comments), the case rules, and which keys name files or commands. It
// writes only what it read, again (Format), and it never runs git.
package gitconfig

import (
	"bytes"
	"fmt"
	"strings"
)

// Entry is one variable of a config file, in the order written.
type Entry struct {
	// Name is the variable's full name as git spells it: the section and
	// the key lower-cased, a subsection between them as written in
	// [section "subsection"] (lower-cased in the old [section.subsection]
	// form), joined by dots.
	Name    string
	Value   string
	NoValue bool // a key alone on its line: a boolean true, no value
	Line    int  // the line the key is on
	File    string
}

// Section is the part of the name before the first dot.
func (e Entry) Section() string {
	s, _, _ := strings.Cut(e.Name, ".")
	return s
}

// Subsection is the part between the first and the last dot, "" if none.
func (e Entry) Subsection() string {
	first, last := strings.IndexByte(e.Name, '.'), strings.LastIndexByte(e.Name, '.')
	if first < 0 || first == last {
		return ""
	}
	return e.Name[first+1 : last]
}

// Key is the part after the last dot.
func (e Entry) Key() string { return e.Name[strings.LastIndexByte(e.Name, '.')+1:] }

// SyntaxError is a line git refuses: git stops every command that reads the
// file there.
type SyntaxError struct {
	File string
	Line int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: bad git config line (git refuses this file too)", e.File, e.Line)
}

// Parse reads one config file's text. It follows git's own parser
// (config.c: git_parse_source and its helpers) step by step, so that it
// accepts exactly what git accepts and reads the same names and values;
// the error names the line git names.
func Parse(file string, data []byte) ([]Entry, error) {
	p := &parser{data: data, line: 1}
	entries, ok := p.parse()
	if !ok {
		return nil, &SyntaxError{File: file, Line: p.line}
	}
	for i := range entries {
		entries[i].File = file
	}
	return entries, nil
}

type parser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

// next is git's get_next_char: CRLF reads as LF, and the end of the input
// reads as a newline (counted as one) with eof set.
func (p *parser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		p.line++
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// isSpace, isAlpha and isAlnum are git's own (ctype.c), not the C
// library's: ASCII only, and only space, tab, CR and LF are white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
func isKeyChar(c byte) bool {
	return isAlnum(c) || c == '-'
}

// cString is what git sees of a name or value it built: the bytes up to
// the first NUL, since git hands them on as C strings.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (p *parser) parse() ([]Entry, bool) {
	var out []Entry
	const bom = "\xef\xbb\xbf" // a UTF-8 byte order mark at the start is skipped
	matched := 0
	comment := false
	var section []byte // the current section stem, with its trailing dot
	for {
		c := p.next()
		if matched >= 0 && matched < len(bom) {
			if c == bom[matched] {
				matched++
				continue
			}
			if matched > 0 {
				return nil, false // a partial byte order mark
			}
			matched = -1
		}
		switch {
		case c == '\n':
			if p.eof {
				return out, true
			}
			comment = false
		case comment || isSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			name, ok := p.sectionHeader()
			if !ok || len(name) < 1 {
				return nil, false
			}
			section = append(name, '.')
		case !isAlpha(c):
			return nil, false
		default:
			e, ok := p.variable(append(append([]byte{}, section...), lower(c)))
			if !ok {
				return nil, false
			}
			out = append(out, e)
		}
	}
}

// sectionHeader reads what follows '[' up to its ']' (git's get_base_var).
func (p *parser) sectionHeader() ([]byte, bool) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return nil, false
		case c == ']':
			return name, true
		case isSpace(c):
			return p.subsection(name, c)
		case !isKeyChar(c) && c != '.':
			return nil, false
		}
		name = append(name, lower(c))
	}
}

// subsection reads ` "subsection"]` after a section name (git's
// get_extended_base_var). Inside the quotes a backslash takes the next
// character as it is; the subsection keeps its case.
func (p *parser) subsection(name []byte, c byte) ([]byte, bool) {
	for {
		if c == '\n' {
			p.line--
			return nil, false
		}
		c = p.next()
		if !isSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, false
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			p.line--
			return nil, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				p.line--
				return nil, false
			}
		}
		name = append(name, c)
	}
	if p.next() != ']' {
		return nil, false
	}
	return name, true
}

// variable reads the rest of a key and its value (git's get_value).
func (p *parser) variable(name []byte) (Entry, bool) {
	start := p.line
	var c byte
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name = append(name, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := Entry{Name: cString(name), Line: start}
	if c == '\n' {
		e.NoValue = true
		return e, true
	}
	if c != '=' {
		return Entry{}, false
	}
	v, ok := p.value()
	e.Value = v
	return e, ok
}

// value reads a value up to the end of its line (git's parse_value):
// whitespace outside quotes is kept as single spaces between words and
// dropped at either end, '#' and ';' outside quotes start a comment, a
// backslash at the end of a line continues the value on the next, and
// \t \b \n \\ \" are the only escapes.
func (p *parser) value() (string, bool) {
	var v []byte
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				p.line--
				return "", false
			}
			return cString(v), true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}
