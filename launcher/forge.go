package launcher

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/forge"
	"github.com/claude-sandbox/claude-sandbox/forgeapi"
	"github.com/claude-sandbox/claude-sandbox/forgepush"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// forgeAuthority makes the launch's certificate authority for the hosts of
// the conf's forge lines, in allowlist mode (ADR 0042); its certificate is
// a fact of the launch, its key stays in this process. nil without forge
// lines, or in open mode, which Resolve refuses with them.
func forgeAuthority(c *sandbox.Conf) (*forge.Authority, []byte, error) {
	hosts, err := sandbox.ForgeHosts(c)
	if err != nil || len(hosts) == 0 || c.NetworkMode() != sandbox.NetworkAllowlist {
		// A bad line is the conf's error, which Resolve reports.
		return nil, nil, nil
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	a, err := forge.NewAuthority(names)
	if err != nil {
		return nil, nil, fmt.Errorf("the certificate authority for the forge lines: %w", err)
	}
	return a, a.PEM(), nil
}

// forgeLines are the forges the conf's forge lines name (HOST or
// HOST:PORT), each once.
func forgeLines(c *sandbox.Conf) []string {
	hosts, _ := sandbox.ForgeHosts(c)
	var out []string
	for _, h := range hosts {
		if !h.API {
			out = append(out, h.Forge)
		}
	}
	return out
}

// ForgeCredential is what a launch finds for one forge line: the
// credential, or why there is none.
type ForgeCredential struct {
	Forge      string
	Credential *forge.Credential
	Err        error
}

// FindForgeCredentials finds the credential of each forge line outside
// (forge.Find), for the launch and doctor.
func FindForgeCredentials(ctx context.Context, c *sandbox.Conf, env launchenv.Env) []ForgeCredential {
	var out []ForgeCredential
	for _, f := range forgeLines(c) {
		fc := ForgeCredential{Forge: f}
		fc.Credential, fc.Err = forge.Find(ctx, env, f)
		out = append(out, fc)
	}
	return out
}

// forgeServer is what ends the TLS of the forge hosts that have a
// credential, for the egress proxy; forges without one are named on
// stderr, and their hosts are tunnelled as any allowed host is. nil when
// no forge has a credential.
func (pr *Prepared) forgeServer(stderr io.Writer) *forge.Server {
	if pr.forge == nil {
		return nil
	}
	hosts, _ := sandbox.ForgeHosts(pr.Conf)
	creds := map[string]*forge.Credential{}
	for _, fc := range FindForgeCredentials(context.Background(), pr.Conf, pr.Launch.Env) {
		if fc.Err != nil {
			fmt.Fprintf(stderr, "claude-sandbox: forge = %s: %v; the session reaches it without a credential\n", fc.Forge, fc.Err)
			continue
		}
		creds[fc.Forge] = fc.Credential
	}
	s := &forge.Server{Authority: pr.forge}
	for _, h := range hosts {
		if c := creds[h.Forge]; c != nil {
			s.Hosts = append(s.Hosts, forge.Host{Name: h.Name, Port: h.Port, Credential: c, API: h.API})
		}
	}
	if len(s.Hosts) == 0 {
		return nil
	}
	return s
}

// endForgeTLS lets the forge server take the egress proxy's tunnels to
// the forge hosts that have a credential, which it reaches as the proxy
// would; every push goes through the admin's ref rules (forgepush), every
// other request through the forge request rules (forgeapi), and what
// either refuses is recorded in the proxy's denial log.
func (pr *Prepared) endForgeTLS(p *egress.Proxy, stderr io.Writer) error {
	if p == nil {
		return nil
	}
	s := pr.forgeServer(stderr)
	if s == nil {
		return nil
	}
	rules, err := pr.Conf.PushRules()
	if err != nil {
		return err
	}
	apiRules, err := pr.Conf.ForgeAPIRules()
	if err != nil {
		return err
	}
	s.Dial = p.Open
	s.Gate = pushGate{gate: forgepush.NewGate(rules), log: p.Log}
	s.Requests = requestGate{gate: forgeapi.NewGate(apiRules), log: p.Log}
	p.Terminator = s
	return nil
}

// requestGate is forgeapi's gate as the forge server calls it, with the
// log its refusals are recorded in.
type requestGate struct {
	gate *forgeapi.Gate
	log  *egress.Log // nil: refusals are answered, not recorded
}

func (g requestGate) Check(api bool, r *http.Request) string { return g.gate.Check(api, r) }

func (g requestGate) Record(host, request, why string) {
	if g.log != nil {
		g.log.RecordRequest(host, request, why)
	}
}

// pushGate is forgepush's gate as the forge server calls it.
type pushGate struct {
	gate *forgepush.Gate
	log  *egress.Log // nil: refusals are answered, not recorded
}

func (g pushGate) Check(ctx context.Context, rt http.RoundTripper, repo *url.URL, body io.Reader) (io.Reader, forge.Refusal, error) {
	forward, refused, err := g.gate.Check(ctx, rt, repo, body)
	if err != nil || refused == nil {
		// A nil *forgepush.Refusal must not become a non-nil interface.
		return forward, nil, err
	}
	return nil, pushRefusal{refused, g.log}, nil
}

// pushRefusal is a refused push with the log it is recorded in.
type pushRefusal struct {
	*forgepush.Refusal
	log *egress.Log
}

func (r pushRefusal) Record() {
	if r.log != nil {
		r.Refusal.Record(r.log)
	}
}
