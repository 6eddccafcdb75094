package forgepush

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const (
	zero = "0000000000000000000000000000000000000000"
	oidA = "1111111111111111111111111111111111111111"
	oidB = "2222222222222222222222222222222222222222"
	oid2 = "2222222222222222222222222222222222222222222222222222222222222222"
)

// pkts frames each string as a pkt-line; "" is a flush packet.
func pkts(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			b.WriteString("0000")
		} else {
			b.WriteString(pktLine(l))
		}
	}
	return b.String()
}

// The head is read as receive-pack reads it; what receive-pack would read
// otherwise, or what the gate cannot decide, is refused, naming why.
func TestReadHead(t *testing.T) {
	first := oidA + " " + oidB + " refs/heads/claude/x\x00report-status side-band-64k\n"
	for _, tc := range []struct {
		name, body string
		refs       []string // the commands' refs, when read
		options    []string
		refused    string // a part of why, when refused
	}{
		{name: "one command", body: pkts(first, "") + "PACK", refs: []string{"refs/heads/claude/x"}},
		{name: "no newline", body: pkts(strings.TrimSuffix(first, "\n"), ""), refs: []string{"refs/heads/claude/x"}},
		{name: "two commands", body: pkts(first, zero+" "+oidA+" refs/heads/claude/y\n", ""), refs: []string{"refs/heads/claude/x", "refs/heads/claude/y"}},
		{name: "deletion", body: pkts(oidA+" "+zero+" refs/heads/claude/x\x00report-status\n", ""), refs: []string{"refs/heads/claude/x"}},
		{name: "shallow lines", body: pkts("shallow "+oidA+"\n", first, ""), refs: []string{"refs/heads/claude/x"}},
		{name: "sha256", body: pkts(oid2+" "+oid2+" refs/heads/x\x00report-status object-format=sha256\n", ""), refs: []string{"refs/heads/x"}},
		{name: "push options", body: pkts(oidA+" "+oidB+" refs/heads/x\x00report-status push-options\n", "", "ci.skip\n", "") + "PACK", refs: []string{"refs/heads/x"}, options: []string{"ci.skip"}},
		{name: "the probe", body: "0000"},

		{name: "empty body", body: "", refused: "ends before the flush"},
		{name: "missing flush", body: pkts(first), refused: "ends before the flush"},
		{name: "cut in a length", body: pkts(first) + "00", refused: "ends before the flush"},
		{name: "cut in a line", body: pkts(first)[:30], refused: "ends before the flush"},
		{name: "not hex", body: "00zz" + first, refused: "not four hexadecimal digits"},
		{name: "upper-case hex", body: "00A0" + strings.Repeat("x", 0xa0-4), refused: "not four hexadecimal digits"},
		{name: "delim packet", body: pkts(first) + "0001", refused: "special packet 0001"},
		{name: "response end", body: pkts(first) + "0002", refused: "special packet 0002"},
		{name: "length three", body: "0003", refused: "special packet 0003"},
		{name: "empty packet", body: "0004" + pkts(first, ""), refused: "empty pkt-line"},
		{name: "oversized length", body: "fff1" + strings.Repeat("x", 0xfff1), refused: "past git's 65520"},
		{name: "past the head bound", body: strings.Repeat(pkts(strings.Repeat("shallow "+oidA, 1)+strings.Repeat(" ", 60000)), 20), refused: "run past"},
		{name: "bytes after the probe", body: "0000PACK", refused: "bytes after a flush"},
		{name: "shallow alone", body: pkts("shallow "+oidA+"\n", ""), refused: "shallow lines without a command"},
		{name: "shallow garbage", body: pkts("shallow "+oidA+"zz\n", first, ""), refused: "shallow line"},
		{name: "caps on a later line", body: pkts(first, zero+" "+oidA+" refs/heads/y\x00report-status\n", ""), refused: "capabilities on a command line other than the first"},
		{name: "NUL in caps", body: pkts(oidA+" "+oidB+" refs/heads/x\x00report-status\x00atomic\n", ""), refused: "second NUL"},
		{name: "NUL hides a ref", body: pkts(oidA+" "+oidB+" refs/heads/claude/x\x00\x00 refs/heads/main\n", ""), refused: "second NUL"},
		{name: "ref named twice", body: pkts(first, oidB+" "+oidA+" refs/heads/claude/x\n", ""), refused: "named in two commands"},
		{name: "push certificate", body: pkts("push-cert\x00report-status\n", "certificate version 0.1\n", "push-cert-end\n", ""), refused: "signed pushes"},
		{name: "both zero", body: pkts(zero+" "+zero+" refs/heads/x\x00report-status\n", ""), refused: "neither an old nor a new"},
		{name: "short object name", body: pkts(oidA[:39]+" "+oidB+" refs/heads/x\n", ""), refused: "not OLD NEW REF"},
		{name: "upper-case object name", body: pkts(strings.ToUpper("abcdef"+oidA[6:])+" "+oidB+" refs/heads/x\n", ""), refused: "not OLD NEW REF"},
		{name: "two spaces", body: pkts(oidA+"  "+oidB+" refs/heads/x\n", ""), refused: "not OLD NEW REF"},
		{name: "no ref", body: pkts(oidA+" "+oidB+"\n", ""), refused: "not OLD NEW REF"},
		{name: "sha1 names in a sha256 push", body: pkts(oidA+" "+oidB+" refs/heads/x\x00object-format=sha256\n", ""), refused: "40 digits in a push of 64"},
		{name: "unknown object format", body: pkts(oidA+" "+oidB+" refs/heads/x\x00object-format=md5\n", ""), refused: "unknown object format"},
		{name: "ref outside refs", body: pkts(oidA+" "+oidB+" HEAD\n", ""), refused: "not under refs/"},
		{name: "ref one level", body: pkts(oidA+" "+oidB+" refs/main\n", ""), refused: "one level"},
		{name: "ref with dot-dot", body: pkts(oidA+" "+oidB+" refs/heads/claude/../main\n", ""), refused: `".."`},
		{name: "ref with a newline", body: pkts(oidA+" "+oidB+" refs/heads/x\n\n", ""), refused: "control"},
		{name: "ref with a space", body: pkts(oidA+" "+oidB+" refs/heads/claude/x refs/heads/main\n", ""), refused: "space"},
		{name: "ref with a star", body: pkts(oidA+" "+oidB+" refs/heads/claude/*\n", ""), refused: "~^:?*["},
		{name: "ref non-ASCII", body: pkts(oidA+" "+oidB+" refs/heads/ma\u0131n\n", ""), refused: "non-ASCII"},
		{name: "ref .lock", body: pkts(oidA+" "+oidB+" refs/heads/main.lock\n", ""), refused: ".lock"},
		{name: "ref dot component", body: pkts(oidA+" "+oidB+" refs/heads/.main\n", ""), refused: `starts with "."`},
		{name: "ref trailing slash", body: pkts(oidA+" "+oidB+" refs/heads/main/\n", ""), refused: `ends with "/"`},
		{name: "ref double slash", body: pkts(oidA+" "+oidB+" refs/heads//main\n", ""), refused: `"//"`},
		{name: "ref @{", body: pkts(oidA+" "+oidB+" refs/heads/a@{1}\n", ""), refused: `"@{"`},
		{name: "push options cut", body: pkts(oidA+" "+oidB+" refs/heads/x\x00push-options\n", "", "ci.skip\n"), refused: "ends before the flush"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.NewReader(tc.body)
			h, err := readHead(body)
			var bad *malformed
			if tc.refused != "" {
				if !errors.As(err, &bad) || !strings.Contains(bad.why, tc.refused) {
					t.Fatalf("readHead = %v, want refused for %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("readHead: %v", err)
			}
			var refs []string
			for _, c := range h.commands {
				refs = append(refs, c.Ref)
			}
			if strings.Join(refs, " ") != strings.Join(tc.refs, " ") || strings.Join(h.pushOptions, " ") != strings.Join(tc.options, " ") {
				t.Errorf("read refs %q and options %q, want %q and %q", refs, h.pushOptions, tc.refs, tc.options)
			}
			// The head is the bytes read, and the body holds the rest.
			rest, _ := io.ReadAll(body)
			if string(h.raw)+string(rest) != tc.body {
				t.Errorf("the head %q and the rest %q are not the body", h.raw, rest)
			}

		})
	}
}

// A read error of the body is returned as it is, not as a refusal.
func TestReadHeadError(t *testing.T) {
	broken := errors.New("connection reset")
	_, err := readHead(io.MultiReader(strings.NewReader("00"), &failing{broken}))
	if !errors.Is(err, broken) {
		t.Errorf("readHead = %v, want the body's error", err)
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// The gate reads no further than the head: a body whose pack never ends is
// not read past the flush.
func TestReadHeadStopsAtTheFlush(t *testing.T) {
	head := pkts(oidA+" "+oidB+" refs/heads/x\x00report-status\n", "")
	body := io.MultiReader(strings.NewReader(head), &failing{errors.New("read past the head")})
	h, err := readHead(body)
	if err != nil || !bytes.Equal(h.raw, []byte(head)) {
		t.Errorf("readHead = %v, %v", h, err)
	}
}
