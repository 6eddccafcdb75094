package launcher

import (
	"io"
	"net"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

// running is what a launch's plan holds that only a running service or
// listener tells: the gateway Claude reaches its API through, and for
// background sessions what the sandbox shares with its siblings. One
// function settles it (settleRunning), Assemble gets it with the launch's
// facts (launch), and the services read it from the same value.
type running struct {
	// gateway is the session token Claude gets in place of its login and,
	// in open mode, the credential proxy's address; zero when the login is
	// not proxied.
	gateway gateway
	// shared says the gateway is the background service's (open mode):
	// the launch runs no credential proxy of its own, and Claude Code's
	// sessions keep the gateway of their client.
	shared bool
	// background is the plan's part of a launch of background sessions,
	// siblings the warden's; nil in every other launch.
	background *sandbox.Background
	siblings   *warden.Siblings
}

// launch is l with what r tells.
func (r running) launch(l sandbox.Launch) sandbox.Launch {
	l.AuthToken, l.AuthAddr, l.Background = r.gateway.Token, r.gateway.Addr, r.background
	return l
}

// settleRunning settles, from the gateway settle expected, what only a
// running service or listener tells, in order: for a launch of background
// sessions its shared directories and, for a client, the service running
// and its gateway; then in open mode the credential proxy's listener,
// whose address the gateway names. It returns the one value, and what the
// launch owns: the background launch (nil for a plain one) and the
// listener (nil but in open mode); on an error, nothing stays open.
func (pr *Prepared) settleRunning(r role, env launchenv.Given, stderr io.Writer) (running, *bgLaunch, net.Listener, error) {
	run := running{gateway: pr.Running.gateway}
	var bg *bgLaunch
	if r != plainLaunch {
		var err error
		if bg, err = startBackground(pr, r, env, stderr); err != nil {
			return running{}, nil, nil, err
		}
		run.background, run.siblings = bg.shared()
		if r == clientLaunch {
			if run.gateway, run.shared, err = bg.adoptGateway(run.gateway, pr.Conf.NetworkMode()); err != nil {
				bg.close()
				return running{}, nil, nil, err
			}
		}
	}
	authL, err := listenCredentialProxy(pr, run.shared)
	if err != nil {
		bg.close()
		return running{}, nil, nil, err
	}
	if authL != nil {
		run.gateway.Addr = authL.Addr().String()
	}
	return run, bg, authL, nil
}
