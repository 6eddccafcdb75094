// Package procstatus reads /proc/PID/status (proc(5)): one "Name:\tvalue"
// line per field.
package procstatus

import (
	"os"
	"strings"
)

// Status is a status file's fields by name, their values trimmed.
type Status map[string]string

// Parse reads the contents of a status file. A line without a colon is
// not a field and is skipped.
func Parse(data []byte) Status {
	st := Status{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			st[name] = strings.TrimSpace(value)
		}
	}
	return st
}

// Read reads /proc/PID/status; pid is a number, "self" or "thread-self".
func Read(pid string) (Status, error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}
