package installer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// An ELF for another machine is refused with the reason.
func TestAcceptableRefusesOtherArchitectures(t *testing.T) {
	other := map[string]uint16{"amd64": 183 /* EM_AARCH64 */, "arm64": 62 /* EM_X86_64 */}[runtime.GOARCH]
	hdr := make([]byte, 64)
	copy(hdr, "\x7fELF")
	hdr[4], hdr[5], hdr[6] = 2, 1, 1               // 64-bit, little-endian, version 1
	binary.LittleEndian.PutUint16(hdr[16:], 2)     // ET_EXEC
	binary.LittleEndian.PutUint16(hdr[18:], other) // e_machine
	binary.LittleEndian.PutUint32(hdr[20:], 1)     // e_version
	binary.LittleEndian.PutUint16(hdr[52:], 64)    // e_ehsize
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, hdr, 0o755); err != nil {
		t.Fatal(err)
	}
	in := &run{opts: Options{Root: t.TempDir(), Self: "/nonexistent"}}
	err := in.acceptable(&source{path: p})
	if err == nil || !strings.Contains(err.Error(), "built for") {
		t.Fatalf("acceptable(other-arch ELF) = %v, want a refusal naming the architecture", err)
	}
}
