package shellcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// w is a simple command of words; op a command of operands only.
func w(words ...string) Command  { return Command{Words: words} }
func op(words ...string) Command { return Command{Operands: words} }

func TestCommands(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       []Command
	}{
		{"words", "./tools/fsmon --watch", []Command{w("./tools/fsmon", "--watch")}},
		{"quotes and backslashes", `"/opt/my tools/run" 'a b' c\ d "a\"b\q\$"`, []Command{w("/opt/my tools/run", "a b", "c d", `a"b\q$`)}},
		{"a list, a pipeline", "cat|tee out;rm x && make || true", []Command{w("cat"), w("tee", "out"), w("rm", "x"), w("make"), w("true")}},
		{"a subshell and a block", "(cd a; ./b.sh) && { ./c.sh; }", []Command{w("cd", "a"), w("./b.sh"), w("./c.sh")}},
		{"if and for", "if [ -x a/b ]; then a/b; fi; for f in x/1.sh x/2.sh; do sh $f; done",
			[]Command{w("[", "-x", "a/b", "]"), w("a/b"), op("x/1.sh", "x/2.sh"), w("sh", "$"), w("sh", "x/1.sh"), w("sh", "x/2.sh")}},
		{"a loop's variable, alone, is read as each word the loop lists", `for f in hooks/*.sh "$CLAUDE_PROJECT_DIR"/b; do env X=1 "$f" --x; echo "a$f"; done; $f`,
			[]Command{op("hooks/$.sh", "$CLAUDE_PROJECT_DIR/b"),
				w("env", "X=1", "$", "--x"), w("X=1", "$", "--x"),
				w("env", "X=1", "hooks/$.sh", "--x"), w("X=1", "hooks/$.sh", "--x"),
				w("env", "X=1", "$CLAUDE_PROJECT_DIR/b", "--x"), w("X=1", "$CLAUDE_PROJECT_DIR/b", "--x"),
				w("echo", "a$"), w("$"), w("hooks/$.sh"), w("$CLAUDE_PROJECT_DIR/b")}},
		{"a loop over the arguments lists nothing", `for f; do "$f"; done`, []Command{w("$")}},
		{"while and case", "while ./w.sh; do case $x in a) ./a.sh;; esac; done", []Command{w("./w.sh"), w("./a.sh")}},
		{"a function", "f() { ./x.sh \"$1\"; }; f", []Command{w("./x.sh", "$"), w("f")}},
		{"command substitutions", "echo $(./x) `./y` \"<$(./z)>\"", []Command{w("echo", "$", "$", "<$>"), w("./x"), w("./y"), w("./z")}},
		{"a process substitution", "diff <(./a) b", []Command{w("diff", "$", "b"), w("./a")}},
		{"the project's directory, in any spelling", `"$CLAUDE_PROJECT_DIR"/hooks/a.sh "${CLAUDE_PROJECT_DIR}/hooks/b.sh" ${CLAUDE_PROJECT_DIR}/c $CLAUDE_PROJECT_DIR/d`,
			[]Command{w("$CLAUDE_PROJECT_DIR/hooks/a.sh", "$CLAUDE_PROJECT_DIR/hooks/b.sh", "$CLAUDE_PROJECT_DIR/c", "$CLAUDE_PROJECT_DIR/d")}},
		{"other expansions are computed", `$OTHER/x ${CLAUDE_PROJECT_DIR:-.}/y ${#HOME} $((1+2)) hooks/*.sh a?b [ab]c $'x\ty' $'z'`,
			[]Command{w("$/x", "$/y", "$", "$", "hooks/$.sh", "a$b", "$ab]c", "$", "z")}},
		{"quoted globs are not", `"*.sh" \?`, []Command{w("*.sh", "?")}},
		{"a home", `~/bin/x "$HOME"/y ${HOME}/z`, []Command{w("~/bin/x", "$HOME/y", "$HOME/z")}},
		{"assignments", "A=$CLAUDE_PROJECT_DIR/a B='b c' ./run", []Command{w("A=$CLAUDE_PROJECT_DIR/a", "B=b c", "./run")}},
		{"a declaration", "export P=\"$CLAUDE_PROJECT_DIR/bin\" Q", []Command{w("export", "P=$CLAUDE_PROJECT_DIR/bin", "Q")}},
		{"a declaration's options, an empty value", "declare -x A= B=(./b) C=~/c; A= ./x", []Command{w("declare", "-x", "A=", "B=", "C=~/c"), w("A=", "./x")}},
		{"redirections", "./a < in.txt > out/log 2>&1 >>x/y", []Command{{Words: []string{"./a"}, Operands: []string{"in.txt", "out/log", "1", "x/y"}}}},
		{"a compound command's redirection", "{ ./a; } > log/x", []Command{op("log/x"), w("./a")}},
		{"a here-document", "cat <<EOF\n$(./x)\nEOF", []Command{w("cat"), w("./x")}},
		{"a here-string to a shell", `bash <<< "$CLAUDE_PROJECT_DIR/x.sh a"`,
			[]Command{{Words: []string{"bash"}, Operands: []string{"$CLAUDE_PROJECT_DIR/x.sh a"}}, w("$CLAUDE_PROJECT_DIR/x.sh", "a")}},
		{"a here-string to a program", `cat <<< "a/b c"`, []Command{{Words: []string{"cat"}, Operands: []string{"a/b c"}}}},
		{"sh -c, its line read as commands, not as a word", `sh -c 'cd "$CLAUDE_PROJECT_DIR" && ./hooks/x.sh --fast'`,
			[]Command{w("sh", "-c"), w("cd", "$CLAUDE_PROJECT_DIR"), w("./hooks/x.sh", "--fast")}},
		{"bash -c in double quotes", `bash -c "python3 $CLAUDE_PROJECT_DIR/a.py | ./b"`,
			[]Command{w("bash", "-c"), w("python3", "$CLAUDE_PROJECT_DIR/a.py"), w("./b")}},
		{"flags before -c", `/bin/bash -e -o pipefail -lc './a; ./b' name arg`,
			[]Command{w("/bin/bash", "-e", "-o", "pipefail", "-lc", "name", "arg"), w("./a"), w("./b")}},
		{"a shell's long options, --", `bash --norc --rcfile r -c -- './a'`, []Command{w("bash", "--norc", "--rcfile", "r", "-c", "--"), w("./a")}},
		{"a shell with no command", "bash -c", []Command{w("bash", "-c")}},
		{"a shell running a script", "dash ./s.sh -c x", []Command{w("dash", "./s.sh", "-c", "x")}},
		{"a shell within a shell", `sh -c "zsh -c './in.sh'"`, []Command{w("sh", "-c"), w("zsh", "-c"), w("./in.sh")}},
		{"env", "env -i -u X A=1 ./prog arg", []Command{w("env", "-i", "-u", "X", "A=1", "./prog", "arg"), w("A=1", "./prog", "arg")}},
		{"env runs a shell", `G=x env A=1 sh -c './g.sh'`, []Command{w("G=x", "env", "A=1", "sh", "-c"), w("A=1", "sh", "-c"), w("./g.sh")}},
		{"exec, command, nohup", "exec -a n command nohup ./p", []Command{w("exec", "-a", "n", "command", "nohup", "./p"), w("command", "nohup", "./p"), w("nohup", "./p"), w("./p")}},
		{"a wrapper's --, a wrapper with no command", "nohup -- ./p; env -i", []Command{w("nohup", "--", "./p"), w("./p"), w("env", "-i")}},
		{"timeout, its duration and options", "timeout -k 5 -s KILL --foreground 10 ./t.sh a", []Command{w("timeout", "-k", "5", "-s", "KILL", "--foreground", "10", "./t.sh", "a"), w("./t.sh", "a")}},
		{"nice, ionice, stdbuf, setsid", "nice -n 5 ionice -c 3 -n 7 stdbuf -o L -eL setsid -w ./n.sh",
			[]Command{w("nice", "-n", "5", "ionice", "-c", "3", "-n", "7", "stdbuf", "-o", "L", "-eL", "setsid", "-w", "./n.sh"),
				w("ionice", "-c", "3", "-n", "7", "stdbuf", "-o", "L", "-eL", "setsid", "-w", "./n.sh"),
				w("stdbuf", "-o", "L", "-eL", "setsid", "-w", "./n.sh"), w("setsid", "-w", "./n.sh"), w("./n.sh")}},
		{"flock, its file, a command or a -c line", "flock -w 3 /tmp/l ./f.sh; flock -n x.lock -c './g.sh && ./h.sh'",
			[]Command{w("flock", "-w", "3", "/tmp/l", "./f.sh"), w("./f.sh"), w("flock", "-n", "x.lock", "-c"), w("sh", "-c"), w("./g.sh"), w("./h.sh")}},
		{"chrt, its priority left out or not; taskset, its mask", "chrt -f 10 ./c.sh; chrt --other ./d.sh; taskset -c 0,1 ./e.sh",
			[]Command{w("chrt", "-f", "10", "./c.sh"), w("./c.sh"), w("chrt", "--other", "./d.sh"), w("./d.sh"), w("taskset", "-c", "0,1", "./e.sh"), w("./e.sh")}},
		{"/usr/bin/time, its output file", "/usr/bin/time -o t.log -f %e ./m.sh", []Command{w("/usr/bin/time", "-o", "t.log", "-f", "%e", "./m.sh"), w("./m.sh")}},
		{"sudo, its options and assignments", "sudo -u app -D /srv -E A=1 ./s.sh; doas -u app ./d.sh",
			[]Command{w("sudo", "-u", "app", "-D", "/srv", "-E", "A=1", "./s.sh"), w("A=1", "./s.sh"), w("doas", "-u", "app", "./d.sh"), w("./d.sh")}},
		{"runuser, -u and a command, or a -c line anywhere", "runuser -u app -- ./r.sh; runuser app -c './q.sh'",
			[]Command{w("runuser", "-u", "app", "--", "./r.sh"), w("./r.sh"), w("runuser", "app", "-c"), w("sh", "-c"), w("./q.sh")}},
		{"xargs with a fixed command", "xargs -0 -n 1 -I {} ./x.sh {}", []Command{w("xargs", "-0", "-n", "1", "-I", "{}", "./x.sh", "{}"), w("./x.sh", "{}")}},
		{"env -S splits its string", `env -S "A=1 python3 -m tool" arg; env --chdir=/x -a n ./y`,
			[]Command{w("env", "-S", "A=1 python3 -m tool", "arg"), w("A=1", "python3", "-m", "tool", "arg"), w("env", "--chdir=/x", "-a", "n", "./y"), w("./y")}},
		{"the time keyword", "time -p ./k.sh", []Command{w("./k.sh")}},
		{"a shell's or an interpreter's input from a file", "sh < a.sh; bash -s x < $CLAUDE_PROJECT_DIR/b.sh; python3 - < c.py; cat < d.txt; bash e.sh < in",
			[]Command{{Words: []string{"sh"}, Operands: []string{"a.sh"}, Scripts: []string{"a.sh"}},
				{Words: []string{"bash", "-s", "x"}, Operands: []string{"$CLAUDE_PROJECT_DIR/b.sh"}, Scripts: []string{"$CLAUDE_PROJECT_DIR/b.sh"}},
				{Words: []string{"python3", "-"}, Operands: []string{"c.py"}, Scripts: []string{"c.py"}},
				{Words: []string{"cat"}, Operands: []string{"d.txt"}},
				{Words: []string{"bash", "e.sh"}, Operands: []string{"in"}}}},
		{"cat piped into a shell", "cat f.sh | sh; cat -u g.sh h.sh |& bash -x; cat i | grep x; cat j | sh -c 'true'; tr a b < k | sh",
			[]Command{w("cat", "f.sh"), {Words: []string{"sh"}, Scripts: []string{"f.sh"}},
				w("cat", "-u", "g.sh", "h.sh"), {Words: []string{"bash", "-x"}, Scripts: []string{"g.sh", "h.sh"}},
				w("cat", "i"), w("grep", "x"), w("cat", "j"), w("sh", "-c"), w("true"),
				{Words: []string{"tr", "a", "b"}, Operands: []string{"k"}}, w("sh")}},
		{"cat in a substitution a shell runs", `sh <(cat l.sh); source <(cat m.sh); eval "$(cat n.sh)"; bash -c "$(< o.sh)"; diff <(cat p) q; env sh <(cat r.sh)`,
			[]Command{{Words: []string{"sh", "$"}, Scripts: []string{"l.sh"}}, w("cat", "l.sh"),
				{Words: []string{"source", "$"}, Scripts: []string{"m.sh"}}, w("cat", "m.sh"),
				{Words: []string{"eval", "$"}, Scripts: []string{"n.sh"}}, w("cat", "n.sh"),
				{Words: []string{"bash", "-c"}, Scripts: []string{"o.sh"}}, w("$"), op("o.sh"),
				w("diff", "$", "q"), w("cat", "p"),
				w("env", "sh", "$"), {Words: []string{"sh", "$"}, Scripts: []string{"r.sh"}}, w("cat", "r.sh")}},
		{"brace expansion", "./{a,b}.sh c/{d,e{1,2}} {1..3}", []Command{w("./a.sh", "./b.sh", "c/d", "c/e1", "c/e2", "$")}},
		{"too many braces", "x{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", []Command{w(
			"x"+"aaaaaa$", "x"+"aaaaab$", "x"+"aaaaba$", "x"+"aaaabb$", "x"+"aaabaa$", "x"+"aaabab$", "x"+"aaabba$", "x"+"aaabbb$",
			"x"+"aabaaa$", "x"+"aabaab$", "x"+"aababa$", "x"+"aababb$", "x"+"aabbaa$", "x"+"aabbab$", "x"+"aabbba$", "x"+"aabbbb$",
			"x"+"abaaaa$", "x"+"abaaab$", "x"+"abaaba$", "x"+"abaabb$", "x"+"ababaa$", "x"+"ababab$", "x"+"ababba$", "x"+"ababbb$",
			"x"+"abbaaa$", "x"+"abbaab$", "x"+"abbaba$", "x"+"abbabb$", "x"+"abbbaa$", "x"+"abbbab$", "x"+"abbbba$", "x"+"abbbbb$",
			"x"+"baaaaa$", "x"+"baaaab$", "x"+"baaaba$", "x"+"baaabb$", "x"+"baabaa$", "x"+"baabab$", "x"+"baabba$", "x"+"baabbb$",
			"x"+"babaaa$", "x"+"babaab$", "x"+"bababa$", "x"+"bababb$", "x"+"babbaa$", "x"+"babbab$", "x"+"babbba$", "x"+"babbbb$",
			"x"+"bbaaaa$", "x"+"bbaaab$", "x"+"bbaaba$", "x"+"bbaabb$", "x"+"bbabaa$", "x"+"bbabab$", "x"+"bbabba$", "x"+"bbabbb$",
			"x"+"bbbaaa$", "x"+"bbbaab$", "x"+"bbbaba$", "x"+"bbbabb$", "x"+"bbbbaa$", "x"+"bbbbab$", "x"+"bbbbba$", "x"+"bbbbbb$")}},
		{"a line that does not parse is split", `./a.sh "$CLAUDE_PROJECT_DIR"/b.sh; ${CLAUDE_PROJECT_DIR}/c 'it's`,
			[]Command{w("./a.sh", "$CLAUDE_PROJECT_DIR/b.sh"), w("$CLAUDE_PROJECT_DIR/c", "its")}},
		{"a -c line that does not parse", `sh -c './a; if'`, []Command{w("sh", "-c"), w("./a"), w("if")}},
		{"nothing", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Commands(tt.line, "CLAUDE_PROJECT_DIR", "HOME")); diff != "" {
				t.Errorf("Commands(%q) mismatch (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestCommandsOnlyKnown(t *testing.T) {
	want := []Command{w("$/x", "$HOME/y")}
	if diff := cmp.Diff(want, Commands(`"$CLAUDE_PROJECT_DIR"/x ${HOME}/y`, "HOME")); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestPrograms(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  []int
	}{
		{[]string{"./run", "a/b"}, []int{0}},
		{[]string{"A=1", "B=2", "./run"}, []int{2}},
		{[]string{"A=1"}, nil},
		{[]string{"bash", "-e", "hooks/x.sh", "arg"}, []int{0, 2}},
		{[]string{"/bin/sh", "--", "x.sh"}, []int{0, 2}},
		{[]string{"bash", "-c"}, []int{0}},
		{[]string{"bash"}, []int{0}},
		{[]string{"node", "--no-warnings", "tools/a.js", "b.js"}, []int{0, 2}},
		{[]string{"python3", "-u", "hooks/check.py"}, []int{0, 2}},
		{[]string{"python3", "-m", "mod", "x.py"}, []int{0}},
		{[]string{"python3", "-c", "code", "x.py"}, []int{0}},
		// An option's value that is the next word is not the script.
		{[]string{"python3.12", "-W", "ignore", "-X", "dev", "x.py"}, []int{0, 5}},
		{[]string{"ruby", "-I", "lib", "-r", "json", "x.rb"}, []int{0, 5}},
		{[]string{"perl", "-I", "lib", "x.pl"}, []int{0, 3}},
		{[]string{"node", "-r", "./hook.js", "--import", "tsx", "app.js"}, []int{0, 2, 5}},
		{[]string{"ruby", "-r", "json", "-r", "./lib/x.rb", "-e", "1"}, []int{0, 4}},
		{[]string{"perl", "-e", "code", "x.pl"}, []int{0}},
		{[]string{"node", "-"}, []int{0}},
		{[]string{"node", "--", "x.js"}, []int{0, 2}},
		{[]string{"node", "--"}, []int{0}},
		{[]string{".", "./env.sh"}, []int{0, 1}},
		{[]string{"source", "x"}, []int{0, 1}},
		{[]string{"cat", "x.sh"}, []int{0}},
	} {
		if diff := cmp.Diff(tt.want, Command{Words: tt.words}.Programs()); diff != "" {
			t.Errorf("Programs(%q) mismatch (-want +got):\n%s", tt.words, diff)
		}
	}
}

func TestImportDirs(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"python3", "-c", "import json"}, []string{"."}},
		{[]string{"/usr/bin/python3", "-m", "nbstripout"}, []string{"."}},
		{[]string{"python3.12", "-Sc", "x"}, []string{"."}},
		{[]string{"python"}, []string{"."}},
		{[]string{"python3", "-u", "-"}, []string{"."}},
		{[]string{"python3", "-W", "ignore", "-X", "dev", "hooks/check.py", "-c"}, []string{"hooks"}},
		{[]string{"python3", "-Wignore", "lint.py"}, []string{"."}},
		{[]string{"python3", "--check-hash-based-pycs", "never", "--", "$CLAUDE_PROJECT_DIR/t/x.py"}, []string{"$CLAUDE_PROJECT_DIR/t"}},
		// -I, -P and PYTHONSAFEPATH leave out the working or script
		// directory; -I and -E leave out PYTHONPATH, and -E
		// PYTHONSAFEPATH.
		{[]string{"python3", "-P", "-m", "x"}, nil},
		{[]string{"python3", "-uIc", "x"}, nil},
		{[]string{"PYTHONSAFEPATH=1", "python3", "-m", "x"}, nil},
		{[]string{"PYTHONSAFEPATH=", "python3", "-m", "x"}, []string{"."}},
		{[]string{"PYTHONSAFEPATH=1", "python3", "-E", "-m", "x"}, []string{"."}},
		{[]string{"PYTHONPATH=src::/opt/lib", "python3", "-P", "-m", "x"}, []string{"src", ".", "/opt/lib"}},
		{[]string{"PYTHONPATH=src", "python3", "-E", "-P", "-m", "x"}, nil},
		{[]string{"PYTHONPATH=", "python3", "-P", "-m", "x"}, nil},
		{[]string{"PYTHONPATH=src", "python3", "-I", "x.py"}, nil},
		// Perl and Ruby: -I and their library variables only.
		{[]string{"perl", "-w", "-I", "lib", "-Ivendor", "-e", "-Ino", "x.pl", "-Ino"}, []string{"lib", "vendor"}},
		{[]string{"PERL5LIB=a::b", "PERLLIB=c", "perl", "x.pl"}, []string{"a", "b"}},
		{[]string{"PERLLIB=c", "perl", "-Mstrict", "x.pl"}, []string{"c"}},
		{[]string{"perl", "-e", "use Helper"}, nil},
		{[]string{"RUBYLIB=r", "ruby", "-r", "json", "-I", "lib", "x.rb"}, []string{"lib", "r"}},
		{[]string{"ruby", "-e", "require 'x'"}, nil},
		// Not an interpreter that loads modules from a path.
		{[]string{"pythonista", "-c", "x"}, nil},
		{[]string{"node", "-e", "x"}, nil},
		{[]string{"PYTHONPATH=src"}, nil},
	} {
		_, got := Command{Words: tt.words}.ImportDirs()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ImportDirs(%q) mismatch (-want +got):\n%s", tt.words, diff)
		}
	}
}
