package testscripts

import "github.com/rogpeppe/go-internal/testscript"

// hostileName is one name a session could make in the workspace, holding
// every kind of text a terminal would act on: OSC 0 (the window title),
// OSC 52 (the clipboard), CSI cursor movement and erasing, a newline and a
// line that forges a message of the product's, a tab, a right-to-left
// override and an isolate, the C1 CSI, DEL, a byte that is not UTF-8, and
// a backslash.
const hostileName = "x\x1b]0;owned-title\x07\x1b]52;c;b3duZWQ=\x07\x1b[2A\x1b[2K\nclaude-sandbox: forged\tline\u202Egnp.exe\u2066\u009B31m\x7F\xFF\\y"

// hostileShown is hostileName as the product must print it, spelled out
// here by hand rather than made by the function under test.
const hostileShown = `x\x1b]0;owned-title\x07\x1b]52;c;b3duZWQ=\x07\x1b[2A\x1b[2K\nclaude-sandbox: forged\tline\u202egnp.exe\u2066\u009b31m\x7f\xff\\y`

// hostile sets $HOSTILE to hostileName and $HOSTILE_SHOWN to hostileShown
// (${HOSTILE_SHOWN@R} matches it in a regular expression): a script's own
// words cannot hold control characters.
func hostile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: hostile")
	}
	ts.Setenv("HOSTILE", hostileName)
	ts.Setenv("HOSTILE_SHOWN", hostileShown)
}
