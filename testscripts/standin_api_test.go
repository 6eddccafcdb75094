package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
)

// standinAPI serves a scripted stand-in for the Anthropic Messages API:
//
//	standin-api SCRIPT RESULTS URLFILE
//
// SCRIPT is a JSON list of steps, each a shell command for the model's Bash
// tool (or, with "tool", a call of that tool with "input" as its input) and
// an optional After command for the host. Each request that offers the Bash
// tool is answered with the next step as a tool_use, the next
// one being the number of tool results the conversation already holds (so
// retries and side requests do not skip a command); when all have run, or
// for requests without tools, the answer is plain text. When a step's
// result first arrives, its After command runs on the host (sh -c, with the
// stand-in's environment) before anything else happens, so it sees the
// host as that step left it. Every result and After output is written to
// RESULTS as a JSON list indexed like SCRIPT, every request body is
// appended to RESULTS.requests, one per line, and the credential each
// request carried to RESULTS.credentials. The server's URL goes to
// URLFILE. Responses are server-sent events when asked for, as Claude Code
// does.
func standinAPI(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: standin-api SCRIPT RESULTS URLFILE")
		return 2
	}
	h, err := newStandin(args[0], args[1], true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin-api:", err)
		return 1
	}
	return listenAndServe("standin-api", "0", args[2], h)
}

// newStandin is the stand-in API of the script in scriptFile, writing to
// resultsFile; runAfter says whether steps may have After commands.
func newStandin(scriptFile, resultsFile string, runAfter bool) (http.Handler, error) {
	var script []standinStep
	if err := readJSON(scriptFile, &script); err != nil {
		return nil, err
	}
	for i, step := range script {
		if step.After != "" && !runAfter {
			return nil, fmt.Errorf("%s: step %d has an After command, which only the standin-api program runs", scriptFile, i)
		}
		if (step.Tool != "") != (len(step.Input) > 0) || (step.Tool != "" && step.Command != "") {
			return nil, fmt.Errorf("%s: step %d needs a command, or a tool and its input", scriptFile, i)
		}
	}
	results := make([]*standinResult, len(script))
	var mu sync.Mutex
	save := func() {
		b, _ := json.Marshal(results)
		tmp := resultsFile + ".tmp"
		if os.WriteFile(tmp, b, 0o644) == nil {
			os.Rename(tmp, resultsFile)
		}
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		// Like a server or gateway that answers TRACE as RFC 9110 has it:
		// with the request it received, credentials and all.
		if r.Method == http.MethodTrace {
			w.Header().Set("Content-Type", "message/http")
			fmt.Fprintf(w, "TRACE %s HTTP/1.1\r\n", r.RequestURI)
			r.Header.Write(w)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if f, err := os.OpenFile(resultsFile+".requests", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			f.Write(append(bytes.ReplaceAll(body, []byte("\n"), nil), '\n'))
			f.Close()
		}
		if f, err := os.OpenFile(resultsFile+".credentials", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "x-api-key=%s authorization=%s\n", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
			f.Close()
		}
		var req struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Stream bool `json:"stream"`
		}
		json.Unmarshal(body, &req)
		answered := 0
		mu.Lock()
		for _, m := range req.Messages {
			var parts []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				continue
			}
			for _, p := range parts {
				if p.Type != "tool_result" {
					continue
				}
				var i int
				if _, err := fmt.Sscanf(p.ToolUseID, "toolu_case_%d", &i); err == nil && i < len(results) && results[i] == nil {
					results[i] = &standinResult{Output: toolText(p.Content)}
					if script[i].After != "" {
						after, _ := exec.Command("sh", "-c", script[i].After).CombinedOutput()
						results[i].After = string(after)
					}
				}
				answered++
			}
		}
		save()
		mu.Unlock()
		offersBash := false
		for _, t := range req.Tools {
			offersBash = offersBash || t.Name == "Bash"
		}
		var block map[string]any
		var delta map[string]any
		stop := "end_turn"
		if offersBash && answered < len(script) {
			step := script[answered]
			name, input := "Bash", []byte(step.Input)
			if step.Tool != "" {
				name = step.Tool
			} else {
				input, _ = json.Marshal(map[string]string{"command": step.Command, "description": "scripted step"})
			}
			block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_case_%d", answered), "name": name, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
			stop = "tool_use"
		} else {
			block = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": "Done."}
		}
		if !req.Stream {
			content := map[string]any{"type": "text", "text": "Done."}
			if stop == "tool_use" {
				var input any
				json.Unmarshal([]byte(delta["partial_json"].(string)), &input)
				block["input"] = input
				content = block
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin",
				"content": []any{content}, "stop_reason": stop, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(event string, v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		}
		send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin", "content": []any{},
			"stop_reason": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}})
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 1}})
		send("message_stop", map[string]any{"type": "message_stop"})
	}
	save()
	return http.HandlerFunc(handler), nil
}

type standinStep struct {
	Command string          `json:"command"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	After   string          `json:"after,omitempty"`
}

type standinResult struct {
	Output string `json:"output"`
	After  string `json:"after,omitempty"`
}

// toolText flattens a tool_result's content (a string or a list of text
// blocks) to text.
func toolText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	out := ""
	for _, b := range blocks {
		out += b.Text
	}
	return out
}
