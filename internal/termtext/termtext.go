// Package termtext makes text that may come from inside the sandbox safe to
// print on the user's terminal. A session chooses the names it makes in the
// workspace, the hosts it asks the proxy for and the contents of the files
// it writes; when a command outside prints one of them, a control
// character in it would reach the terminal as a command (set the window
// title, write the clipboard, move the cursor), a newline would forge a
// second line, and a bidi override would show the line in another order.
//
// Escape spells every such character with a backslash, as a Go string
// literal would, and keeps the rest as it is, non-ASCII letters included:
//
//	\\          a backslash
//	\t \n \r    tab, newline, carriage return
//	\xHH        any other C0 control, DEL, and each byte that is not UTF-8
//	\uHHHH      a C1 control (U+0080 to U+009F), a format character
//	            (Unicode's Cf: the bidi embeddings, overrides and isolates,
//	            zero-width characters, the byte order mark, ...), the line
//	            and paragraph separators U+2028 and U+2029
//	\UHHHHHHHH  a format character past U+FFFF (the tag characters)
//
// Nothing else is escaped, so the escaped text reads back unambiguously:
// it is the body of a Go string literal whose double quotes were left as
// they are.
//
// Lines does the same for the text of a file shown line by line (a diff),
// but keeps its newlines, tabs and backslashes, which are its layout and
// its code. JSON escapes the same characters in JSON text, as JSON spells
// them.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape returns s with every character a terminal would act on, or that
// would hide or reorder the text around it, escaped: for a name, a line, a
// message.
func Escape(s string) string { return escape(s, false) }

// Lines returns the text s of a file with every character Escape escapes
// escaped, but for the newlines that end its lines, its tabs and its
// backslashes, which stay as they are. The file's own text may then look
// like an escape: what Lines returns is for reading, not for reading back.
func Lines(s string) string { return escape(s, true) }

// escape is Escape, or with layout Lines.
func escape(s string, layout bool) string {
	if clean(s, layout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case layout && keptInLines(r):
			b.WriteRune(r)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff && unsafeRune(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// JSON returns the JSON text js, as encoding/json writes it, with the
// characters it leaves raw in strings and Escape escapes (DEL, the C1
// controls, the format characters) written as \u escapes, so the text
// decodes to the same values. encoding/json already escapes the C0
// controls and U+2028 and U+2029 and makes invalid UTF-8 valid; outside
// its strings there are only ASCII characters, the newlines and spaces of
// its layout among them, which stay as they are.
func JSON(js []byte) []byte {
	var out []byte
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if r < 0x7f || !unsafeRune(r) {
			if out != nil {
				out = append(out, js[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(js)+16), js[:i]...)
		}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	if out == nil {
		return js
	}
	return out
}

// unsafeRune reports whether the terminal would act on r, or r would hide or
// reorder the text around it: a control (C0, DEL, C1), a format character,
// or a line or paragraph separator.
func unsafeRune(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// keptInLines are the characters Lines keeps and Escape escapes.
func keptInLines(r rune) bool { return r == '\n' || r == '\t' || r == '\\' }

// clean reports whether escape would return s as it is.
func clean(s string, layout bool) bool {
	for i, r := range s {
		if layout && keptInLines(r) {
			continue
		}
		if r == '\\' || unsafeRune(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return false
		}
	}
	return true
}
