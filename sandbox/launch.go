package sandbox

import (
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// Launch holds the facts of one launch. Paths are absolute with symlinks
// resolved.
type Launch struct {
	User  string        // from the passwd database, never the environment
	Home  string        // from the passwd database
	Homes []string      // every home the passwd database names, as it names them
	Shell string        // from the passwd database
	Cwd   string        // the kernel's idea of the working directory
	Env   launchenv.Env // the caller's environment as the door read it: each name once, never the list
	Args  []string      // arguments for Claude Code
	// RealBinary is layout.RealBinary in every launch; tests use a stand-in.
	RealBinary string
	Masks      []string // the MaskedDirs that exist here, hidden behind an empty tmpfs
	Keep       []string // files under Masks that the system needs, bound back read-only
	Launcher   string   // the launcher's own binary, bound inside to run init
	// OutsideSettings is the managed lock-down for Claude Code started
	// outside, covered inside by InsideSettings; "" when there is none.
	OutsideSettings string
	InsideSettings  string // layout.InsideSettings in every launch; tests use a stand-in
	// AuthToken is the session token Claude gets in place of its login when
	// the launcher proxies the credential; "" when it does not.
	AuthToken string
	AuthAddr  string // the credential proxy's address in open mode
	// ForgeCA is the certificate (PEM) of the launch's authority for the
	// forge hosts, when the conf names forges; its key stays in the
	// launcher (ADR 0042).
	ForgeCA []byte
	// Background is set in a launch that reaches Claude Code's background
	// service (ADR 0026); nil in every other launch.
	Background *Background
	// InSandbox says the plan is recomputed inside the sandbox it
	// describes (verify): there the git store's mounts show the store, not
	// what the launch saw, so the planning reads nothing through them.
	InSandbox bool
}

// Background is what a launch of Claude Code's background sessions shares
// with the other sandboxes of the same user and workspace.
type Background struct {
	// SocketDir is the host directory every such sandbox sees at
	// DaemonSocketDir: the service's sockets.
	SocketDir string
	UID       int
	// Service says this sandbox is the background service's own, where
	// `claude daemon run` runs and the sessions it starts; otherwise it is a
	// client's (`claude --bg`, `claude agents`, ...).
	Service bool
}

// DaemonSocketDir is where Claude Code puts its background service's
// sockets for the user uid.
func DaemonSocketDir(uid int) string { return fmt.Sprintf("/tmp/cc-daemon-%d", uid) }

// OOMScoreAdj is the oom_score_adj of every process in the sandbox, which
// the launcher sets on the first and every other inherits: the kernel's OOM
// killer takes a process of the sandbox before any other.
const OOMScoreAdj = 1000

// BackgroundRoleVar names, inside, which sandbox of the background service
// this is: "service" or "client". The inside wrapper reads it; the caller
// cannot pass it (CLAUDE_SANDBOX_ names never enter).
const BackgroundRoleVar = "CLAUDE_SANDBOX_BACKGROUND"

// The file descriptors bwrap inherits from the launcher, numbered from 3
// in this order (the launcher passes them as exec.Cmd's ExtraFiles).
const (
	ArgsFD    = 3 + iota // bwrap's --args: the plan's options, NUL-separated
	SeccompFD            // bwrap's --seccomp: the sandbox's syscall filter
	StatusFD             // bwrap's --json-status-fd: the sandbox's first process
	// ControlFD is init's line to the launcher: the listening sockets and
	// the warden's listener travel out on it, the launcher's answer in.
	ControlFD
	BlockFD // bwrap's --block-fd: the launcher's go-ahead, once it confined the sandbox
	// GitConfigFD is the content of the home's git configuration
	// (HomeGitConfig), when the plan makes it.
	GitConfigFD
	// ForgeCAFD is the content of the sandbox's certificate bundle
	// (ForgeCAFile), when the conf names forges.
	ForgeCAFD
	// InheritedFDs is how many descriptors bwrap inherits besides stdio.
	InheritedFDs = iota
)
