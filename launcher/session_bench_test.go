package launcher

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// sessionTurns is how many Bash tool calls the stand-in API asks for in one
// headless session.
const sessionTurns = 20

// BenchmarkSession times a whole headless session of the real Claude Code
// (`claude -p`, bypass permissions) whose model, a stand-in API on
// loopback, asks for 20 Bash tool calls: without any sandbox, through
// the launcher with network = open and network = allowlist (the
// credential proxy carries every API request in both), and through
// claude-sandbox-wrap as the VS Code extension and the Agent SDK start
// Claude Code (WRAPPER BINARY ARGS..., allowlist), interleaved in one
// run. Besides each whole session it reports where the time goes, from
// the stand-in's side:
//
//   - first: from the start of the command to Claude Code's first API
//     request (the launch: Prepare, the services, bwrap, init; with
//     allowlist also the network namespace and its net-init);
//   - turn: from the end of one answer to the next request, averaged over
//     the tool calls (the tool's process inside the sandbox, and the
//     request's way through the credential proxy);
//   - tail: from the last answer to the command's exit;
//   - warden (the sandboxed ways): how many calls the warden carried out in
//     a session, and its busy time, from receiving each call to answering
//     it (a descriptor's hand-over to the task included), as the launcher
//     counts them (warden.Totals). Nearly all of what the sandbox adds to a
//     session is there (docs/policy.md, "What it costs").
//
// The run without a sandbox has the user's whole home (the shell the Bash
// tool starts reads its rc files there); the sandbox's home holds only what
// the policy binds, so the comparison is of the two as users meet them.
// It needs the real Claude Code at /usr/libexec/claude-sandbox/claude and
// bubblewrap; Claude Code keeps the sessions in the running user's home:
//
//	go test -run '^$' -bench 'Session$' -benchtime 3x ./launcher/
func BenchmarkSession(b *testing.B) {
	needRealClaude(b)
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	wrapperBin := filepath.Join(filepath.Dir(launcherBin), layout.WrapperName)
	must(b, os.Symlink(launcherBin, wrapperBin))
	b.Chdir(benchWorkspace(b, dir))
	api := newSessionAPI(b)
	confs := map[string]string{}
	for _, mode := range []string{"open", "allowlist"} {
		confs[mode] = filepath.Join(dir, mode+".conf")
		must(b, os.WriteFile(confs[mode], []byte("network = "+mode+"\n"), 0o644))
	}
	claudeArgs := []string{"-p", "Run the steps.", "--dangerously-skip-permissions"}
	environ := func(run string) []string {
		return []string{"TERM=xterm", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + os.Getenv("HOME"),
			"ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + api.url + "/" + run,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0", "DISABLE_AUTOUPDATER=1"}
	}
	ways := []struct {
		name string
		cmd  func(run string) *exec.Cmd
	}{
		{"direct", func(run string) *exec.Cmd {
			// As the sandbox runs it, but for the sandbox: IS_SANDBOX lets
			// bypass mode run as root, as inside.
			cmd := exec.Command(layout.RealBinary, append([]string{"--no-chrome"}, claudeArgs...)...)
			cmd.Env = append(environ(run), "IS_SANDBOX=1")
			return cmd
		}},
		{"launcher-open", func(run string) *exec.Cmd {
			cmd := exec.Command(launcherBin, claudeArgs...)
			cmd.Env = append(environ(run), "CS_CONF="+confs["open"])
			return cmd
		}},
		{"launcher-allowlist", func(run string) *exec.Cmd {
			cmd := exec.Command(launcherBin, claudeArgs...)
			cmd.Env = append(environ(run), "CS_CONF="+confs["allowlist"])
			return cmd
		}},
		{"wrapper-allowlist", func(run string) *exec.Cmd {
			cmd := exec.Command(wrapperBin, append([]string{layout.RealBinary}, claudeArgs...)...)
			cmd.Env = append(environ(run), "CS_CONF="+confs["allowlist"])
			return cmd
		}},
	}
	type parts struct {
		total, first, turn, tail, wardenBusy time.Duration
		wardenCalls                          int64
	}
	sums := make([]parts, len(ways))
	session := func(j, i int) parts {
		run := fmt.Sprintf("%s-%d", ways[j].name, i)
		cmd := ways[j].cmd(run)
		wardenFile := filepath.Join(dir, "warden-"+run)
		if j > 0 {
			cmd.Env = append(cmd.Env, "CS_BENCH_WARDEN="+wardenFile)
		}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		end := time.Now()
		reqs := api.requests(run)
		if err != nil || len(reqs) != sessionTurns+1 {
			b.Fatalf("%s: %v, %d requests with tools (want %d)\n%s", ways[j].name, err, len(reqs), sessionTurns+1, out)
		}
		var p parts
		if j > 0 {
			counts, err := os.ReadFile(wardenFile)
			must(b, err)
			var busy int64
			if _, err := fmt.Sscanf(string(counts), "%d %d", &p.wardenCalls, &busy); err != nil {
				b.Fatalf("%s: %s: %v", ways[j].name, wardenFile, err)
			}
			p.wardenBusy = time.Duration(busy)
		}
		p.total, p.first, p.tail = end.Sub(start), reqs[0].arrived.Sub(start), end.Sub(reqs[len(reqs)-1].answered)
		for k := 1; k < len(reqs); k++ {
			p.turn += reqs[k].arrived.Sub(reqs[k-1].answered)
		}
		p.turn /= time.Duration(len(reqs) - 1)
		return p
	}
	for j := range ways { // warm the page cache and Claude Code's state once, outside the timing
		session(j, -1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range ways {
			p := session(j, i)
			sums[j].total += p.total
			sums[j].first += p.first
			sums[j].turn += p.turn
			sums[j].tail += p.tail
			sums[j].wardenCalls += p.wardenCalls
			sums[j].wardenBusy += p.wardenBusy
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	for j, w := range ways {
		b.ReportMetric(ms(sums[j].total), w.name+"-ms/op")
		b.ReportMetric(ms(sums[j].first), w.name+"-first-ms")
		b.ReportMetric(ms(sums[j].turn), w.name+"-turn-ms")
		b.ReportMetric(ms(sums[j].tail), w.name+"-tail-ms")
		if j > 0 {
			b.ReportMetric(float64(sums[j].wardenCalls)/float64(b.N), w.name+"-warden-calls")
			b.ReportMetric(ms(sums[j].wardenBusy), w.name+"-warden-ms")
		}
	}
	b.ReportMetric(float64(sums[1].total)/float64(sums[0].total), "launcher-open/direct")
	b.ReportMetric(float64(sums[2].total)/float64(sums[0].total), "launcher-allowlist/direct")
	b.ReportMetric(float64(sums[3].total)/float64(sums[0].total), "wrapper-allowlist/direct")
}

// sessionAPI is a stand-in for the Messages API: every request that offers
// the Bash tool is answered with one more Bash call until the conversation
// holds sessionTurns results, then with text; requests without tools (side
// requests) with text. Requests are kept by the first path element, one
// per session.
type sessionAPI struct {
	url  string
	mu   sync.Mutex
	runs map[string][]sessionRequest
}

type sessionRequest struct{ arrived, answered time.Time }

func newSessionAPI(b *testing.B) *sessionAPI {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(b, err)
	a := &sessionAPI{url: "http://" + ln.Addr().String(), runs: map[string][]sessionRequest{}}
	srv := &http.Server{Handler: http.HandlerFunc(a.serve)}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return a
}

// requests are the session's requests that offered tools, in order.
func (a *sessionAPI) requests(run string) []sessionRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	reqs := a.runs[run]
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].arrived.Before(reqs[j].arrived) })
	return reqs
}

func (a *sessionAPI) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	offersBash := false
	for _, t := range req.Tools {
		offersBash = offersBash || t.Name == "Bash"
	}
	results := 0
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		json.Unmarshal(m.Content, &blocks) // a plain string has none
		for _, bl := range blocks {
			if bl.Type == "tool_result" {
				results++
			}
		}
	}
	block := map[string]any{"type": "text", "text": ""}
	delta := map[string]any{"type": "text_delta", "text": "Done."}
	stop := "end_turn"
	if offersBash && results < sessionTurns {
		input, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo step-%d", results), "description": "a step"})
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_bench_%d", results), "name": "Bash", "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench", "content": []any{},
		"stop_reason": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 1}})
	send("message_stop", map[string]any{"type": "message_stop"})
	if offersBash {
		run, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		a.mu.Lock()
		a.runs[run] = append(a.runs[run], sessionRequest{arrived: arrived, answered: time.Now()})
		a.mu.Unlock()
	}
}
