package forgepush

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds on what the gate reads before it decides: the commands and push
// options together, and the number of commands. git's own pushes stay far
// below both (a command line is about 100 bytes).
const (
	maxHead     = 1 << 20
	maxCommands = 4096
	// maxPacket is git's LARGE_PACKET_MAX: a pkt-line's length, its four
	// length digits included.
	maxPacket = 65520
)

// Command is one update a push asks for: OLD and NEW object names (all
// zeros for none) and the ref.
type Command struct {
	Old, New, Ref string
}

func (c Command) creates() bool { return isZero(c.Old) }
func (c Command) deletes() bool { return isZero(c.New) }

func isZero(oid string) bool { return strings.Trim(oid, "0") == "" }

// head is what the gate read of a receive-pack request body: the bytes
// themselves, forwarded unchanged, and what they ask for.
type head struct {
	raw      []byte
	commands []Command
	// what the client asked receive-pack to answer with
	reportStatus, reportStatusV2, sideBand bool
	pushOptions                            []string
}

// malformed is a head the gate refuses to forward, with why.
type malformed struct{ why string }

func (m *malformed) Error() string { return m.why }

func refuse(format string, args ...any) error { return &malformed{fmt.Sprintf(format, args...)} }

// headReader reads pkt-lines from the body one at a time, keeping every
// byte it read, and never reads past the packet it returns.
type headReader struct {
	body io.Reader
	raw  bytes.Buffer
}

// errFlush is the flush packet, "0000".
var errFlush = errors.New("flush")

// packet returns the next packet's payload, errFlush for a flush packet, a
// malformed for what receive-pack would not read as a data packet or
// past the bounds, or the body's read error.
func (h *headReader) packet() ([]byte, error) {
	var size [4]byte
	if err := h.read(size[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(size[:]), 16, 16)
	if err != nil || strings.ToLower(string(size[:])) != string(size[:]) {
		return nil, refuse("a pkt-line length %q is not four hexadecimal digits", size[:])
	}
	switch {
	case n == 0:
		return nil, errFlush
	case n < 4:
		return nil, refuse("a special packet %04x where receive-pack reads commands up to a flush", n)
	case n == 4:
		return nil, refuse("an empty pkt-line among the commands")
	case n > maxPacket:
		return nil, refuse("a pkt-line of %d bytes, past git's %d", n, maxPacket)
	}
	if h.raw.Len()+int(n)-4 > maxHead {
		return nil, refuse("the commands run past %d bytes", maxHead)
	}
	line := make([]byte, n-4)
	if err := h.read(line); err != nil {
		return nil, err
	}
	return line, nil
}

// read fills p from the body and keeps it; the body ending first makes
// the head malformed.
func (h *headReader) read(p []byte) error {
	n, err := io.ReadFull(h.body, p)
	h.raw.Write(p[:n])
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return refuse("the body ends before the flush packet that ends the commands")
	}
	return err
}

// readHead reads the head of a receive-pack request body as receive-pack
// reads it (builtin/receive-pack.c, read_head_info and read_push_options),
// and refuses whatever receive-pack would read differently from the gate
// or the gate cannot decide: a command line it cannot parse, a ref name git
// would not take, a ref named twice, capabilities on any line but the
// first command, a signed push, an unknown object format. The body is read
// only up to the end of the head: the pack, if any, is left in it.
func readHead(body io.Reader) (*head, error) {
	hr := &headReader{body: body}
	h := &head{}
	var caps string
	var shallow []string
	first := true
	seen := map[string]bool{}
	for {
		line, err := hr.packet()
		if errors.Is(err, errFlush) {
			break
		}
		if err != nil {
			return nil, err
		}
		// receive-pack reads with PACKET_READ_CHOMP_NEWLINE.
		line = bytes.TrimSuffix(line, []byte("\n"))
		if oid, ok := bytes.CutPrefix(line, []byte("shallow ")); ok {
			shallow = append(shallow, string(oid))
			continue
		}
		cmd, capList, hasCaps := bytes.Cut(line, []byte{0})
		if hasCaps && !first {
			return nil, refuse("capabilities on a command line other than the first")
		}
		if bytes.IndexByte(capList, 0) >= 0 {
			return nil, refuse("a second NUL in the first command line")
		}
		if string(cmd) == "push-cert" {
			return nil, refuse("signed pushes (push certificates) are not let through")
		}
		if first {
			caps = string(capList)
			first = false
		}
		c, err := parseCommand(string(cmd))
		if err != nil {
			return nil, err
		}
		if seen[c.Ref] {
			return nil, refuse("the ref %s is named in two commands", c.Ref)
		}
		seen[c.Ref] = true
		if len(h.commands) == maxCommands {
			return nil, refuse("more than %d commands", maxCommands)
		}
		h.commands = append(h.commands, c)
	}
	if len(h.commands) == 0 {
		return h, emptyHead(hr, h, shallow)
	}
	if err := h.takeCaps(caps, shallow); err != nil {
		return nil, err
	}
	if h.pushOptions != nil {
		if err := hr.readPushOptions(h); err != nil {
			return nil, err
		}
	}
	h.raw = hr.raw.Bytes()
	return h, nil
}

// emptyHead accepts a body that is one flush packet and nothing after it,
// git's probe before a large push (http.postBuffer), which the gate lets
// through with no command to decide; receive-pack reads no more of a body without commands,
// so anything else in it is refused.
func emptyHead(hr *headReader, h *head, shallow []string) error {
	if len(shallow) > 0 {
		return refuse("shallow lines without a command")
	}
	var b [1]byte
	n, err := io.ReadFull(hr.body, b[:])
	if n > 0 {
		return refuse("bytes after a flush packet with no commands before it")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	h.raw = hr.raw.Bytes()
	return nil
}

// takeCaps reads the capabilities of the first command line: what the
// client wants the answer to look like, and the object format, which
// every object name in the head must be written in.
func (h *head) takeCaps(caps string, shallow []string) error {
	size := 40
	for _, c := range strings.Fields(caps) {
		switch c {
		case "report-status":
			h.reportStatus = true
		case "report-status-v2":
			h.reportStatusV2 = true
		case "side-band-64k":
			h.sideBand = true
		case "push-options":
			h.pushOptions = []string{}
		case "object-format=sha1":
		case "object-format=sha256":
			size = 64
		default:
			if strings.HasPrefix(c, "object-format=") {
				return refuse("an unknown object format %q", strings.TrimPrefix(c, "object-format="))
			}
		}
	}
	for _, c := range h.commands {
		if len(c.Old) != size || len(c.New) != size {
			return refuse("object names of %d digits in a push of %d-digit names", len(c.Old), size)
		}
	}
	for _, oid := range shallow {
		if len(oid) != size || !isHex(oid) {
			return refuse("a shallow line that does not name one object")
		}
	}
	return nil
}

// readPushOptions reads the push options, a list of pkt-lines up to a
// flush packet after the commands, when the client asked for them.
func (hr *headReader) readPushOptions(h *head) error {
	for {
		line, err := hr.packet()
		if errors.Is(err, errFlush) {
			return nil
		}
		if err != nil {
			return err
		}
		h.pushOptions = append(h.pushOptions, string(bytes.TrimSuffix(line, []byte("\n"))))
	}
}

// parseCommand reads "OLD NEW REF" as receive-pack's queue_command does,
// and takes only what git would take: lower-case object names, not both
// zero, and a ref name git's check_refname_format accepts under refs/.
func parseCommand(line string) (Command, error) {
	old, rest, ok1 := strings.Cut(line, " ")
	nw, ref, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isHex(old) || !isHex(nw) || (len(old) != 40 && len(old) != 64) || len(nw) != len(old) {
		return Command{}, refuse("a command line that is not OLD NEW REF")
	}
	c := Command{Old: old, New: nw, Ref: ref}
	if c.creates() && c.deletes() {
		return Command{}, refuse("a command with neither an old nor a new object")
	}
	if why := badRefName(ref); why != "" {
		return Command{}, refuse("a ref name git would not take (%s)", why)
	}
	return c, nil
}

func isHex(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return s != ""
}

// badRefName says why git's check_refname_format would refuse ref, or
// why the gate does: a ref outside refs/, or a byte outside printable
// ASCII, which git takes but a pattern, a log or a terminal could read
// as something else. "" when the name is good.
func badRefName(ref string) string {
	switch {
	case !strings.HasPrefix(ref, "refs/"):
		return "not under refs/"
	case strings.Count(ref, "/") < 2:
		return "one level under refs/"
	case strings.Contains(ref, ".."), strings.Contains(ref, "@{"), strings.Contains(ref, "//"):
		return `".." or "@{" or "//"`
	case strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."):
		return `ends with "/" or "."`
	}
	for _, r := range ref {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`~^:?*[\`, r) {
			return "a space, control, non-ASCII or one of ~^:?*[\\"
		}
	}
	for _, part := range strings.Split(ref, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") || part == "@" {
			return `a component that starts with ".", ends with ".lock" or is "@"`
		}
	}
	return ""
}
