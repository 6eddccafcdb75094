package warden

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_AARCH64
	x32Bit     = 0 // no second ABI; arm32 fails the architecture check
)

// arm64 has only the *at calls.
var legacyCalls []call
