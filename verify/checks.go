package verify

// check is one property of the live sandbox. run returns a detail when the
// property holds and an error saying what is wrong when it does not.
type check struct {
	id  string
	run func(*facts) (string, error)
}

// checks run in this order. The ids are stable: scripts and the
// /verify-sandbox command read them, and docs/verify.md explains each.
var checks = []check{
	// The process: privileges, namespaces, environment, descriptors.
	{"capabilities", capabilities},
	{"capability-bounding-set", capabilityBoundingSet},
	{"no-new-privileges", noNewPrivileges},
	{"seccomp-filter", seccompFilter},
	{"user-namespace", userNamespace},
	{"pid-namespace", pidNamespace},
	{"pid1-environment", pid1Environment},
	{"launch-environment", launchEnvironment},
	{"secret-variables", secretVariables},
	{"inherited-descriptors", inheritedDescriptors},
	{"resource-limits", resourceLimits},
	{"terminal-private", terminalPrivate},

	// The syscall filter and the missing capabilities, probed.
	{"unix-sockets-own", unixSocketsOwn},
	{"unix-socket-foreign-refused", unixSocketForeignRefused},
	{"host-sockets-unreachable", hostSocketsUnreachable},
	{"socket-families-refused", socketFamiliesRefused},
	{"netlink-protocols-refused", netlinkProtocolsRefused},
	{"socket-families-allowed", socketFamiliesAllowed},
	{"unshare-user-refused", unshareUserRefused},
	{"clone-user-refused", cloneUserRefused},
	{"clone3-refused", clone3Refused},
	{"keyring-refused", keyringRefused},
	{"io-uring-refused", ioUringRefused},
	{"terminal-injection-refused", terminalInjectionRefused},
	{"mount-refused", mountRefused},
	{"hostname-unchangeable", hostnameUnchangeable},

	// The file system outside the home and the workspace.
	{"inside-marker", insideMarker},
	{"system-read-only", systemReadOnly},
	{"kernel-settings-read-only", kernelSettingsReadOnly},
	{"dev-minimal", devMinimal},
	{"run-private", runPrivate},
	{"secrets-absent", secretsAbsent},
	{"tmp-private", tmpPrivate},
	{"other-homes-hidden", otherHomesHidden},
	{"other-projects-hidden", otherProjectsHidden},

	// The home.
	{"home-tmpfs", homeTmpfs},
	{"home-mounts", homeMounts},
	{"claude-settings-read-only", claudeSettingsReadOnly},
	{"claude-state-own", claudeStateOwn},
	{"ide-locks-hidden", ideLocksHidden},
	{"git-config-allowed", gitConfigAllowed},
	{"local-bin-claude", localBinClaude},
	{"claude-on-path", claudeOnPath},

	// The workspace and the mount table as a whole.
	{"workspace-writable", workspaceWritable},
	{"protected-paths-read-only", protectedPathsReadOnly},
	{"held-files-one-name", heldFilesOneName},
	{"git-dir-refused", gitDirRefused},
	{"git-dir-private", gitDirPrivate},
	{"kernel-lock", kernelLock},
	{"git-store", gitStore},
	{"workspace-case", workspaceCase},
	{"planned-mounts", plannedMounts},
	{"writable-mounts", writableMounts},
	{"mounts-private", mountsPrivate},

	// The product's own files.
	{"conf-read-only", confReadOnly},
	{"launcher-read-only", launcherReadOnly},
	{"real-binary-read-only", realBinaryReadOnly},
	{"managed-settings-read-only", managedSettingsReadOnly},
	{"outside-settings-covered", outsideSettingsCovered},

	// The network and Claude's login.
	{"network", network},
	{"network-namespace", networkNamespace},
	{"direct-egress-refused", directEgressRefused},
	{"dns-refused", dnsRefused},
	{"proxy-environment", proxyEnvironment},
	{"proxy-refuses-metadata", proxyRefusesMetadata},
	{"credential-placeholder", credentialPlaceholder},
	{"credential-file-hidden", credentialFileHidden},
	{"kept-login-hidden", keptLoginHidden},
}

// firstError returns the first error that is not nil: the fact a check
// needed and could not have.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
