package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// A group is where the usage lists a command.
type group int

const (
	admin group = iota
	work
	diagnostics
	hooks
)

var groupTitles = [...]string{
	admin:       "admin (as root):",
	work:        "repositories made in sessions (as the user, outside the sandbox):",
	diagnostics: "diagnostics:",
	hooks:       "internal hooks (Claude Code, the devcontainer feature and the launcher run these, not people):",
}

// A command is one subcommand of claude-sandbox. Its line in the usage, its
// --help and its usage errors are made from these fields, alike for every
// command.
type command struct {
	name  string
	group group
	// operands names what the command takes besides flags, for the
	// synopsis ("TARGET", "-- CLAUDE-ARGS...").
	operands string
	// min and max bound how many operands it takes; max -1: any number.
	min, max int
	// dash: the operands are what follows --, and nothing after it is
	// parsed as a flag (Claude's arguments, init's command).
	dash bool
	// summary says what it does, for the usage and --help.
	summary string
	// usageStatus is the exit status of a usage error when it is not 2.
	usageStatus int
	// flags declares the command's flags on fs and returns the command,
	// which runs with its operands once the flags are parsed.
	flags func(fs *flag.FlagSet, e env) func(operands []string) int
}

// env is what a command runs with.
type env struct {
	paths          host.Paths
	launchEnv      launchenv.Given
	stdout, stderr io.Writer
}

// lookup finds the command named name.
func lookup(name string) (command, bool) {
	i := slices.IndexFunc(registry(), func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return registry()[i], true
}

// flagSet is the command's flag set with its flags declared, and its run.
func (c command) flagSet(e env) (*flag.FlagSet, func([]string) int) {
	fs := flag.NewFlagSet("claude-sandbox "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs, c.flags(fs, e)
}

// run parses args (flags and operands in any order, up to a --) and runs
// the command. --help or -h prints the help and exits 0; a usage error is
// one line naming it and the synopsis, on stderr.
func (c command) run(e env, args []string) int {
	fs, run := c.flagSet(e)
	var afterDash []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, afterDash = args[:i], args[i+1:]
	}
	operands, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.writeHelp(e.stdout, fs)
		return 0
	}
	if err == nil {
		operands, err = c.checkOperands(operands, afterDash)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "claude-sandbox %s: %v\nusage: %s (--help: the flags)\n", c.name, flagError(err), c.synopsis(fs))
		if c.usageStatus != 0 {
			return c.usageStatus
		}
		return 2
	}
	return run(operands)
}

// parseInterspersed parses flags before and after operands, so
// `promote TARGET --check` works as `promote --check TARGET`.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// checkOperands returns the command's operands: those before -- and those
// after it, which only a dash command takes (and only those).
func (c command) checkOperands(before, after []string) ([]string, error) {
	operands := append(before, after...)
	if c.dash {
		if len(before) > 0 {
			return nil, fmt.Errorf("unexpected argument %q (%s go after --)", before[0], strings.TrimPrefix(c.operands, "-- "))
		}
		operands = after
	}
	if c.max == 0 && len(operands) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
	}
	if len(operands) < c.min || (c.max > 0 && len(operands) > c.max) {
		return nil, fmt.Errorf("want %s, got %d arguments", c.operands, len(operands))
	}
	return operands, nil
}

// flagError says what the flag package found wrong with the flags in the
// way the help spells them (--conf, -n).
func flagError(err error) error {
	msg := err.Error()
	for _, p := range []struct{ prefix, format string }{
		{"flag provided but not defined: -", "unknown flag %s"},
		{"flag needs an argument: -", "%s needs a value"},
	} {
		if name, ok := strings.CutPrefix(msg, p.prefix); ok {
			return fmt.Errorf(p.format, dashes(name))
		}
	}
	return err
}

// dashes is a flag's name as the help writes it: -n, --conf.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// synopsis is the command's usage line: its flags, each when there are few,
// and its operands.
func (c command) synopsis(fs *flag.FlagSet) string {
	words := []string{"claude-sandbox", c.name}
	var flags []string
	fs.VisitAll(func(f *flag.Flag) {
		arg, _ := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		flags = append(flags, "["+dashes(f.Name)+arg+"]")
	})
	if len(flags) > 3 {
		flags = []string{"[FLAGS]"}
	}
	words = append(words, flags...)
	if c.operands != "" {
		if c.min == 0 {
			words = append(words, "["+c.operands+"]")
		} else {
			words = append(words, c.operands)
		}
	}
	return strings.Join(words, " ")
}

// writeHelp prints the command's --help: the synopsis, what it does, and
// every flag.
func (c command) writeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n", c.synopsis(fs), c.summary)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" {
			help += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\n", dashes(f.Name), arg, help)
	})
	fmt.Fprintf(tw, "  -h, --help\tthis help\n")
	tw.Flush()
}

// writeUsage prints every command, by group, with its synopsis.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, `usage: claude-sandbox COMMAND [FLAGS] [ARGS...]   (claude-sandbox COMMAND --help: its flags)
       claude [CLAUDE-ARGS...]                    run Claude Code inside the sandbox
       claude-sandbox-wrap CLAUDE-BINARY [CLAUDE-ARGS...]
                                                  run that Claude Code binary inside the sandbox (the process
                                                  wrapper of the VS Code extension and the Agent SDK)
`)
	for g := range groupTitles {
		fmt.Fprintf(w, "\n%s\n", groupTitles[g])
		for _, c := range registry() {
			if c.group != group(g) {
				continue
			}
			fs, _ := c.flagSet(env{})
			fmt.Fprintf(w, "  %s\n      %s\n", c.synopsis(fs), strings.ReplaceAll(c.summary, "\n", "\n      "))
		}
	}
}

// A Command is a command's name and flags, as its --help spells them (-n,
// --conf), for the tests and docs that must cover every one.
type Command struct {
	Name  string
	Flags []string
}

// Commands lists every command of claude-sandbox.
func Commands() []Command {
	var out []Command
	for _, c := range registry() {
		fs, _ := c.flagSet(env{})
		info := Command{Name: c.name}
		fs.VisitAll(func(f *flag.Flag) { info.Flags = append(info.Flags, dashes(f.Name)) })
		out = append(out, info)
	}
	return out
}
