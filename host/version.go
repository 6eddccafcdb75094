package host

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
)

var recordedVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+\S* \(Claude Code\)$`)

// VersionKey is the identity of the file at path as the record holds it:
// its size, modification time, inode and device. Replacing or changing
// the binary changes it, and the record no longer answers.
func VersionKey(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d %d %d %d", fi.Size(), fi.ModTime().UnixNano(), st.Ino, st.Dev), nil
}

// VersionRecordFor is the record of binary, which says version.
func VersionRecordFor(version, binary string) ([]byte, error) {
	key, err := VersionKey(binary)
	if err != nil {
		return nil, err
	}
	return []byte(version + " (Claude Code)\n" + key + "\n"), nil
}

// RecordedVersion returns what `binary --version` prints, from the record,
// when the record is one only the binary's owner could have written
// (a regular file of that owner, writable by no one else) and describes the
// binary as it is now; false otherwise, and the launch goes on as any other.
func RecordedVersion(record, binary string) (string, bool) {
	rfi, err := os.Lstat(record)
	if err != nil || !rfi.Mode().IsRegular() || rfi.Mode().Perm()&0o022 != 0 {
		return "", false
	}
	bfi, err := os.Stat(binary)
	if err != nil || rfi.Sys().(*syscall.Stat_t).Uid != bfi.Sys().(*syscall.Stat_t).Uid {
		return "", false
	}
	data, err := os.ReadFile(record)
	if err != nil {
		return "", false
	}
	version, key, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n")
	now, err := VersionKey(binary)
	if !ok || err != nil || key != now || !recordedVersionRE.MatchString(version) {
		return "", false
	}
	return version, true
}
