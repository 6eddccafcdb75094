package installer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
)

// Every file the installer writes is replaced atomically (package
// atomicfile), so a run killed at any point leaves the old file or the new
// one, never half of one. The directory is made first where missing.

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode)
}

func copyAtomic(dst, src string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Copy(dst, in, mode); err != nil {
		return err
	}
	// The copy keeps the source's time, so a later run can tell it is
	// unchanged without reading hundreds of megabytes.
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// symlinkAtomic points path at target, replacing whatever was there.
func symlinkAtomic(target, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-link")
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// sameFile reports whether dst already has src's size and time (how
// copyAtomic leaves it), or is src itself.
func sameFile(dst, src string) bool {
	a, err1 := os.Stat(dst)
	b, err2 := os.Stat(src)
	if err1 != nil || err2 != nil {
		return false
	}
	return os.SameFile(a, b) || (a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode().Perm() == 0o755)
}

// sameContent reports whether dst holds exactly src's bytes.
func sameContent(dst, src string) bool {
	a, err1 := os.ReadFile(dst)
	b, err2 := os.ReadFile(src)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// lineDiff is a small unified-style diff for the text files the installer
// edits (a conf, a settings file): a few dozen lines at most.
func lineDiff(name string, old, new []byte) string {
	a := splitLines(string(old))
	b := splitLines(string(new))
	// Longest common subsequence, classic table.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s (new)\n", name, name)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
