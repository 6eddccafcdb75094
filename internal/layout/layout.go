// Package layout is the installed layout of claude-sandbox: every path the
// product installs, reads or binds at a fixed place, and the hook commands
// that name them by absolute path. It is a leaf, so the probe that runs
// inside the sandbox (verify), promote and the installer share the facts
// without importing each other.
//
// The constants are where the files are on an installed system. Layout is
// the part a launch reads at run time, as one value: Installed for the
// product, another value for a test that points it at temporary files.
package layout

import "fmt"

// Where the product lives on an installed system.
const (
	// LibexecDir holds what no PATH should find: the real Claude Code and
	// the launcher's own binary.
	LibexecDir     = "/usr/libexec/claude-sandbox"
	RealBinary     = LibexecDir + "/claude" // the real Claude Code, off PATH
	LauncherBinary = LibexecDir + "/claude-sandbox"
	LauncherLink   = "/usr/local/bin/claude"         // plain `claude`, the launcher
	ToolLink       = "/usr/local/bin/claude-sandbox" // the admin tool, the launcher too
	// WrapperName is the name under which the launcher follows the process
	// wrapper convention of the VS Code extension and the Agent SDK
	// (`WRAPPER CLAUDE-BINARY ARGS...`, ADR 0023); Wrapper is the link the
	// installer makes to the launcher under that name.
	WrapperName = "claude-sandbox-wrap"
	Wrapper     = LibexecDir + "/" + WrapperName
	// VersionRecord is where the installer records the real binary's
	// version with the identity of the file it read it from, so `claude
	// --version` can answer without starting it.
	VersionRecord = LibexecDir + "/claude.version"

	// Conf is the only place the launcher reads its configuration from. It
	// is root-owned and outside every path the sandbox can write (ADR 0002).
	Conf = "/etc/claude-sandbox.conf"
	// AllowUnsandboxed is the root-owned file that lets the prompt gate
	// pass sessions outside the sandbox.
	AllowUnsandboxed = "/etc/claude-sandbox.allow-unsandboxed"
	// Passwd is read directly: os/user without cgo falls back to $HOME and
	// $USER, which the caller controls.
	Passwd = "/etc/passwd"

	// ManagedSettings are Claude Code's managed settings, which hold the
	// prompt gate where a session cannot edit it.
	ManagedSettings = "/etc/claude-code/managed-settings.json"
	// OutsideSettings is Claude Code's managed settings for a Claude Code
	// started outside the sandbox: no hooks, MCP servers or helper commands
	// but the managed ones (ADR 0017). A managed drop-in applies to every
	// Claude Code on the machine, so the sandbox covers it with
	// InsideSettings, which sets nothing: sessions inside keep the user's
	// hooks and MCP servers.
	OutsideSettings = "/etc/claude-code/managed-settings.d/claude-sandbox-outside.json"
	InsideSettings  = LibexecDir + "/inside-settings.json"
	// VerifySlashCommand is the /verify-sandbox slash command. Claude Code
	// reads commands from the managed settings directory for every user,
	// and a session cannot change them there (the sandbox binds /etc
	// read-only).
	VerifySlashCommand = "/etc/claude-code/.claude/commands/verify-sandbox.md"
	// SystemGitConfig is where git reads its system configuration when it
	// was built by a distribution (Debian, Ubuntu, Alpine, Fedora).
	SystemGitConfig = "/etc/gitconfig"
	// SharedConfig is the mount that dev containers share between
	// containers for the user's terminal configuration. When it exists, the
	// remote user's ~/.claude and ~/.claude.json live there, so a login
	// survives rebuilds.
	SharedConfig = "/user-terminal-config"

	// InstallLock is on tmpfs: gone at reboot, never left behind.
	InstallLock = "/run/lock/claude-sandbox-install.lock"
	// InsideMarker exists only inside a sandbox: it is created on the
	// sandbox's private /run, and outside only root could create it.
	InsideMarker = "/run/claude-sandbox/inside"
	// InitPath is where the launcher's own binary is bound inside, so its
	// init runs from a path every sandbox has (ADR 0011, 0012).
	InitPath = "/run/claude-sandbox/claude-sandbox"
	// InsideWrapper is the launcher bound inside a sandbox of background
	// sessions under the wrapper's name: Claude Code's
	// CLAUDE_CODE_PROCESS_WRAPPER there (ADR 0026).
	InsideWrapper = "/run/claude-sandbox/" + WrapperName
	// InsideGitStore is where the workspace's git store is bound inside:
	// the git directories of repositories made during a session live
	// there, and the ".git" the session made is a link to this path, which
	// exists only inside (ADR 0034).
	InsideGitStore = "/run/claude-sandbox/git"
	// InsideRepoConfig is the workspace repository's configuration as the
	// launch read it, read-only: inside, the repository's own config is
	// the sandbox's copy, and verify plans from this one (ADR 0034).
	InsideRepoConfig = "/run/claude-sandbox/repo-config"

	// NativeHomeCache and NPMCache are where the installer keeps what it
	// downloads: Anthropic's native installer's home, and npm packages by
	// version.
	NativeHomeCache = "/var/cache/claude-sandbox/native-home"
	NPMCache        = "/var/cache/claude-sandbox/npm"

	// UserCache is the product's directory in the user's home, relative to
	// it: the denial log, the sandbox caches' and each workspace's own
	// state of Claude Code (ADR 0027). No session sees it.
	UserCache = ".cache/claude-sandbox"
	// DenialsLog is where the egress proxy records what it refused,
	// relative to the user's home: outside every path the sandbox can see.
	DenialsLog = UserCache + "/denials.log"
	// CredentialsFile is Claude Code's login, relative to the home.
	CredentialsFile = ".claude/.credentials.json"
	// KeptLoginDir is where the launcher keeps the login it found at
	// CredentialsFile, relative to the home: every sandbox has an empty
	// tmpfs on it, so no session ever sees the file in it by any name, and
	// the launcher replaces that file by rename without uncovering it
	// (ADR 0039).
	KeptLoginDir = ".claude/claude-sandbox-login"
	// KeptLogin is the kept login's file, relative to the home.
	KeptLogin = KeptLoginDir + "/credentials.json"
)

// BackgroundDir is the directory of the user uid's background services
// (ADR 0026), one per workspace below it.
func BackgroundDir(uid int) string { return fmt.Sprintf("/tmp/claude-sandbox-%d", uid) }

// The commands the product wires into Claude Code's settings and the dev
// container, by absolute path so no PATH can put something else in their
// place.
const (
	GateCommand           = LauncherBinary + " gate"
	StatusLineCommand     = LauncherBinary + " statusline"
	VerifyCommand         = LauncherBinary + " verify"          // what /verify-sandbox runs
	ContainerStartCommand = LauncherBinary + " container-start" // the feature's postStartCommand
	// StatusLine is the statusLine setting, as JSON.
	StatusLine = `{"type": "command", "command": "` + StatusLineCommand + `", "padding": 0}`
)

// bwrapPaths are the only places bwrap is looked for: never the caller's PATH.
var bwrapPaths = []string{"/usr/bin/bwrap", "/bin/bwrap"}

// Layout is what a launch reads at run time. The product runs with
// Installed; tests point the fields at temporary files.
type Layout struct {
	Conf             string
	RealBinary       string
	Passwd           string
	Masks            []string // nil: every masked directory that exists here
	AllowUnsandboxed string   // the root-owned file that lets the prompt gate pass sessions outside the sandbox
	OutsideSettings  string   // the managed lock-down for Claude Code outside, covered inside when it exists
	InsideSettings   string   // the settings for sessions inside, which cover it
	VersionRecord    string   // the real binary's version, recorded by the installer
	Bwrap            []string // where bwrap is looked for, in order
}

// Installed is the layout of an installed system, a fresh value each call.
func Installed() Layout {
	return Layout{Conf: Conf, RealBinary: RealBinary, Passwd: Passwd, AllowUnsandboxed: AllowUnsandboxed,
		OutsideSettings: OutsideSettings, InsideSettings: InsideSettings, VersionRecord: VersionRecord, Bwrap: append([]string(nil), bwrapPaths...)}
}
