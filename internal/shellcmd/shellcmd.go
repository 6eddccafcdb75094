// Package shellcmd reads a command line as a shell reads it, to find the
// files it names: the commands that Claude Code's settings and git's
// configuration give to a shell. It parses the line (mvdan.cc/sh's
// parser, bash's grammar) and returns every simple command the line can
// run, wherever it stands: in a list or a pipeline, a subshell, a compound
// command, a function's body, a command substitution; the command that a
// wrapper runs (env, exec, command, nohup, timeout, nice, sudo, xargs,
// ...: wrappers); and the command line that a shell is given with -c or
// as a here-string.
//
// It expands nothing but a for loop's variable that stands alone as a word
// ($f, "$f"): the command is read once as it is and once for each word the
// loop lists, as a loop that runs every script it lists (for f in
// hooks/*.sh; do sh "$f"; done) does. A word is rendered as the shell
// passes it, quotes removed, but for what the shell computes when it runs
// the line: a variable the caller names as known is written $NAME,
// whether the line spells it $NAME, ${NAME} or "$NAME"; every other
// expansion (another variable, a command substitution, arithmetic, a
// glob) is written "$", so that a word holding a "$" that is not a known
// variable's is one whose value cannot be known here. A "$" within single
// quotes is kept too, which reads such a word as computed.
package shellcmd

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A Command is one simple command of a line, or the words a compound
// command's redirections and loop give.
type Command struct {
	// Words are a simple command's assignments (NAME=VALUE), then its
	// program and arguments; a shell's -c line is not one of them, but
	// read as the commands it holds.
	Words []string
	// Operands are the words that the shell uses but runs as no program:
	// the files of redirections, here-strings, a for loop's list.
	Operands []string
	// Scripts are the files a shell or an interpreter reads as its code
	// other than as an operand: by a redirection of its input (sh < f), a
	// pipe from cat (cat f | sh), or cat in a process or command
	// substitution that it, eval, "." or source runs (sh <(cat f), eval
	// "$(cat f)", sh -c "$(< f)").
	Scripts []string
}

// computed stands in a word for a part that the shell computes.
const computed = "$"

// maxAlternatives bounds the words one word's brace expansions yield
// ({a,b}{c,d}... doubles them with each brace); past it, the braces are
// read as computed.
const maxAlternatives = 64

// Commands returns the commands of line, in the order they appear, each
// one a shell runs in turn (a wrapper's command, a shell's command line)
// after the command that runs it. known are the variables rendered as
// $NAME.
func Commands(line string, known ...string) []Command {
	r := reader{known: known, loops: map[string][]string{}, piped: map[*syntax.Stmt][]string{}}
	r.line(line)
	return r.commands
}

type reader struct {
	known    []string
	commands []Command
	loops    map[string][]string       // a for loop's variable: the words it takes
	piped    map[*syntax.Stmt][]string // a pipeline's command: the files cat gives its input
}

// line reads one command line. A line the parser refuses is split at
// blanks and the shell's operators, quotes dropped: a shell may still run
// what comes before the error (bash and dash run a -c string's lines one by
// one, up to the one that does not parse), and where reading a word too
// many holds a file more read-only, a word too few can let a planted
// program run outside.
func (r *reader) line(line string) {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		r.commands = append(r.commands, r.split(line)...)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			r.stmt(n)
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				r.piped[n.Y] = r.catFiles([]*syntax.Stmt{n.X})
			}
		}
		return true
	})
}

// split reads a line that does not parse: the runs between operators are
// commands, their blank-separated fields words.
func (r *reader) split(line string) []Command {
	pairs := []string{`"`, "", `'`, "", `\`, ""}
	for _, name := range r.known {
		pairs = append(pairs, "${"+name+"}", "$"+name)
	}
	unquote := strings.NewReplacer(pairs...)
	var out []Command
	for _, run := range strings.FieldsFunc(line, func(c rune) bool { return strings.ContainsRune(";&|()`\n", c) }) {
		words := strings.FieldsFunc(unquote.Replace(run), func(c rune) bool { return strings.ContainsRune(" \t<>", c) })
		if len(words) > 0 {
			out = append(out, Command{Words: words})
		}
	}
	return out
}

// stmt reads one statement; the statements within it are the walk's.
func (r *reader) stmt(s *syntax.Stmt) {
	var c Command
	var input []string                     // what a shell reading its input would run
	inputFiles := slices.Clone(r.piped[s]) // the files it would read that from
	var fed []string                       // the files cat gives a substitution
	for _, rd := range s.Redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			// The word is the delimiter; the body is text.
		case syntax.WordHdoc:
			words := r.word(rd.Word)
			c.Operands = append(c.Operands, words...)
			input = append(input, words...)
		case syntax.RdrIn:
			words := r.word(rd.Word)
			c.Operands = append(c.Operands, words...)
			inputFiles = append(inputFiles, words...)
		default:
			c.Operands = append(c.Operands, r.word(rd.Word)...)
		}
	}
	var looped []loopWord
	switch cmd := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, a := range cmd.Assigns {
			c.Words = append(c.Words, r.assign(a)...)
		}
		for _, w := range cmd.Args {
			if items, ok := r.loopItems(w); ok {
				looped = append(looped, loopWord{at: len(c.Words), items: items})
			}
			fed = append(fed, r.substFiles(w)...)
			c.Words = append(c.Words, r.word(w)...)
		}
	case *syntax.DeclClause:
		c.Words = []string{cmd.Variant.Value}
		for _, a := range cmd.Args {
			c.Words = append(c.Words, r.assign(a)...)
		}
	case *syntax.ForClause:
		if it, ok := cmd.Loop.(*syntax.WordIter); ok {
			for _, w := range it.Items {
				words := r.word(w)
				c.Operands = append(c.Operands, words...)
				r.loops[it.Name.Value] = append(r.loops[it.Name.Value], words...)
			}
		}
	}
	chain, lines := runs(c, input)
	for k := range chain {
		chain[k].Scripts = codeFiles(chain[k].Words, inputFiles, fed)
	}
	for _, v := range loopVariants(c, looped) {
		more, _ := runs(v, nil)
		chain = append(chain, more...)
	}
	for _, cmd := range chain {
		if len(cmd.Words) > 0 || len(cmd.Operands) > 0 || len(cmd.Scripts) > 0 {
			r.commands = append(r.commands, cmd)
		}
	}
	for _, l := range lines {
		r.line(l)
	}
}

// catFiles returns the files that stmts print when they are one cat (or
// bash's $(< f)): what a shell that runs their output reads as its code.
// Any other command's output is left: what it reads cannot be known.
func (r *reader) catFiles(stmts []*syntax.Stmt) []string {
	if len(stmts) != 1 {
		return nil
	}
	var files []string
	for _, rd := range stmts[0].Redirs {
		if rd.Op == syntax.RdrIn {
			files = append(files, r.word(rd.Word)...)
		}
	}
	switch cmd := stmts[0].Cmd.(type) {
	case nil:
		return files
	case *syntax.CallExpr:
		if len(cmd.Assigns) > 0 || len(cmd.Args) == 0 || path.Base(r.text(cmd.Args[0])) != "cat" {
			return nil
		}
		for _, w := range cmd.Args[1:] {
			for _, f := range r.word(w) {
				if !strings.HasPrefix(f, "-") || f == "-" {
					files = append(files, f)
				}
			}
		}
		return files
	}
	return nil
}

// substFiles returns the files cat prints in w when w is one process or
// command substitution, quoted or not.
func (r *reader) substFiles(w *syntax.Word) []string {
	if len(w.Parts) != 1 {
		return nil
	}
	p := w.Parts[0]
	if q, ok := p.(*syntax.DblQuoted); ok && len(q.Parts) == 1 {
		p = q.Parts[0]
	}
	switch p := p.(type) {
	case *syntax.CmdSubst:
		return r.catFiles(p.Stmts)
	case *syntax.ProcSubst:
		return r.catFiles(p.Stmts)
	}
	return nil
}

// codeFiles returns the files a command (words) reads as its code other
// than as an operand: those of its input when it is a shell or an
// interpreter that reads its code there, those cat gives a substitution
// in its words when it is one that runs code (a shell, an interpreter,
// eval, "." or source).
func codeFiles(words, input, fed []string) []string {
	i := 0
	for i < len(words) && assignment(words[i]) {
		i++
	}
	if i == len(words) {
		return nil
	}
	program := words[i:]
	var files []string
	if readsInput(program) {
		files = append(files, input...)
	}
	name := path.Base(program[0])
	if _, interpreter := interpreters[name]; interpreter || shells[name] || python(name) || name == "eval" {
		files = append(files, fed...)
	}
	return files
}

// readsInput reports whether words run a shell or an interpreter that
// reads its code from its input: no -c line, code option or script, or
// the script "-".
func readsInput(words []string) bool {
	if at, ok := shellLine(words); ok || at > 0 {
		return ok && at < 0
	}
	if at, ok := script(words); ok {
		return words[at] == "-"
	}
	name := path.Base(words[0])
	if python(name) {
		name = "python3"
	}
	stops, ok := interpreters[name]
	if !ok || name == "." || name == "source" {
		return false
	}
	for _, w := range words[1:] {
		if w != "-" && slices.Contains(stops, w) {
			return false
		}
	}
	return true
}

// A loopWord is a word of a command that is a for loop's variable, alone:
// its index in the command's words, and the words the loop gives it.
type loopWord struct {
	at    int
	items []string
}

// loopItems returns the words a for loop read earlier gives w, when w is
// that loop's variable alone ($f, "${f}"). Which loop is not told apart:
// reading a word too many holds a file more.
func (r *reader) loopItems(w *syntax.Word) ([]string, bool) {
	if len(w.Parts) != 1 {
		return nil, false
	}
	p := w.Parts[0]
	if q, ok := p.(*syntax.DblQuoted); ok && len(q.Parts) == 1 {
		p = q.Parts[0]
	}
	pe, ok := p.(*syntax.ParamExp)
	if !ok || !plainParam(pe) {
		return nil, false
	}
	items, ok := r.loops[pe.Param.Value]
	return items, ok
}

// loopVariants are c once for each word a loop gives each of its loop
// words, the rest as it is: a loop that runs every script it lists
// (for f in hooks/*.sh; do sh "$f"; done) runs each as a program, with
// what the shell computes in it. Past maxAlternatives, no more.
func loopVariants(c Command, looped []loopWord) []Command {
	var out []Command
	for _, lw := range looped {
		for _, item := range lw.items {
			if len(out) == maxAlternatives {
				return out
			}
			words := slices.Clone(c.Words)
			words[lw.at] = item
			out = append(out, Command{Words: words})
		}
	}
	return out
}

// runs returns c and the commands it runs in turn, wrappers' (env ./x),
// and the command lines of a shell it runs: its -c line, or else the
// lines of its input. The -c line is not a word of the commands: it is
// read as the commands it holds.
func runs(c Command, input []string) (chain []Command, lines []string) {
	chain = []Command{c}
	for words := c.Words; ; {
		i := 0
		for i < len(words) && assignment(words[i]) {
			i++
		}
		program := words[i:]
		if at, ok := shellLine(program); ok {
			if at < 0 {
				return chain, input
			}
			// Each command of the chain that holds the line as a word drops
			// its last such word: the line (a wrapper's -c line is the one
			// it gives to sh -c).
			for k := range chain {
				if n := lastIndex(chain[k].Words, program[at]); n >= 0 {
					chain[k].Words = slices.Delete(slices.Clone(chain[k].Words), n, n+1)
				}
			}
			return chain, []string{program[at]}
		}
		if words = wrapped(program); len(words) == 0 {
			return chain, nil
		}
		chain = append(chain, Command{Words: slices.Clone(words)})
	}
}

// lastIndex returns the index of the last of words that is w, or -1.
func lastIndex(words []string, w string) int {
	for i := len(words) - 1; i >= 0; i-- {
		if words[i] == w {
			return i
		}
	}
	return -1
}

// shells read a command line from their -c operand, or else, with no
// script file named, from their input.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true}

// shellLine reports whether words run a shell that reads a command line,
// and where: the index of its -c line in words, or -1 for its input.
func shellLine(words []string) (at int, ok bool) {
	if len(words) == 0 || !shells[path.Base(words[0])] {
		return 0, false
	}
	dashC, dashS := false, false
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--" || w == "-":
			if i+1 < len(words) && !dashS {
				return i + 1, dashC
			}
		case w == "--rcfile" || w == "--init-file":
			i++ // its file
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+"):
			dashC = dashC || (w[0] == '-' && strings.Contains(w, "c"))
			dashS = dashS || (w[0] == '-' && strings.Contains(w, "s"))
			if strings.ContainsAny(w, "oO") {
				i++ // -o OPTION
			}
		case dashS && !dashC:
			return -1, true // -s: the operands are arguments; the input is the code
		default:
			return i, dashC // the -c line, or a script file
		}
	}
	return -1, !dashC
}

// Programs returns the indexes in c.Words of the words that name what c
// runs: its program, the first word that is not NAME=VALUE, and when that
// is a shell or an interpreter given a script file, or the shell's "." or
// source, the script: a file read as code as much as a program is; and
// a file an interpreter's option loads before it (node -r ./hook.js, ruby
// -r ./x.rb), when it is a path. The options that take a value as the
// next word are an interpreter's own (interpreterValues); another one's
// value may be read as the script (best effort; a word read too many
// holds a file more).
func (c Command) Programs() []int {
	i := 0
	for i < len(c.Words) && assignment(c.Words[i]) {
		i++
	}
	if i == len(c.Words) {
		return nil
	}
	out := []int{i}
	for _, at := range loaded(c.Words[i:]) {
		out = append(out, i+at)
	}
	if at, ok := script(c.Words[i:]); ok {
		out = append(out, i+at)
	}
	return out
}

// loaders are the options of an interpreter whose value is code it loads
// before its script: a module, which is a file when it is a path.
var loaders = map[string][]string{
	"node": {"-r", "--require", "--import", "--loader", "--experimental-loader"},
	"ruby": {"-r"},
}

// loaded returns the indexes in words of the paths their interpreter's
// options load as code, up to its script.
func loaded(words []string) []int {
	opts := loaders[path.Base(words[0])]
	var out []int
	for i := 1; i+1 < len(words) && strings.HasPrefix(words[i], "-"); i++ {
		if slices.Contains(opts, words[i]) {
			i++
			if strings.Contains(words[i], "/") {
				out = append(out, i)
			}
		}
	}
	return out
}

// ImportDirs returns, when c runs Python, Perl or Ruby, its language and
// the directories it loads modules from before its own library, as words.
// Every import the process makes looks there first, the standard
// library's own for Python (json imports re), so a module put there runs.
// Python: "." for its working directory (with -c, -m, or a script read
// from its input), the directory of the script it runs, and the entries
// of a PYTHONPATH that c assigns; -I, -P or a non-empty PYTHONSAFEPATH
// (but under -E) leave out the working or script directory, -I and -E
// leave out PYTHONPATH. Perl and Ruby look in no such directory of
// their own (Perl's @INC has had no "." since 5.26, Ruby's $LOAD_PATH
// none since 1.9.2): their -I DIR, and PERL5LIB (else PERLLIB) or RUBYLIB
// that c assigns.
func (c Command) ImportDirs() (lang string, dirs []string) {
	i := 0
	for i < len(c.Words) && assignment(c.Words[i]) {
		i++
	}
	if i == len(c.Words) {
		return "", nil
	}
	env := map[string]string{}
	for _, w := range c.Words[:i] {
		name, value, _ := strings.Cut(w, "=")
		env[name] = value
	}
	switch name := path.Base(c.Words[i]); {
	case python(name):
		return "Python", pythonDirs(c.Words[i+1:], env)
	case name == "perl":
		lib, ok := env["PERL5LIB"]
		if !ok {
			lib = env["PERLLIB"]
		}
		return "Perl", append(includeDirs(c.Words[i+1:], "-e", "-E"), pathList(lib)...)
	case name == "ruby":
		return "Ruby", append(includeDirs(c.Words[i+1:], "-e", "-r"), pathList(env["RUBYLIB"])...)
	}
	return "", nil
}

// pythonDirs are the directories Python, given args and the assignments
// env, loads modules from first (see ImportDirs).
func pythonDirs(args []string, env map[string]string) []string {
	first, flags := pythonFirst(args)
	var dirs []string
	if !flags.isolated && !flags.safe && !(env["PYTHONSAFEPATH"] != "" && !flags.ignoreEnv) {
		dirs = append(dirs, first)
	}
	if flags.isolated || flags.ignoreEnv || env["PYTHONPATH"] == "" {
		return dirs // an empty PYTHONPATH names no directory
	}
	for _, d := range strings.Split(env["PYTHONPATH"], ":") {
		if d == "" {
			d = "." // an empty entry is the working directory
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// includeDirs returns the directories of Perl's or Ruby's -I options (-I
// DIR, -IDIR), read up to the script or the code; valued are the options
// whose value is the next word.
func includeDirs(args []string, valued ...string) []string {
	var dirs []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--" || !strings.HasPrefix(w, "-") || w == "-":
			return dirs
		case w == "-I" && i+1 < len(args):
			i++
			dirs = append(dirs, args[i])
		case strings.HasPrefix(w, "-I") && len(w) > 2:
			dirs = append(dirs, w[2:])
		case slices.Contains(valued, w):
			i++
		}
	}
	return dirs
}

// pathList splits a PERL5LIB or RUBYLIB value; both skip empty entries.
func pathList(value string) []string {
	var dirs []string
	for _, d := range strings.Split(value, ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// python reports whether a program is a Python interpreter: python,
// python3, python3.12.
func python(program string) bool {
	rest, ok := strings.CutPrefix(path.Base(program), "python")
	return ok && strings.Trim(rest, "0123456789.") == ""
}

// pythonFlags are the options of a Python command line that change its
// module path.
type pythonFlags struct{ isolated, safe, ignoreEnv bool }

// pythonFirst reads Python's arguments (CPython's options: -c, -m, -W and
// -X take a value, in the same word or the next) and returns the
// directory it puts first on its module path, "." for the working
// directory, and the options that change that.
func pythonFirst(args []string) (string, pythonFlags) {
	var f pythonFlags
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			if i+1 < len(args) {
				return path.Dir(args[i+1]), f
			}
			return ".", f
		case w == "-":
			return ".", f
		case w == "--check-hash-based-pycs":
			i++
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-"):
			code, skip := pythonOptions(w[1:], &f)
			if code {
				return ".", f
			}
			i += skip
		default:
			return path.Dir(w), f
		}
	}
	return ".", f // the script is read from the input
}

// pythonOptions reads one word of Python's short options, and reports
// whether one gives the code (-c, -m) and how many words their values
// take past it.
func pythonOptions(cluster string, f *pythonFlags) (code bool, skip int) {
	for j, o := range cluster {
		switch o {
		case 'c', 'm':
			return true, 0
		case 'W', 'X':
			if j+1 == len(cluster) {
				return false, 1
			}
			return false, 0
		case 'I':
			f.isolated = true
		case 'P':
			f.safe = true
		case 'E':
			f.ignoreEnv = true
		}
	}
	return false, 0
}

// interpreters run the script file that is their first operand, unless one
// of the options listed gives the code itself (a line, a module, the
// input); "." and source read theirs in the shell itself.
var interpreters = map[string][]string{
	".":       nil,
	"source":  nil,
	"node":    {"-e", "--eval", "-p", "--print", "-"},
	"python":  {"-c", "-m", "-"},
	"python3": {"-c", "-m", "-"},
	"perl":    {"-e", "-E", "-"},
	"ruby":    {"-e", "-"},
}

// interpreterValues are the options of an interpreter whose value is the
// next word, which is not its script: a module to load first, a library
// directory, a warning filter.
var interpreterValues = map[string][]string{
	"node":    {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--title", "--env-file"},
	"python3": {"-W", "-X", "--check-hash-based-pycs"},
	"perl":    {"-I"},
	"ruby":    {"-I", "-r", "-C", "-E", "--encoding"},
}

// script returns the index in words of the script file their program, a
// shell or an interpreter, runs.
func script(words []string) (int, bool) {
	if at, line := shellLine(words); at > 0 && !line {
		return at, true
	}
	name := path.Base(words[0])
	if python(name) {
		name = "python3"
	}
	stops, ok := interpreters[name]
	if !ok {
		return 0, false
	}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case slices.Contains(stops, w):
			return 0, false
		case slices.Contains(interpreterValues[name], w):
			i++
		case w == "--":
			return i + 1, i+1 < len(words)
		case !strings.HasPrefix(w, "-") || w == "-":
			return i, true
		}
	}
	return 0, false
}

// A wrapper runs its operands as a command, after its options and the
// operands it takes first (timeout's duration, flock's file). The options
// are each one's own, from its manual (coreutils, util-linux, sudo, doas,
// findutils); a long option's value may also follow an "=" in the same
// word, and a short one's be written in the same word, which read as
// options that take none.
type wrapper struct {
	valued   []string // options that take a value as the next word
	operands int      // operands before the command
	numeric  bool     // the operands are skipped only when they are numbers (chrt's priority, which may be left out)
	lines    []string // options whose value is a command line the wrapper gives to sh -c
	anywhere bool     // options may follow the operands (runuser's -c after the user)
	split    []string // options whose value is split into words that stand in its place (env -S)
}

// wrappers are the programs that run their operands as a command.
var wrappers = map[string]wrapper{
	"env":     {valued: []string{"-u", "--unset", "-C", "--chdir", "-a", "--argv0"}, split: []string{"-S", "--split-string"}},
	"exec":    {valued: []string{"-a"}},
	"command": {},
	"builtin": {},
	"nohup":   {},
	"setsid":  {},
	"nice":    {valued: []string{"-n", "--adjustment"}},
	"timeout": {valued: []string{"-k", "--kill-after", "-s", "--signal"}, operands: 1},
	"ionice":  {valued: []string{"-c", "--class", "-n", "--classdata"}},
	"stdbuf":  {valued: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	"flock":   {valued: []string{"-w", "--timeout", "--wait", "-E", "--conflict-exit-code"}, operands: 1, lines: []string{"-c", "--command"}},
	"chrt":    {valued: []string{"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}, operands: 1, numeric: true},
	"taskset": {operands: 1},
	"time":    {valued: []string{"-o", "--output", "-f", "--format"}},
	"sudo": {valued: []string{"-C", "--close-from", "-D", "--chdir", "-g", "--group", "-p", "--prompt", "-R", "--chroot",
		"-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user", "-u", "--user"}},
	"doas": {valued: []string{"-a", "-C", "-u"}},
	"runuser": {valued: []string{"-u", "--user", "-w", "--whitelist-environment", "-g", "--group", "-G", "--supp-group", "-s", "--shell"},
		lines: []string{"-c", "--command", "--session-command"}, anywhere: true},
	"xargs": {valued: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines", "-n", "--max-args",
		"-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}},
}

// wrapped returns the command that words run when their program is a
// wrapper, with env's and sudo's assignments, else nil. A wrapper that
// gives a line to a shell (flock FILE -c LINE) runs sh -c LINE.
func wrapped(words []string) []string {
	if len(words) == 0 {
		return nil
	}
	wr, ok := wrappers[path.Base(words[0])]
	if !ok {
		return nil
	}
	if wr.anywhere {
		for i := 1; i+1 < len(words); i++ {
			if slices.Contains(wr.lines, words[i]) {
				return []string{"sh", "-c", words[i+1]}
			}
		}
	}
	operands := wr.operands
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return skipOperands(words[i+1:], wr)
		case slices.Contains(wr.lines, w) && i+1 < len(words):
			return []string{"sh", "-c", words[i+1]}
		case slices.Contains(wr.split, w) && i+1 < len(words):
			words = slices.Concat(words[:i], splitString(words[i+1]), words[i+2:])
			i--
		case slices.Contains(wr.valued, w):
			i++
		case strings.HasPrefix(w, "-") && w != "-":
		case operands > 0 && (!wr.numeric || number(w)):
			operands--
		default:
			return words[i:]
		}
	}
	return nil
}

// skipOperands returns what follows a wrapper's "--": its command, after
// the operands the wrapper takes first.
func skipOperands(words []string, wr wrapper) []string {
	for n := wr.operands; n > 0 && len(words) > 0 && (!wr.numeric || number(words[0])); n-- {
		words = words[1:]
	}
	if len(wr.lines) > 0 && len(words) > 1 && slices.Contains(wr.lines, words[0]) {
		return []string{"sh", "-c", words[1]}
	}
	return words
}

// splitString returns the words env -S makes of its value: read as a
// shell reads one command (env's own rules are a subset: quotes,
// backslashes, ${NAME}), else split at blanks.
func splitString(s string) []string {
	if cmds := Commands(s); len(cmds) == 1 && len(cmds[0].Operands) == 0 {
		return cmds[0].Words
	}
	return strings.Fields(s)
}

// number reports whether w is a decimal number.
func number(w string) bool {
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// assignment reports whether w is a NAME=VALUE word.
func assignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && syntax.ValidName(name)
}

// assign renders an assignment as a NAME=VALUE word (an array's, bash's
// A=(x y), as NAME=), or a declaration's other words.
func (r *reader) assign(a *syntax.Assign) []string {
	switch {
	case a.Name == nil: // declare's option, or a word it expands
		return r.word(a.Value)
	case a.Naked:
		return []string{a.Name.Value}
	case a.Value == nil:
		return []string{a.Name.Value + "="}
	}
	return []string{a.Name.Value + "=" + r.text(a.Value)}
}

// text renders a word in a place that expands no braces.
func (r *reader) text(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		r.part(&b, p, false)
	}
	return b.String()
}

// word renders a word as the words the shell passes: more than one when
// it holds a brace expansion ({a,b}).
func (r *reader) word(w *syntax.Word) []string {
	split := &syntax.Word{Parts: w.Parts} // SplitBraces rewrites the parts; the walk still reads w
	syntax.SplitBraces(split)
	out := []string{""}
	for _, p := range split.Parts {
		var alternatives []string
		if br, ok := p.(*syntax.BraceExp); ok && !br.Sequence {
			for _, e := range br.Elems {
				alternatives = append(alternatives, r.word(e)...)
			}
		} else if ok {
			alternatives = []string{computed} // {1..9}: numbers, not names
		} else {
			var b strings.Builder
			r.part(&b, p, false)
			alternatives = []string{b.String()}
		}
		if len(out)*len(alternatives) > maxAlternatives {
			alternatives = []string{computed}
		}
		next := make([]string, 0, len(out)*len(alternatives))
		for _, o := range out {
			for _, a := range alternatives {
				next = append(next, o+a)
			}
		}
		out = next
	}
	return out
}

// part renders one part of a word; quoted says it is within double quotes.
func (r *reader) part(b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		literal(b, p.Value, quoted)
	case *syntax.SglQuoted:
		if p.Dollar && strings.Contains(p.Value, `\`) {
			b.WriteString(computed) // $'...' with escapes to decode
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			r.part(b, q, true)
		}
	case *syntax.ParamExp:
		if r.isKnown(p) {
			b.WriteString("$" + p.Param.Value)
		} else {
			b.WriteString(computed)
		}
	default: // command and process substitutions, arithmetic, extended globs
		b.WriteString(computed)
	}
}

// isKnown reports whether p is a known variable's plain value, $NAME or
// ${NAME}. The fields the parser sets only for zsh are not read: the line
// is parsed as bash.
func (r *reader) isKnown(p *syntax.ParamExp) bool {
	return plainParam(p) && slices.Contains(r.known, p.Param.Value)
}

// plainParam reports whether p is a variable's plain value, $NAME or
// ${NAME}.
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && p.Index == nil &&
		p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// literal writes a literal's text as the shell reads it: a backslash
// quotes the next character (within double quotes, only $ ` " \ and a
// newline), a quoted newline joins lines, and an unquoted glob's
// characters are computed.
func literal(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case !quoted && (c == '*' || c == '?' || (c == '[' && strings.IndexByte(s[i+1:], ']') >= 0)):
			b.WriteString(computed)
		default:
			b.WriteByte(c)
		}
	}
}
