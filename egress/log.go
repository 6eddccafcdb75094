package egress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
)

// Denial is one refused destination, one name the warden refused to
// create (Path), one ref of a push the forge gate refused (Repo, and
// Ref, "" for a push refused before its refs were read), or one request
// to a forge host the forge request rules refused (Host and Request),
// stored as JSON under its field names.
type Denial struct {
	Time      time.Time
	Host      string `json:",omitempty"`
	Port      int    `json:",omitempty"`
	Path      string `json:",omitempty"`
	Repo      string `json:",omitempty"`
	Ref       string `json:",omitempty"`
	Request   string `json:",omitempty"`
	Reason    string
	Workspace string // where the session ran
}

// MaxLogSize is the size past which the log is moved to Path+".1" and
// started anew, so it never holds more than about twice this.
var MaxLogSize int64 = 1 << 20

// Log appends denials to a file, one JSON object per line. It is safe for
// concurrent use. A failing write never stops the proxy: the first failure
// is reported on Errors, later ones are dropped.
type Log struct {
	Path      string
	Workspace string    // recorded with every denial
	Errors    io.Writer // nil: failures are ignored

	mu       sync.Mutex
	reported bool
}

// Record appends a denial of host:port, stamped now.
func (l *Log) Record(host string, port int, reason string) {
	l.write(Denial{Time: time.Now(), Host: host, Port: port, Reason: reason, Workspace: l.Workspace})
}

// RecordPath appends a refusal to create path, stamped now.
func (l *Log) RecordPath(path, reason string) {
	l.write(Denial{Time: time.Now(), Path: path, Reason: reason, Workspace: l.Workspace})
}

// RecordPush appends a refused push of ref to the repository repo,
// stamped now: forgepush.Refusal.Record calls it for each refused ref.
func (l *Log) RecordPush(repo, ref, reason string) {
	l.write(Denial{Time: time.Now(), Repo: repo, Ref: ref, Reason: reason, Workspace: l.Workspace})
}

// RecordRequest appends a refused request (its method and path) to a
// forge host, stamped now.
func (l *Log) RecordRequest(host, request, reason string) {
	l.write(Denial{Time: time.Now(), Host: host, Request: request, Reason: reason, Workspace: l.Workspace})
}

func (l *Log) write(d Denial) {
	// Strings, an int and a current time always marshal. The host, the
	// path and the ref are the sandbox's choice: JSON escapes the controls in them,
	// termtext.JSON what else a terminal showing the file would act on.
	line, _ := json.Marshal(d)
	line = termtext.JSON(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.append(append(line, '\n')); err != nil && !l.reported && l.Errors != nil {
		l.reported = true
		fmt.Fprintf(l.Errors, "claude-sandbox: cannot record refusals in %s: %v\n", l.Path, err)
	}
}

func (l *Log) append(line []byte) error {
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return err
	}
	if fi, err := os.Stat(l.Path); err == nil && fi.Size() >= MaxLogSize {
		if err := os.Rename(l.Path, l.Path+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Recent returns the last n denials recorded at path, oldest first. Missing
// files hold none; lines that are not denials are skipped.
func Recent(path string, n int) ([]Denial, error) {
	var ds []Denial
	for _, p := range []string{path + ".1", path} {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			var d Denial
			if json.Unmarshal([]byte(line), &d) == nil && (d.Host != "" || d.Path != "" || d.Repo != "") {
				ds = append(ds, d)
			}
		}
	}
	return ds[len(ds)-min(len(ds), max(n, 0)):], nil
}

// WriteDenials prints denials as a table, times in local time. The
// sandbox chose the hosts, paths and refs (and the reasons quote them), so every
// field is escaped (termtext): a refusal stays one row, and nothing in it
// reaches the terminal as a command.
func WriteDenials(w io.Writer, ds []Denial) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tREFUSED\tREASON\tWORKSPACE")
	for _, d := range ds {
		var dest string
		switch {
		case d.Repo != "":
			dest = strings.TrimSpace("push " + d.Repo + " " + d.Ref)
		case d.Path != "":
			dest = d.Path
		case d.Request != "":
			dest = "api " + d.Host + " " + d.Request
		default:
			dest = net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Time.Local().Format(time.DateTime), termtext.Escape(dest), termtext.Escape(d.Reason), termtext.Escape(d.Workspace))
	}
	tw.Flush()
}
