// Package cli dispatches the claude-sandbox binary: run as `claude` it is the
// launcher; under any other name it is a command with subcommands.
package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/launcher"
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "dev"

const usage = `usage:
  claude [CLAUDE-ARGS...]                    run Claude Code inside the sandbox
  claude-sandbox argv [--conf FILE] [-- CLAUDE-ARGS...]
                                             print the bwrap argv a launch from here would use
  claude-sandbox doctor [--conf FILE]        check this host and the conf, with fixes
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
		fmt.Fprintf(stderr, "claude-sandbox: %v\n", err)
		return launcher.ExitRefused
	}
	for _, st := range pr.Plan.Stubs {
		fmt.Fprintf(stderr, "claude-sandbox: %s is missing; a launch creates it as a read-only stub and removes it afterwards\n", st.Path)
	}
	fmt.Fprintln(stdout, pr.Bwrap)
	for _, a := range append(append(pr.Plan.Redacted, "--"), pr.Plan.Command...) {
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
	if c, err := launcher.LoadConf(p.Conf); err != nil {
		findings = append(findings, doctor.Finding{Name: "conf", Detail: err.Error(), Fix: "edit the line named above"})
	} else if _, err := os.Stat(p.Conf); err != nil {
		findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: p.Conf + " is absent: the defaults apply"})
	} else {
		findings = append(findings, doctor.Finding{OK: true, Name: "conf", Detail: fmt.Sprintf("%s parses (%d allow-write, %d pass-env, %d protect, %d share-home, %d append-path, no-forge=%v)",
			p.Conf, len(c.AllowWrite), len(c.PassEnv), len(c.Protect), len(c.ShareHome), len(c.AppendPath), c.NoForge)})
	}
	if _, err := launcher.Prepare(p, nil, environ); err != nil {
		findings = append(findings, doctor.Finding{Name: "launch from here", Detail: err.Error()})
	} else {
		findings = append(findings, doctor.Finding{OK: true, Name: "launch from here", Detail: "the policy builds for this directory"})
	}
	if doctor.Print(stdout, findings) > 0 {
		return 1
	}
	return 0
}
