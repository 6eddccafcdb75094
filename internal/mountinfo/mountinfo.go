// Package mountinfo reads /proc/PID/mountinfo (proc(5)): one mount a line,
//
//	id parent major:minor root point options [optional...] - fstype source super-options
//
// with the paths' spaces, tabs, newlines and backslashes written as octal
// escapes (\040 for a space), which Parse undoes.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mount is one line of a mountinfo table.
type Mount struct {
	ID, Parent   int
	Dev          string   // major:minor of the file system
	Root         string   // the directory of that file system mounted here
	Point        string   // where it is mounted
	Options      string   // the mount's own options, comma-separated: a bind's "ro" is here
	Optional     []string // the optional fields: propagation (shared:N, master:N, propagate_from:N, unbindable)
	FSType       string
	Source       string
	SuperOptions string // the file system's options, comma-separated
}

// ReadOnly reports whether the mount itself is read-only.
func (m Mount) ReadOnly() bool { return HasOption(m.Options, "ro") }

// Parse reads a mountinfo table. A line that is not a mount is an error
// that quotes it.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m, err := parseLine(sc.Text())
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// Read reads /proc/PID/mountinfo; pid is a number, "self" or "thread-self".
func Read(pid string) ([]Mount, error) {
	f, err := os.Open("/proc/" + pid + "/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

func parseLine(line string) (Mount, error) {
	before, after, ok := strings.Cut(line, " - ")
	fields, tail := strings.Fields(before), strings.Fields(after)
	if !ok || len(fields) < 6 || len(tail) < 1 {
		return Mount{}, fmt.Errorf("mountinfo line does not parse: %q", line)
	}
	id, err1 := strconv.Atoi(fields[0])
	parent, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return Mount{}, fmt.Errorf("mountinfo line does not parse: %q", line)
	}
	m := Mount{ID: id, Parent: parent, Dev: fields[2], Root: Unescape(fields[3]), Point: Unescape(fields[4]), Options: fields[5], FSType: tail[0]}
	if len(fields) > 6 {
		m.Optional = fields[6:]
	}
	if len(tail) > 1 {
		m.Source = Unescape(tail[1])
	}
	if len(tail) > 2 {
		m.SuperOptions = tail[2]
	}
	return m, nil
}

// Unescape undoes mountinfo's octal escapes (\040 for a space); a
// backslash not followed by three octal digits stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// HasOption reports whether a comma-separated option list holds name.
func HasOption(list, name string) bool {
	for _, o := range strings.Split(list, ",") {
		if o == name {
			return true
		}
	}
	return false
}
