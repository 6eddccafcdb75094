package forgepush

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
)

// Refusal is a push the gate does not forward, and why: for the push as a
// whole (a malformed head, push options, a default branch the gate could
// not learn), or for each ref it refused. A push is atomic at the gate:
// one refused ref refuses all of them, and the others are answered as
// refused with the rest of the push.
type Refusal struct {
	repo string
	head *head // nil when the head was malformed
	why  string
	refs []verdict // by command, in the head's order
}

// atomic is the reason given for a ref the rules let through in a push
// the gate refused for another.
const atomic = "refused with the rest of the push, which is all or nothing"

func (r *Refusal) anyRefused() bool {
	for _, v := range r.refs {
		if v.why != "" {
			return true
		}
	}
	return false
}

// summary is the reason of the push, or of its first refused ref.
func (r *Refusal) summary() string {
	for _, f := range r.Refused() {
		if f.Reason != "" {
			return strings.TrimPrefix(f.Reason, "malformed push: ")
		}
	}
	return r.why
}

// RefRefusal is one ref of a refused push and why, as the denials log
// records it; Ref is "" for a push refused before its refs were read.
type RefRefusal struct {
	Ref, Reason string
}

// Refused lists what the gate refused, each ref refused for a reason of
// its own (or every ref, for a reason of the whole push); refs let
// through by the rules but refused with the rest are left out.
func (r *Refusal) Refused() []RefRefusal {
	if r.head == nil {
		return []RefRefusal{{Reason: "malformed push: " + r.why}}
	}
	var out []RefRefusal
	for i, c := range r.head.commands {
		switch {
		case r.why != "":
			out = append(out, RefRefusal{c.Ref, r.why})
		case r.refs[i].why != "":
			out = append(out, RefRefusal{c.Ref, r.refs[i].why})
		}
	}
	return out
}

// Recorder keeps refused pushes: egress.Log, whose denials
// `claude-sandbox denials` lists.
type Recorder interface {
	RecordPush(repo, ref, reason string)
}

// Record puts each refused ref, with its reason, in the log.
func (r *Refusal) Record(log Recorder) {
	for _, f := range r.Refused() {
		log.RecordPush(r.repo, f.Ref, f.Reason)
	}
}

// WriteResponse answers the push as receive-pack would, so git prints
// "! [remote rejected] REF (claude-sandbox: REASON)" for each ref and the
// push fails with git's own exit code: "unpack ok" and an "ng" line for
// every command, in side-band 1 when the client asked for side-band-64k.
// A push whose head could not be read, or whose client asked for no
// report, is answered 403 with the reason as text.
func (r *Refusal) WriteResponse(w http.ResponseWriter) {
	if r.head == nil || !(r.head.reportStatus || r.head.reportStatusV2) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "claude-sandbox: push refused: %s\n", termtext.Escape(r.summary()))
		return
	}
	var report strings.Builder
	report.WriteString(pktLine("unpack ok\n"))
	for i, c := range r.head.commands {
		// A reason may quote the forge's answer: git prints it on the
		// user's terminal.
		why := termtext.Escape(firstOf(r.why, firstOf(r.refs[i].why, atomic)))
		report.WriteString(pktLine("ng " + c.Ref + " claude-sandbox: " + why + "\n"))
	}
	report.WriteString("0000")
	body := report.String()
	if r.head.sideBand {
		body = sideBand(body)
	}
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(body))
}

// pktLine frames s as one pkt-line. The gate's reasons and the refs it
// read are each well inside one packet.
func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// sideBand carries data in band 1, as receive-pack's send_sideband does,
// and ends with a flush packet.
func sideBand(data string) string {
	const most = maxPacket - 4 - 1
	var b strings.Builder
	for len(data) > 0 {
		n := min(len(data), most)
		b.WriteString(pktLine("\x01" + data[:n]))
		data = data[n:]
	}
	b.WriteString("0000")
	return b.String()
}
