// Package cli dispatches the claude-sandbox binary: run as `claude` it is the
// launcher; under any other name it is a command with subcommands.
package cli

import (
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
	"github.com/claude-sandbox/claude-sandbox/installer"
	"github.com/claude-sandbox/claude-sandbox/launcher"
	"github.com/claude-sandbox/claude-sandbox/promote"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/statusline"
	"github.com/claude-sandbox/claude-sandbox/verify"
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "dev"

const usage = `usage:
  claude [CLAUDE-ARGS...]                    run Claude Code inside the sandbox
  claude-sandbox argv [--conf FILE] [--explain] [-- CLAUDE-ARGS...]
                                             print the bwrap argv a launch from here would use
                                             (--explain: each mount and variable, its rule and why)
  claude-sandbox doctor [--conf FILE]        check this host and the conf, with fixes
  claude-sandbox install [FLAGS]             make plain claude resolve to the sandbox (as root;
                                             --help lists the flags)
  claude-sandbox uninstall [--dry-run] [--user NAME] [--root DIR]
                                             restore a plain Claude Code install (as root)
  claude-sandbox container-start [--skip-probe] [--root DIR]
                                             the devcontainer feature's postStartCommand (as the user):
                                             link ~/.claude into /user-terminal-config, check the sandbox starts
  claude-sandbox promote [FLAGS] TARGET      give the repository at TARGET sandboxed Claude: /verify-sandbox,
                                             the skill, the status line, the feature pinned to this version
                                             (--check: list what has fallen behind; --help lists the flags)
  claude-sandbox gate                        Claude Code's prompt hook: blocks prompts outside the sandbox
  claude-sandbox statusline                  Claude Code's status line: sandboxed, workspace, network
  claude-sandbox verify [--json]             inside the sandbox: probe it, one line per check
  claude-sandbox denials [-n N] [--json]     what the allowlist proxy and the warden refused lately
                                             (the last N, default 20)
  claude-sandbox init [FLAGS] -- CMD...      run by the launcher first inside the sandbox: hands the
                                             proxy sockets and the warden out, then runs Claude
  claude-sandbox version                     print the version
`

// Main runs the program named argv0 with args and returns the exit status.
func Main(p launcher.Paths, argv0 string, args, environ []string, stdout, stderr io.Writer) int {
	if filepath.Base(argv0) == "claude" {
		return launcher.Run(p, args, environ, stderr)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "argv":
		return argv(p, args[1:], environ, stdout, stderr)
	case "doctor":
		return doctorCmd(p, args[1:], environ, stdout, stderr)
	case "install":
		return installCmd(args[1:], environ, stdout, stderr)
	case "uninstall":
		return uninstallCmd(args[1:], environ, stdout, stderr)
	case "container-start":
		return containerStartCmd(args[1:], stdout, stderr)
	case "promote":
		return promoteCmd(args[1:], stdout, stderr)
	case "gate":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "claude-sandbox gate: unexpected argument %q (it reads the hook's input on stdin)\n", args[1])
			return gate.Block
		}
		return gate.Check(launcher.Inside(), p.AllowUnsandboxed, os.Stdin, stderr)
	case "statusline":
		return statuslineCmd(p, args[1:], environ, stdout, stderr)
	case "verify":
		return verify.Run(p, args[1:], environ, stdout, stderr)
	case "denials":
		return denialsCmd(p, args[1:], stdout, stderr)
	case "init":
		return launcher.Init(args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, "claude-sandbox", Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "claude-sandbox: unknown command %q\n%s", args[0], usage)
	return 2
}

// confFlag takes an optional leading --conf FILE, so an admin can check a
// conf before installing it. It only ever changes what is printed.
func confFlag(p launcher.Paths, args []string) (launcher.Paths, []string, error) {
	if len(args) > 0 && (args[0] == "--conf" || strings.HasPrefix(args[0], "--conf=")) {
		file, ok := strings.CutPrefix(args[0], "--conf=")
		if !ok {
			if len(args) < 2 {
				return p, nil, fmt.Errorf("--conf needs a file")
			}
			file, args = args[1], args[1:]
		}
		p.Conf = file
		args = args[1:]
	}
	return p, args, nil
}

func argv(p launcher.Paths, args, environ []string, stdout, stderr io.Writer) int {
	p, args, err := confFlag(p, args)
	explain := err == nil && len(args) > 0 && args[0] == "--explain"
	if explain {
		args = args[1:]
	}
	if err == nil && len(args) > 0 && args[0] != "--" {
		err = fmt.Errorf("unexpected argument %q (Claude's arguments go after --)", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox argv: %v\n", err)
		return 2
	}
	if len(args) > 0 {
		args = args[1:]
	}
	pr, err := launcher.Prepare(p, args, environ)
	if err != nil {
		launcher.PrintRefusal(stderr, err)
		return launcher.ExitRefused
	}
	for _, r := range pr.Plan.NameRules {
		fmt.Fprintf(stderr, "claude-sandbox: in %s the sandbox may not create or write %s: %s\n", r.Dir, strings.Join(r.Names, ", "), r.Why)
	}
	for _, r := range pr.Plan.PathRules {
		fmt.Fprintf(stderr, "claude-sandbox: %s is missing; should it appear, the sandbox may not write in it: %s\n", r.Path, r.Why)
	}
	for _, f := range pr.Plan.CommandFiles {
		fmt.Fprintf(stderr, "claude-sandbox: %s, which ~/.claude/settings.json names as a command, is missing; a launch creates it empty and read-only\n", f)
	}
	if explain {
		for _, line := range pr.Plan.Explain() {
			fmt.Fprintln(stdout, line)
		}
		return 0
	}
	fmt.Fprintln(stdout, pr.Bwrap)
	for _, a := range append(append(pr.Plan.RedactedArgs(), "--"), pr.Plan.Command...) {
		fmt.Fprintln(stdout, a)
	}
	return 0
}

func doctorCmd(p launcher.Paths, args, environ []string, stdout, stderr io.Writer) int {
	p, args, err := confFlag(p, args)
	if err == nil && len(args) > 0 {
		err = fmt.Errorf("unexpected argument %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox doctor: %v\n", err)
		return 2
	}
	var findings []doctor.Finding
	if launcher.Inside() {
		findings = append(findings, doctor.Finding{OK: true, Name: "context", Detail: "running inside a claude-sandbox: the checks describe the sandbox, not the host"})
	}
	bwrap, findErr := launcher.FindBwrap()
	findings = append(findings, doctor.Host(bwrap, findErr, p.RealBinary)...)
	findings = append(findings, doctor.Git(environ)...)
	if c, err := launcher.LoadConf(p.Conf); err != nil {
		findings = append(findings, doctor.Finding{Name: "conf", Detail: err.Error(), Fix: "edit the line named above"})
	} else if _, err := os.Stat(p.Conf); err != nil {
		findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: p.Conf + " is absent: the defaults apply"})
	} else {
		findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: fmt.Sprintf("%s parses (%d allow-write, %d allow-write-executable, %d sandbox-cache, %d pass-env, %d protect, %d share-home, %d append-path, no-forge=%v)",
			p.Conf, len(c.AllowWrite), len(c.AllowWriteExecutable), len(c.SandboxCache), len(c.PassEnv), len(c.Protect), len(c.ShareHome), len(c.AppendPath), c.NoForge)})
	}
	if _, err := launcher.Check(p, nil, environ); err != nil {
		findings = append(findings, doctor.Finding{Name: "launch from here", Detail: err.Error()})
	} else {
		findings = append(findings, doctor.Finding{OK: true, Name: "launch from here", Detail: "the policy builds for this directory"})
	}
	if doctor.Print(stdout, findings) > 0 {
		return 1
	}
	return 0
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

func installCmd(args, environ []string, stdout, stderr io.Writer) int {
	var o installer.Options
	fs := flag.NewFlagSet("claude-sandbox install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Root, "root", "/", "install under `DIR` instead of / (for tests)")
	fs.StringVar(&o.ClaudeBinary, "claude-binary", "", "use the real Claude Code at `PATH`")
	fs.StringVar(&o.ClaudeVersion, "claude-version", "", "require Claude Code `VERSION` (and download it from npm if no copy here has it)")
	fs.StringVar(&o.ClaudeSHA256, "claude-sha256", "", "require the real binary's sha256 to be `HEX`")
	fs.StringVar(&o.NativeInstaller, "native-installer", "", "run Anthropic's installer script from `URL` when no copy is here (default "+installer.NativeInstallerURL+"; none: skip it)")
	fs.StringVar(&o.User, "user", "", "the remote `USER` (default $_REMOTE_USER, else the owner of /workspaces, else root)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan and the diffs, change nothing")
	fs.BoolVar(&o.SkipProbe, "skip-probe", false, "do not require that a sandbox starts here (image builds)")
	o.Conf = confFlags(fs, installHelp)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox install: %v\n", err)
		return 1
	}
	o.Self = self
	if err := installer.Install(o, environ, stdout); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox install: %v\n", err)
		return 1
	}
	return 0
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
// target is current, 1 when it differs, 2 when it cannot be checked.
func promoteCmd(args []string, stdout, stderr io.Writer) int {
	var o promote.Options
	var check bool
	fs := flag.NewFlagSet("claude-sandbox promote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&check, "check", false, "list how the target differs from this version, change nothing (exit 1 if it does)")
	fs.BoolVar(&o.PrintOnly, "print-only", false, "print the feature's entry and the diffs, change nothing")
	fs.BoolVar(&o.Force, "force", false, "overwrite curated files edited locally since the last promote")
	fs.BoolVar(&o.NoFeature, "no-feature", false, "install from .devcontainer/postCreate.sh instead of the feature, for dev containers that cannot use features")
	given := confFlags(fs, promoteHelp)
	target, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox promote: %v\n", err)
		return 2
	}
	o.FeatureOptions = featureOptions(given)
	if err := promote.CheckOptions(o.FeatureOptions); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox promote: %v\n", err)
		return 2
	}
	if check {
		return promoteCheck(target, o, stdout, stderr)
	}
	if err := promote.Promote(target, o, stdout); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox promote: %v\n", err)
		return 1
	}
	return 0
}

func promoteCheck(target string, o promote.Options, stdout, stderr io.Writer) int {
	if len(o.FeatureOptions) > 0 || o.Force || o.PrintOnly || o.NoFeature {
		fmt.Fprintln(stderr, "claude-sandbox promote: --check takes no other flag (it checks against a promote without flags)")
		return 2
	}
	current, err := promote.Check(target, stdout)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "claude-sandbox promote --check: %v\n", err)
		return 2
	case !current:
		return 1
	}
	return 0
}

// parseInterspersed parses flags before and after the one positional
// argument, so `promote TARGET --check` works as `promote --check TARGET`.
func parseInterspersed(fs *flag.FlagSet, args []string) (string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return "", fmt.Errorf("want one TARGET directory, got %d arguments", len(positional))
	}
	return positional[0], nil
}

func uninstallCmd(args, environ []string, stdout, stderr io.Writer) int {
	var o installer.Options
	fs := flag.NewFlagSet("claude-sandbox uninstall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Root, "root", "/", "uninstall under `DIR` instead of / (for tests)")
	fs.StringVar(&o.User, "user", "", "the remote `USER` whose ~/.local/bin/claude link is removed")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan, change nothing")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := installer.Uninstall(o, environ, stdout); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox uninstall: %v\n", err)
		return 1
	}
	return 0
}

func containerStartCmd(args []string, stdout, stderr io.Writer) int {
	var o installer.Options
	fs := flag.NewFlagSet("claude-sandbox container-start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Root, "root", "/", "act under `DIR` instead of / (for tests)")
	fs.BoolVar(&o.SkipProbe, "skip-probe", false, "do not check that a sandbox starts here")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := installer.ContainerStart(o, stdout); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox container-start: %v\n", err)
		return 1
	}
	return 0
}

// statuslineCmd prints the status line. A conf it cannot read only costs the
// network mode its name; the line must still render.
func statuslineCmd(p launcher.Paths, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "claude-sandbox statusline: unexpected argument %q (it reads Claude Code's status input on stdin)\n", args[0])
		return 2
	}
	network := "unknown (the conf does not parse)"
	if c, err := launcher.LoadConf(p.Conf); err == nil {
		network = c.NetworkMode()
	}
	home := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	statusline.Render(launcher.Inside(), network, home, os.Stdin, stdout)
	return 0
}

// denialsCmd prints the allowlist proxy's recent refusals for this user.
func denialsCmd(p launcher.Paths, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("claude-sandbox denials", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20, "how many of the latest refusals to show")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *n < 1 {
		fmt.Fprintln(stderr, "claude-sandbox denials: -n must be at least 1")
		return 2
	}
	home, err := launcher.UserHome(p)
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox denials: %v\n", err)
		return 1
	}
	ds, err := egress.Recent(filepath.Join(home, launcher.DenialsLog), *n)
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox denials: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, d := range ds {
			_ = enc.Encode(d)
		}
		return 0
	}
	if len(ds) == 0 {
		fmt.Fprintln(stdout, "no refusals recorded")
		return 0
	}
	egress.WriteDenials(stdout, ds)
	return 0
}

// parseFlags parses a subcommand's flags, which take no other argument. It
// returns false with the exit status when the command must stop: 0 for
// --help, 2 for a usage error (printed).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}
