package authproxy_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// streamSize is the long answer the benchmark streams; eventSize is what the
// upstream writes and flushes at a time.
const (
	streamSize = 10 << 20
	eventSize  = 4 << 10
)

// sseUpstream answers with server-sent events: one at once, or after the
// query's delay (the API's time to first token), then size bytes more.
func sseUpstream(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil {
		time.Sleep(d)
	}
	f := w.(http.Flusher)
	io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
	f.Flush()
	size, _ := strconv.Atoi(r.URL.Query().Get("size"))
	event := []byte("data: " + strings.Repeat("x", eventSize-8) + "\n\n")
	for sent := 0; sent < size; sent += len(event) {
		w.Write(event)
		f.Flush()
	}
}

// timed is one kind of request's durations, straight to the upstream and
// through the proxy.
type timed struct{ direct, proxied []time.Duration }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func (t *timed) ratio() float64 { return float64(median(t.proxied)) / float64(median(t.direct)) }

// BenchmarkAuthProxy times the same requests straight to an upstream and
// through the proxy, alternating in one run so that both meet the same load,
// and reports proxied/direct ratios of the medians: time to first byte
// without and with a 20 ms first-token delay, and the whole of a 10 MB stream.
func BenchmarkAuthProxy(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(sseUpstream))
	defer up.Close()
	u, err := url.Parse(up.URL)
	if err != nil {
		b.Fatal(err)
	}
	c, err := authproxy.Find(launchenv.Read([]string{"ANTHROPIC_API_KEY=sk-ant-api03-bench"}), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go (&authproxy.Server{Upstream: u, Credential: c, Placeholder: placeholder}).Serve(l)
	proxy := "http://" + l.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()

	// get returns the time to the first byte of the answer, or to its end.
	get := func(base, query string, whole bool) time.Duration {
		req, err := http.NewRequest("POST", base+"/v1/messages?"+query, strings.NewReader(`{"stream":true}`))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+placeholder)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
			b.Fatal(err)
		}
		first := time.Since(start)
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %s, %v", base, resp.Status, err)
		}
		if !whole {
			return first
		}
		if n < streamSize {
			b.Fatalf("%s: only %d bytes arrived", base, n)
		}
		return time.Since(start)
	}
	var ttfb, ttfb20, stream timed
	run := func(t *timed, query string, whole bool, proxyFirst bool) {
		if proxyFirst {
			t.proxied = append(t.proxied, get(proxy, query, whole))
			t.direct = append(t.direct, get(up.URL, query, whole))
		} else {
			t.direct = append(t.direct, get(up.URL, query, whole))
			t.proxied = append(t.proxied, get(proxy, query, whole))
		}
	}
	sizeQuery := "size=" + strconv.Itoa(streamSize)
	run(&stream, sizeQuery, true, false) // opens the keep-alive connections
	stream = timed{}
	for i := 0; b.Loop(); i++ {
		run(&ttfb, "", false, i%2 == 0)
		run(&ttfb20, "delay=20ms", false, i%2 == 0)
		run(&stream, sizeQuery, true, i%2 == 0)
	}
	b.ReportMetric(ttfb.ratio(), "ttfb-ratio")
	b.ReportMetric(float64(median(ttfb.proxied)-median(ttfb.direct))/float64(time.Microsecond), "ttfb-added-us")
	b.ReportMetric(ttfb20.ratio(), "ttfb-ratio-20ms")
	b.ReportMetric(stream.ratio(), "stream-ratio")
}
