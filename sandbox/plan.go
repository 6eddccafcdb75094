package sandbox

import (
	"fmt"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
)

// Plan is the sandbox of one launch as data: what bwrap makes (the
// namespaces, the mounts in order, the environment, the working directory
// and the descriptors it reads), each with the rule that made it and why,
// and what the launcher and the warden need besides. BwrapArgs renders the
// bwrap options from it; verify and `claude-sandbox argv --explain` read it
// as it is (ADR 0020).
type Plan struct {
	Workspace  string
	Namespaces []Namespace // in the order bwrap is given them
	Mounts     []Mount     // in order: later mounts land on top
	Env        []EnvVar    // the whole environment, in the order it is set
	Chdir      string      // the working directory inside
	SeccompFD  int         // where bwrap reads the seccomp filter
	StatusFD   int         // where bwrap writes its JSON status
	// Seccomp is the syscall filter bwrap reads on SeccompFD.
	Seccomp SeccompFilter
	// GitConfig is the home's git configuration, made from the user's;
	// nil when share-home shares the user's own. bwrap reads its Data on
	// GitConfigFD when it has any (a mount of RuleGitConfig).
	GitConfig *HomeGitConfig
	// ForgeBundle is the certificate bundle bwrap writes at ForgeCAFile
	// from ForgeCAFD (a mount of RuleForgeCA); nil without forge lines.
	ForgeBundle []byte

	Command []string // what bwrap runs, after "--" on its command line: init, then Claude
	Claude  []string // the command init execs
	// Made is what the launcher makes outside before bwrap starts.
	Made
	// Listen are the sockets init opens inside the sandbox's network
	// namespace for the launcher's proxies: the egress proxy, then the
	// credential proxy. Empty in open mode.
	Listen []Listener
	Egress *hostaddr.Allowlist // what the egress proxy lets through; nil in open mode
	// NameRules are every rule on names the warden enforces for this
	// sandbox: names a program outside would obey where it sees them (ADR
	// 0014), the protected paths missing at launch, the git store's part
	// (ADR 0034). The launcher hands them to the warden as this one value.
	NameRules namerule.Rules
	// Private are the sandbox's own file systems, where the outside names
	// may be made: init reports them to the warden by device number.
	Private []string
}

// Made is what a launch makes outside before bwrap starts, for the mounts
// to find it: Resolve settles it, so that the launch checks it can be
// made before anything changes, and the plan carries it as it is.
type Made struct {
	// OwnDirs are the directories outside that only sandboxes see (Claude
	// Code's own state, the sandbox caches, the git store), made if
	// missing.
	OwnDirs []string
	// MountPoints are the directories in the workspace the store is bound
	// on (a repository's worktrees/ and modules/, .claude/worktrees/),
	// made when missing.
	MountPoints []string
	// StorePoints are the mount points, in the git store's directories,
	// of what is bound back on the store: each is made a plain directory,
	// whatever a session left there removed, so that no bind follows a
	// link.
	StorePoints []string
	// Copies are files copied into the git store (the repository's
	// configuration) at each launch.
	Copies []FileCopy
	// CommandFiles are the files under ~/.claude that the user's settings
	// name as commands and that are missing: made empty so they can be
	// bound read-only; one with a trailing "/" is a directory a command's
	// program is picked in, made empty.
	CommandFiles []string
}

// A FileCopy is a file the launcher copies before a launch.
type FileCopy struct{ From, To string }

// launchCopy names, beside a copy the sandbox writes, the copy as the
// launch read it.
const launchCopy = ".launch"

// A Namespace is one the sandbox gets of its own.
type Namespace struct {
	Unshare Unshare
	Why     string
}

// Unshare is the bwrap option that makes a namespace.
type Unshare string

// A Mount is one file-system operation of bwrap, in the order given.
type Mount struct {
	Op     Op
	Source string // what is bound; "" for the operations that make something new
	FD     int    // where bwrap reads the content of a file it makes (OpFile)
	Dest   string // where, inside
	Rule   Rule
	Why    string
}

// Op is a bwrap file-system operation.
type Op string

// HoldsByPath reports whether the rule's read-only binds hold what the
// policy names by path (Claude Code's user settings and the programs they
// run, the workspace's protected paths, the shared home files): each
// regular file there, or below a directory there, must have one name, or a
// session writes it by another (ADR 0039).
func (r Rule) HoldsByPath() bool {
	return r == RuleClaudeReadOnly || r == RuleProtected || r == RuleShareHome
}

// ReadOnly reports whether the operation makes a read-only mount.
func (o Op) ReadOnly() bool { return o == OpRoBind || o == OpRoBindTry }

// Rule names the rule of the policy that made a mount: a short id that
// stays the same from release to release, for `argv --explain`, verify's
// messages and the docs.
type Rule string

// The policy's rules, in the order their mounts come.
const (
	RuleRoot            Rule = "root"             // the host's file system, read-only
	RuleDev             Rule = "dev"              // a new /dev
	RuleProc            Rule = "proc"             // a new /proc
	RuleProcSys         Rule = "proc-sys"         // /proc/sys read-only
	RuleMask            Rule = "mask"             // an empty tmpfs over a directory of the host
	RuleKeep            Rule = "keep"             // a file under a mask the system needs, bound back
	RuleInsideMarker    Rule = "inside-marker"    // the marker only a sandbox has
	RuleInit            Rule = "init"             // the launcher's binary, which runs first
	RuleHome            Rule = "home"             // the empty home
	RuleRealBinary      Rule = "real-binary"      // the real Claude Code at ~/.local/bin/claude
	RuleClaudeState     Rule = "claude-state"     // ~/.claude and ~/.claude.json, writable
	RuleClaudeReadOnly  Rule = "claude-read-only" // what in ~/.claude runs later or outside
	RuleClaudeOwnState  Rule = "claude-own-state" // what in ~/.claude Claude Code acts on, the workspace's own
	RuleIDELocks        Rule = "ide-locks"        // the IDE extension's lock files, hidden
	RuleKeptLogin       Rule = "kept-login"       // the login the launcher keeps, hidden (ADR 0039)
	RuleShareHome       Rule = "share-home"       // a share-home line
	RuleSandboxCache    Rule = "sandbox-cache"    // a sandbox-cache line
	RuleAllowWrite      Rule = "allow-write"      // an allow-write or allow-write-executable line
	RuleWorkspace       Rule = "workspace"        // the workspace, writable
	RulePin             Rule = "pin"              // a directory bound onto itself so it cannot be renamed
	RuleProtected       Rule = "protected"        // a protected path, read-only
	RuleInsideSettings  Rule = "inside-settings"  // the outside's managed settings, covered
	RuleCredentialsFile Rule = "credentials-file" // Claude Code's login, covered
	RuleBackground      Rule = "background"       // the background service's shared sockets and the wrapper inside (ADR 0026)
	RuleGitStore        Rule = "git-store"        // the git directories of repositories made inside, seen only inside (ADR 0034)
	RuleGitConfig       Rule = "git-config"       // the home's git configuration, the allow-listed part of the user's
	RuleForgeCA         Rule = "forge-ca"         // the certificate authorities the sandbox trusts with forge lines (ADR 0042)
)

// An EnvVar is one variable of the sandbox's environment.
type EnvVar struct {
	Name  string
	Value string
	// Shown is how the redacted argv shows the value: the value itself,
	// "<passed>" for one copied from the caller, "<session-token>".
	Shown  string
	Source EnvSource
	Why    string
}

// EnvSource is where a variable's value comes from.
type EnvSource string

const (
	FromCaller   EnvSource = "caller"   // the launching environment, by the allow list
	FromPassEnv  EnvSource = "pass-env" // the launching environment, by a pass-env line
	FromLauncher EnvSource = "launcher" // the launcher sets it
)

// Shown values of variables whose value the redacted argv hides.
const (
	ShownPassed       = "<passed>"
	ShownSessionToken = "<session-token>"
)

// Explain is the plan as `claude-sandbox argv --explain` shows it, one line
// each: the namespaces, the mounts with their rule, the variables of the
// home's git configuration (names, not values), the working directory,
// the variables with their source, and the seccomp filter's rules, each
// with why. Values from the caller and the session token are hidden as in
// RedactedArgs.
func (p *Plan) Explain() []string {
	var out []string
	for _, ns := range p.Namespaces {
		out = append(out, fmt.Sprintf("namespace %s: %s", ns.Unshare, ns.Why))
	}
	for _, m := range p.Mounts {
		what := strings.Join(m.append(nil), " ")
		out = append(out, fmt.Sprintf("mount %s %s: %s", m.Rule, what, m.Why))
	}
	out = append(out, p.GitConfig.explain()...)
	out = append(out, fmt.Sprintf("chdir %s: the working directory of the launch", p.Chdir))
	for _, v := range p.Env {
		out = append(out, fmt.Sprintf("env %s %s=%s: %s", v.Source, v.Name, v.Shown, v.Why))
	}
	return append(out, p.Seccomp.Explain()...)
}
