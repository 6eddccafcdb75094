package launcher

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// testPrepared is a launch settled as settle would, for a workspace with a
// git directory and a home in a temporary directory, the login proxied
// with the placeholder token, under conf.
func testPrepared(t *testing.T, conf string) *Prepared {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sandbox.ParseConf("test.conf", strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	pr := &Prepared{Conf: c, Credential: &authproxy.Credential{Kind: authproxy.APIKey, Source: "ANTHROPIC_API_KEY"},
		Launch: sandbox.Launch{User: "u", Home: home, Shell: "/bin/sh", Cwd: ws, Env: launchenv.Read([]string{"TERM=xterm"}),
			RealBinary: "/usr/libexec/claude-sandbox/claude", Launcher: "/usr/libexec/claude-sandbox/claude-sandbox", Masks: []string{"/run", "/tmp"}},
		Running: running{gateway: gateway{Token: "sk-ant-placeholder", Addr: "127.0.0.1:0"}}}
	if pr.Resolved, err = sandbox.Resolve(pr.Conf, pr.Session, pr.facts()); err != nil {
		t.Fatal(err)
	}
	return pr
}

// planVar is the value the plan gives Claude's environment for name.
func planVar(plan *sandbox.Plan, name string) string {
	for _, v := range plan.Env {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// The plan is assembled from the one value settleRunning returns, and the
// services read the same: in open mode the credential proxy's listener is
// the address Claude is given, with the session token it keeps.
func TestAssembleGetsRunning(t *testing.T) {
	pr := testPrepared(t, "network = open\n")
	bg, authL, err := pr.assemble(plainLaunch, launchenv.Given{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer authL.Close()
	if bg != nil || authL == nil {
		t.Fatalf("a plain launch in open mode: background %v, listener %v; want none, and one", bg, authL)
	}
	addr := authL.Addr().String()
	if got := planVar(pr.Plan, "ANTHROPIC_BASE_URL"); got != "http://"+addr {
		t.Errorf("the plan gives Claude ANTHROPIC_BASE_URL=%q; want the listener's, http://%s", got, addr)
	}
	if got := planVar(pr.Plan, "ANTHROPIC_AUTH_TOKEN"); got != "sk-ant-placeholder" {
		t.Errorf("the plan gives Claude ANTHROPIC_AUTH_TOKEN=%q; want the session token", got)
	}
	if pr.Running.gateway != (gateway{Token: "sk-ant-placeholder", Addr: addr}) || pr.Running.shared {
		t.Errorf("the services read %+v; want the gateway the plan has", pr.Running)
	}
	if auth, _ := newProxies(pr, connBounds{}, io.Discard); auth == nil || auth.Placeholder != "sk-ant-placeholder" {
		t.Errorf("the credential proxy: %+v; want one accepting the plan's token", auth)
	}
}

// A control launch of background sessions: the plan binds the shared
// socket directory that the warden's siblings name, and the launch keeps
// a gateway of its own.
func TestAssembleGetsBackground(t *testing.T) {
	pr := testPrepared(t, "network = open\n")
	bg, authL, err := pr.assemble(controlLaunch, launchenv.Given{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer authL.Close()
	t.Cleanup(func() { os.RemoveAll(bg.dirs.dir) })
	if pr.Running.background == nil || pr.Running.siblings == nil || pr.Running.background.SocketDir != pr.Running.siblings.Shared {
		t.Fatalf("running %+v; want the plan's and the warden's shared directory, the same", pr.Running)
	}
	bound := false
	for _, m := range pr.Plan.Mounts {
		bound = bound || m.Source == pr.Running.background.SocketDir && m.Dest == sandbox.DaemonSocketDir(os.Getuid())
	}
	if !bound {
		t.Errorf("the plan does not bind %s at %s", pr.Running.background.SocketDir, sandbox.DaemonSocketDir(os.Getuid()))
	}
	if got := planVar(pr.Plan, "ANTHROPIC_BASE_URL"); got != "http://"+authL.Addr().String() {
		t.Errorf("a control launch's ANTHROPIC_BASE_URL=%q; want its own listener's", got)
	}
}

// A client takes the service's gateway: in open mode the service's token
// and address (shared, no proxy of its own), in allowlist mode the token
// and its own proxy inside; one that proxies no login reads nothing.
func TestAdoptGateway(t *testing.T) {
	b := &bgLaunch{dirs: &bgDirs{dir: t.TempDir()}}
	own := gateway{Token: "own", Addr: "127.0.0.1:0"}
	if _, _, err := b.adoptGateway(own, sandbox.NetworkOpen); err == nil || !strings.Contains(err.Error(), "background sessions are refused") {
		t.Errorf("no service gateway: %v; want the refusal", err)
	}
	if g, shared, err := b.adoptGateway(gateway{}, sandbox.NetworkOpen); err != nil || g != (gateway{}) || shared {
		t.Errorf("no login proxied: %+v, %v, %v; want its own, nothing shared", g, shared, err)
	}
	service := &bgLaunch{dirs: b.dirs, service: true}
	if err := service.publishGateway(gateway{Token: "service", Addr: "127.0.0.1:4242"}); err != nil {
		t.Fatal(err)
	}
	if g, shared, err := b.adoptGateway(own, sandbox.NetworkOpen); err != nil || g != (gateway{Token: "service", Addr: "127.0.0.1:4242"}) || !shared {
		t.Errorf("open: %+v, %v, %v; want the service's, shared", g, shared, err)
	}
	if g, shared, err := b.adoptGateway(own, sandbox.NetworkAllowlist); err != nil || g != (gateway{Token: "service", Addr: "127.0.0.1:0"}) || shared {
		t.Errorf("allowlist: %+v, %v, %v; want the service's token at its own address, not shared", g, shared, err)
	}
}
