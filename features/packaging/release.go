package packaging

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/features"
)

// The GitHub Action installs the release of its version and checks the
// binary against the checksums its action.yml pins, not against the
// release's own SHA256SUMS, which whoever could replace the binary could
// replace too. PinAction writes the pins before the release is tagged,
// from the binaries the tree builds (the build is reproducible); the
// release checks the binaries it publishes against them with CheckPinned.

// ActionFile is the action's metadata, relative to the repository's root.
const ActionFile = "action.yml"

// SumsFile is the release's list of checksums, beside the binaries,
// relative to features.Dir.
const SumsFile = "bin/SHA256SUMS"

// pinKey starts the install step's SHA256SUMS value in action.yml: a
// literal block, one "HEX  NAME" line per released binary, each indented
// two spaces more than the key.
var pinKey = regexp.MustCompile(`(?m)^( +)SHA256SUMS: \|\n`)

// Sums is the SHA256SUMS text of the binaries built into the feature under
// root, as sha256sum writes it: "HEX  NAME", one line per arch, in order.
func Sums(root string) (string, error) {
	var b strings.Builder
	for _, arch := range arches {
		f, err := os.Open(filepath.Join(root, features.Dir, BinaryName(arch)))
		if err != nil {
			return "", fmt.Errorf("%w (mage build builds the binaries)", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), path.Base(BinaryName(arch)))
	}
	return b.String(), nil
}

// pin is action.yml's SHA256SUMS block.
type pin struct {
	text       string // all of action.yml
	start, end int    // the block's lines, in text
	indent     string // of the block's lines
	line       int    // the number of the block's first line
}

func readPin(root string) (pin, error) {
	data, err := os.ReadFile(filepath.Join(root, ActionFile))
	if err != nil {
		return pin{}, err
	}
	text := string(data)
	m := pinKey.FindStringSubmatchIndex(text)
	if m == nil {
		return pin{}, fmt.Errorf("%s: the install step has no SHA256SUMS: | block for the release's checksums", ActionFile)
	}
	p := pin{text: text, start: m[1], end: m[1], indent: text[m[2]:m[3]] + "  ", line: strings.Count(text[:m[1]], "\n") + 1}
	for p.end < len(text) && strings.HasPrefix(text[p.end:], p.indent) {
		next := strings.IndexByte(text[p.end:], '\n')
		if next < 0 {
			break
		}
		p.end += next + 1
	}
	if p.end == p.start {
		return pin{}, fmt.Errorf("%s:%d: the SHA256SUMS: | block is empty", ActionFile, p.line)
	}
	return p, nil
}

// sums is the block's text without its indentation.
func (p pin) sums() string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(p.text[p.start:p.end], "\n") {
		if l != "" {
			b.WriteString(strings.TrimPrefix(l, p.indent))
		}
	}
	return b.String()
}

// PinnedSums is the SHA256SUMS that action.yml under root pins.
func PinnedSums(root string) (string, error) {
	p, err := readPin(root)
	if err != nil {
		return "", err
	}
	return p.sums(), nil
}

// PinAction writes sums into action.yml's SHA256SUMS block, in place of
// what it held.
func PinAction(root, sums string) error {
	p, err := readPin(root)
	if err != nil {
		return err
	}
	var block strings.Builder
	for _, l := range strings.SplitAfter(sums, "\n") {
		if l != "" {
			block.WriteString(p.indent + l)
		}
	}
	return os.WriteFile(filepath.Join(root, ActionFile), []byte(p.text[:p.start]+block.String()+p.text[p.end:]), 0o644)
}

// CheckPinned fails unless the binaries built into the feature under root
// are those action.yml pins, and then writes their SHA256SUMS beside them
// for the release to publish.
func CheckPinned(root string) error {
	sums, err := Sums(root)
	if err != nil {
		return err
	}
	p, err := readPin(root)
	if err != nil {
		return err
	}
	if sums != p.sums() {
		return fmt.Errorf("%s:%d: the checksums pinned there are not those of the binaries built here (%s); run mage release:pin, commit, and tag that commit",
			ActionFile, p.line, strings.Join(strings.Fields(sums), " "))
	}
	return os.WriteFile(filepath.Join(root, features.Dir, SumsFile), []byte(sums), 0o644)
}
