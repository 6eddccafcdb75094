package sandbox

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_AARCH64
	x32Bit     = 0 // arm64 has no x32-style second ABI; arm32 is refused by the arch check
)
