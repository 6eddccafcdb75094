// Package cli dispatches the claude-sandbox binary: run as `claude` it is the
// launcher, as `claude-sandbox-wrap` the launcher of the binary it is given;
// under any other name it is a command with subcommands.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/gate"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/installer"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/launcher"
	"github.com/claude-sandbox/claude-sandbox/promote"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/statusline"
	"github.com/claude-sandbox/claude-sandbox/verify"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "dev"

// Main runs the program named argv0 with args and returns the exit status.
// environ is the launching environment, read here once (launchenv.Receive):
// nothing below takes the raw list.
func Main(p host.Paths, argv0 string, args, environ []string, stdout, stderr io.Writer) int {
	launchEnv := launchenv.Receive(environ)
	name := filepath.Base(argv0)
	if exe, err := os.Executable(); err == nil && exe == layout.InsideWrapper {
		// Claude Code names the processes it starts through its wrapper
		// itself ("claude bg-spare"): inside, the path says what runs.
		name = layout.WrapperName
	}
	switch name {
	case "claude":
		return launcher.Run(p, args, launchEnv, stderr)
	case layout.WrapperName:
		return launcher.Wrap(p, args, launchEnv, stderr)
	}
	e := env{paths: p, launchEnv: launchEnv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		writeUsage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" {
		writeUsage(stdout)
		return 0
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "claude-sandbox: unknown command %q\n", args[0])
		writeUsage(stderr)
		return 2
	}
	return c.run(e, args[1:])
}

// registry is every command of claude-sandbox, in the order the usage
// lists them within their group.
func registry() []command {
	return []command{
		{name: "install", group: admin, summary: "make plain claude resolve to the sandbox: the real Claude Code off PATH, the launcher,\nthe conf, Claude Code's managed settings (docs/installer.md)", flags: installCmd},
		{name: "uninstall", group: admin, summary: "restore a plain Claude Code install", flags: uninstallCmd},
		{name: "promote", group: admin, operands: "TARGET", min: 1, max: 1, summary: "give the repository at TARGET sandboxed Claude: /verify-sandbox, the skill, the status\nline, the feature pinned to this version (docs/promote.md)", flags: promoteCmd},
		{name: "argv", group: diagnostics, operands: "-- CLAUDE-ARGS...", max: -1, dash: true, summary: "print the bwrap argv a launch from here would use, one element per line, or with\n--explain each mount and variable with its rule and why, and both seccomp filters", flags: argvCmd},
		{name: "doctor", group: diagnostics, summary: "check this host and the conf, with a fix for each failure", flags: doctorCmd},
		{name: "verify", group: diagnostics, summary: "inside the sandbox: probe it, one line per check; the exit status is the number of\nfailures (docs/verify.md)", flags: verifyCmd},
		{name: "denials", group: diagnostics, summary: "what the allowlist proxy, the warden and the forge gate refused lately", flags: denialsCmd},
		{name: "repos", group: work, summary: "list the repositories the sessions of the workspace here made, whose git directories\nonly the sandbox sees (ADR 0034), or with --prune remove those no .git leads to", flags: reposCmd},
		{name: "adopt", group: work, operands: "DIR...", min: 1, max: -1, summary: "give each DIR's repository made in a session a git directory of its own outside: its\ncommits, refs and index, nothing a session could have git run (ADR 0034)", flags: adoptCmd},
		{name: "version", group: diagnostics, summary: "print the version", flags: versionCmd},
		{name: "help", group: diagnostics, operands: "COMMAND", max: 1, summary: "list the commands, or print the help of one", flags: helpCmd},
		{name: "gate", group: hooks, summary: "Claude Code's prompt hook: blocks prompts outside the sandbox (reads the hook's\ninput on stdin; docs/gate.md)", usageStatus: gate.Block, flags: gateCmd},
		{name: "statusline", group: hooks, summary: "Claude Code's status line: sandboxed, workspace, network (reads Claude Code's status\ninput on stdin)", flags: statuslineCmd},
		{name: "container-start", group: hooks, summary: "the devcontainer feature's postStartCommand (as the user): link ~/.claude into\n/user-terminal-config, check that the sandbox starts", flags: containerStartCmd},
		{name: "background-service", group: hooks, usageStatus: host.ExitRefused, summary: "run by the launcher, detached: the sandbox of Claude Code's background service for the\nworkspace here (`claude --bg`, `claude agents`; ADR 0026)", flags: backgroundServiceCmd},
		{name: "init", group: hooks, operands: "-- COMMAND...", min: 0, max: -1, dash: true, summary: "run by the launcher first inside the sandbox: opens the proxies' listeners, installs\nthe warden, then runs COMMAND (Claude)", usageStatus: host.ExitRefused, flags: initCmd},
	}
}

func versionCmd(_ *flag.FlagSet, e env) func([]string) int {
	return func([]string) int {
		fmt.Fprintln(e.stdout, "claude-sandbox", Version)
		return 0
	}
}

func helpCmd(_ *flag.FlagSet, e env) func([]string) int {
	return func(operands []string) int {
		if len(operands) == 0 {
			writeUsage(e.stdout)
			return 0
		}
		c, ok := lookup(operands[0])
		if !ok {
			fmt.Fprintf(e.stderr, "claude-sandbox help: unknown command %q\n", operands[0])
			return 2
		}
		fs, _ := c.flagSet(e)
		c.writeHelp(e.stdout, fs)
		return 0
	}
}

// confFlag declares --conf, so an admin can check a conf before installing
// it. It only ever changes what is printed: conf gives the paths to use.
func confFlag(fs *flag.FlagSet, e env) (conf func() host.Paths) {
	file := fs.String("conf", "", "read the conf `FILE` instead of "+layout.Conf)
	return func() host.Paths {
		p := e.paths
		if *file != "" {
			p.Conf = *file
		}
		return p
	}
}

func argvCmd(fs *flag.FlagSet, e env) func([]string) int {
	paths := confFlag(fs, e)
	explain := fs.Bool("explain", false, "each namespace, mount and variable, with the rule that made it and why, and the rules of both seccomp filters (the sandbox's, the warden's), instead of the argv")
	return func(args []string) int {
		pr, err := launcher.Prepare(paths(), args, e.launchEnv)
		if err != nil {
			launcher.PrintRefusal(e.stderr, err)
			return host.ExitRefused
		}
		// The plan names paths in the workspace and what their git
		// configuration says, which a session chose: each line is escaped,
		// so an element or a rule stays one line.
		stdout, stderr := e.stdout, e.stderr
		for _, r := range pr.Plan.NameRules.Dirs {
			fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("claude-sandbox: in %s the sandbox may not create or write %s: %s", r.Dir, strings.Join(r.Names, ", "), r.Why)))
		}
		for _, r := range pr.Plan.NameRules.Paths {
			fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("claude-sandbox: %s is missing; should it appear, the sandbox may not write in it: %s", r.Path, r.Why)))
		}
		for _, f := range pr.Plan.CommandFiles {
			what := "which the user's Claude settings name as a command"
			if strings.HasSuffix(f, "/") {
				what = "where the user's Claude settings pick a command's program"
			}
			fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("claude-sandbox: %s, %s, is missing; a launch creates it empty and read-only", f, what)))
		}
		if *explain {
			// The warden's filter is no part of the plan: init installs it
			// inside, after bwrap's, for the launcher's warden to answer.
			for _, line := range append(pr.Plan.Explain(), warden.Filter().Explain()...) {
				fmt.Fprintln(stdout, termtext.Escape(line))
			}
			return 0
		}
		fmt.Fprintln(stdout, pr.Bwrap)
		for _, a := range append(append(pr.Plan.RedactedArgs(), "--"), pr.Plan.Command...) {
			fmt.Fprintln(stdout, termtext.Escape(a))
		}
		return 0
	}
}

func doctorCmd(fs *flag.FlagSet, e env) func([]string) int {
	paths := confFlag(fs, e)
	return func([]string) int {
		p := paths()
		var findings []doctor.Finding
		if host.Inside() {
			findings = append(findings, doctor.Finding{OK: true, Name: "context", Detail: "running inside a claude-sandbox: the checks describe the sandbox, not the host"})
		}
		bwrap, findErr := host.FindBwrap(p)
		findings = append(findings, doctor.Host(bwrap, findErr, p.RealBinary)...)
		findings = append(findings, doctor.Git(e.launchEnv)...)
		c, err := host.LoadConf(p.Conf)
		if err != nil {
			findings = append(findings, doctor.Finding{Name: "conf", Detail: err.Error(), Fix: "edit the line named above"})
		} else if _, err := os.Stat(p.Conf); err != nil {
			findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: p.Conf + " is absent: the defaults apply"})
		} else {
			findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: fmt.Sprintf("%s parses (%s)", p.Conf, c.Summary())})
		}
		if c != nil {
			findings = append(findings, doctor.Allowlist(c))
			if c.NetworkMode() == sandbox.NetworkAllowlist {
				for _, fc := range launcher.FindForgeCredentials(context.Background(), c, e.launchEnv.Env) {
					findings = append(findings, doctor.Forge(fc.Forge, fc.Credential, fc.Err))
				}
			}
		}
		findings = append(findings, doctor.UpstreamProxy(e.launchEnv.Env, c == nil || c.NetworkMode() == sandbox.NetworkAllowlist || c.CredentialMode() == sandbox.CredentialsProxy))
		if checked, err := launcher.Check(p, nil, e.launchEnv); err != nil {
			findings = append(findings, doctor.Finding{Name: "launch from here", Detail: err.Error()})
		} else {
			findings = append(findings, doctor.Finding{OK: true, Name: "launch from here", Detail: "the policy builds for this directory"},
				doctor.WorkspaceCase(checked.Resolved.Workspace()))
		}
		if doctor.Print(e.stdout, findings) > 0 {
			return 1
		}
		return 0
	}
}

func gateCmd(_ *flag.FlagSet, e env) func([]string) int {
	return func([]string) int {
		return gate.Check(host.Inside(), e.paths.AllowUnsandboxed, os.Stdin, e.stderr)
	}
}

func verifyCmd(fs *flag.FlagSet, e env) func([]string) int {
	asJSON := fs.Bool("json", false, "a JSON list of the checks instead of a table")
	return func([]string) int {
		return verify.Run(e.paths, *asJSON, e.launchEnv.List(), e.stdout, e.stderr)
	}
}

// listFlag is a repeatable flag: every value given, in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func backgroundServiceCmd(_ *flag.FlagSet, e env) func([]string) int {
	return func([]string) int { return launcher.Service(e.paths, e.launchEnv, e.stderr) }
}

func initCmd(fs *flag.FlagSet, e env) func([]string) int {
	var listen, private listFlag
	fs.Var(&listen, "listen", "open a listener on the loopback `ADDR` and hand it to the launcher (repeatable)")
	fs.Var(&private, "private", "the warden lets any name be made on the file system of `DIR` (repeatable)")
	helper := fs.Bool(strings.TrimPrefix(sandbox.SocketHelperArg, "--"), false, "serve as the warden's socket helper, which init starts itself (no COMMAND)")
	return func(command []string) int {
		switch {
		case *helper && len(command) == 0:
			return launcher.SocketHelper(e.stderr)
		case *helper || len(command) == 0:
			fmt.Fprintln(e.stderr, "claude-sandbox init: needs -- COMMAND, or --socket-helper alone; the launcher runs it inside the sandbox")
			return host.ExitRefused
		}
		return launcher.Init(listen, private, command, e.stderr)
	}
}

// confValue is the flag of one conf key: it records every value given, as
// the install takes them (installer.ConfOptions).
type confValue struct {
	key    sandbox.ConfKey
	values map[string][]string
}

func (v *confValue) String() string {
	if v.values == nil { // the zero value flag.PrintDefaults makes
		return ""
	}
	return strings.Join(v.values[v.key.Name], ",")
}

func (v *confValue) Set(s string) error {
	if v.key.Kind == sandbox.KeyFlag {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("parse error") // as the flag package's own boolean flags say
		}
		s = strconv.FormatBool(b)
	}
	v.values[v.key.Name] = append(v.values[v.key.Name], s)
	return nil
}

func (v *confValue) IsBoolFlag() bool { return v.key.Kind == sandbox.KeyFlag }

// confFlags declares on fs the flag --KEY of each conf key that help gives
// a text, and returns what the command line sets, by key.
func confFlags(fs *flag.FlagSet, help func(sandbox.ConfKey) string) map[string][]string {
	values := map[string][]string{}
	for _, k := range sandbox.ConfKeys() {
		if h := help(k); h != "" {
			fs.Var(&confValue{k, values}, k.Name, h)
		}
	}
	return values
}

// installHelp is the help of the install flag that sets a conf key.
func installHelp(k sandbox.ConfKey) string {
	if k.Kind == sandbox.KeyRetired {
		return ""
	}
	h := "conf " + k.Name
	if k.Arg != "" {
		h += " `" + k.Arg + "`"
	}
	if len(k.Values) > 0 {
		h += ": " + strings.Join(k.Values, " or ")
	}
	h += k.Help
	if k.Kind == sandbox.KeyRepeatable {
		h += " (repeatable)"
	}
	return h
}

func installCmd(fs *flag.FlagSet, e env) func([]string) int {
	var o installer.Options
	fs.StringVar(&o.Root, "root", "/", "install under `DIR` instead of / (for tests)")
	fs.StringVar(&o.ClaudeBinary, "claude-binary", "", "use the real Claude Code at `PATH`")
	fs.StringVar(&o.ClaudeVersion, "claude-version", "", "require Claude Code `VERSION` (and download it from npm if no copy here has it)")
	fs.StringVar(&o.ClaudeSHA256, "claude-sha256", "", "require the real binary's sha256 to be `HEX`")
	fs.StringVar(&o.NativeInstaller, "native-installer", "", "run Anthropic's installer script from `URL` when no copy is here (default "+installer.NativeInstallerURL+"; none: skip it)")
	fs.StringVar(&o.User, "user", "", "the remote `USER` (default $_REMOTE_USER, else the owner of /workspaces, else root)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan and the diffs, change nothing")
	fs.BoolVar(&o.SkipProbe, "skip-probe", false, "do not require that a sandbox starts here (image builds)")
	o.Conf = confFlags(fs, installHelp)
	return func([]string) int {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox install: %v\n", err)
			return 1
		}
		o.Self = self
		if err := installer.Install(o, e.launchEnv.List(), e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox install: %v\n", err)
			return 1
		}
		return 0
	}
}

// promoteHelp is the help of the promote flag that sets the feature option
// of a conf key, none for a key without one.
func promoteHelp(k sandbox.ConfKey) string {
	switch {
	case k.Feature == "":
		return ""
	case k.Kind == sandbox.KeyFlag:
		return "the feature's " + k.Feature + " (--" + k.Name + "=false removes it)"
	case len(k.Values) > 0: // the default first, as the feature lists them
		modes := append([]string{k.Default}, slices.DeleteFunc(slices.Clone(k.Values), func(v string) bool { return v == k.Default })...)
		return "the feature's " + k.Feature + " `" + k.Arg + "`: " + strings.Join(modes, " or ")
	}
	return "the feature's " + k.Feature + " `VALUE` (repeatable; empty: remove the option)"
}

// featureOptions are the feature's options that the promote flags given
// set, by the feature's option name: a list joined with commas (empty
// items dropped), a single value, or a bare flag's bool.
func featureOptions(given map[string][]string) map[string]any {
	options := map[string]any{}
	for key, values := range given {
		k, _ := sandbox.LookupConfKey(key)
		last := values[len(values)-1]
		switch k.Kind {
		case sandbox.KeyRepeatable:
			options[k.Feature] = strings.Join(slices.DeleteFunc(slices.Clone(values), func(v string) bool { return v == "" }), ",")
		case sandbox.KeyFlag:
			options[k.Feature] = last == "true"
		default:
			options[k.Feature] = last
		}
	}
	return options
}

// promoteCmd runs promote, or with --check reports drift: exit 0 when the
// target is current, 1 when it differs, 2 when it cannot be checked. The
// target is untrusted (a session may have written it): its errors, which
// name its entries and quote its files, are escaped.
func promoteCmd(fs *flag.FlagSet, e env) func([]string) int {
	var o promote.Options
	var check bool
	fs.BoolVar(&check, "check", false, "list how the target differs from this version, change nothing (exit 1 if it does)")
	fs.BoolVar(&o.PrintOnly, "print-only", false, "print the feature's entry and the diffs, change nothing")
	fs.BoolVar(&o.Force, "force", false, "overwrite curated files edited locally since the last promote")
	fs.BoolVar(&o.NoFeature, "no-feature", false, "install from .devcontainer/postCreate.sh instead of the feature, for dev containers that cannot use features")
	given := confFlags(fs, promoteHelp)
	return func(operands []string) int {
		target := operands[0]
		o.FeatureOptions = featureOptions(given)
		if err := promote.CheckOptions(o.FeatureOptions); err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox promote: %v\n", err)
			return 2
		}
		if check {
			return promoteCheck(target, o, e.stdout, e.stderr)
		}
		if err := promote.Promote(target, o, e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox promote: %s\n", termtext.Escape(err.Error()))
			return 1
		}
		return 0
	}
}

func promoteCheck(target string, o promote.Options, stdout, stderr io.Writer) int {
	if len(o.FeatureOptions) > 0 || o.Force || o.PrintOnly || o.NoFeature {
		fmt.Fprintln(stderr, "claude-sandbox promote: --check takes no other flag (it checks against a promote without flags)")
		return 2
	}
	current, err := promote.Check(target, stdout)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "claude-sandbox promote --check: %s\n", termtext.Escape(err.Error()))
		return 2
	case !current:
		return 1
	}
	return 0
}

func uninstallCmd(fs *flag.FlagSet, e env) func([]string) int {
	var o installer.Options
	fs.StringVar(&o.Root, "root", "/", "uninstall under `DIR` instead of / (for tests)")
	fs.StringVar(&o.User, "user", "", "the remote `USER` whose ~/.local/bin/claude link is removed")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan, change nothing")
	return func([]string) int {
		if err := installer.Uninstall(o, e.launchEnv.List(), e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox uninstall: %v\n", err)
			return 1
		}
		return 0
	}
}

func containerStartCmd(fs *flag.FlagSet, e env) func([]string) int {
	var o installer.Options
	fs.StringVar(&o.Root, "root", "/", "act under `DIR` instead of / (for tests)")
	fs.BoolVar(&o.SkipProbe, "skip-probe", false, "do not check that a sandbox starts here")
	return func([]string) int {
		if err := installer.ContainerStart(o, e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox container-start: %v\n", err)
			return 1
		}
		return 0
	}
}

// statuslineCmd prints the status line. A conf it cannot read only costs the
// network mode its name; the line must still render.
func statuslineCmd(_ *flag.FlagSet, e env) func([]string) int {
	return func([]string) int {
		network := "unknown (the conf does not parse)"
		if c, err := host.LoadConf(e.paths.Conf); err == nil {
			network = c.NetworkMode()
		}
		statusline.Render(host.Inside(), network, e.launchEnv.Get("HOME"), os.Stdin, e.stdout)
		return 0
	}
}

// denialsCmd prints the allowlist proxy's recent refusals for this user.
func denialsCmd(fs *flag.FlagSet, e env) func([]string) int {
	n := fs.Int("n", 20, "show the latest `N` refusals")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	return func([]string) int {
		if *n < 1 {
			fmt.Fprintln(e.stderr, "claude-sandbox denials: -n must be at least 1")
			return 2
		}
		home, err := host.UserHome(e.paths)
		if err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox denials: %v\n", err)
			return 1
		}
		ds, err := egress.Recent(filepath.Join(home, layout.DenialsLog), *n)
		if err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox denials: %v\n", err)
			return 1
		}
		if *asJSON {
			// JSON escapes the controls in what the sandbox chose, and
			// termtext.JSON the rest a terminal acts on; the values read
			// back the same.
			for _, d := range ds {
				line, _ := json.Marshal(d) // strings, an int and a time always marshal
				e.stdout.Write(termtext.JSON(append(line, '\n')))
			}
			return 0
		}
		if len(ds) == 0 {
			fmt.Fprintln(e.stdout, "no refusals recorded")
			return 0
		}
		egress.WriteDenials(e.stdout, ds)
		return 0
	}
}
