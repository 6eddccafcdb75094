package forgepush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxAdvertisement bounds what the gate reads of the forge's ref
// advertisement: the service line and the first ref line, which carries
// the capabilities (symref=HEAD:...) and is at most one pkt-line.
const maxAdvertisement = 2 * maxPacket

// learnDefaultBranch asks the forge which branch HEAD names: the symref
// capability of upload-pack's protocol v0 advertisement (no Git-Protocol
// header is sent, so the forge answers v0). It returns the ref, "" when the
// forge names none (an empty repository), or why it could not tell.
func learnDefaultBranch(ctx context.Context, forge http.RoundTripper, repo *url.URL) (string, error) {
	u := under(repo, "/info/refs")
	u.RawQuery = "service=git-upload-pack"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "git/claude-sandbox")
	resp, err := forge.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the forge answered %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-git-upload-pack-advertisement" {
		return "", fmt.Errorf("the forge answered %q, not a ref advertisement", ct)
	}
	hr := &headReader{body: io.LimitReader(resp.Body, maxAdvertisement)}
	service, err := hr.packet()
	if err != nil || string(service) != "# service=git-upload-pack\n" {
		return "", errors.New("the forge's advertisement does not start with its service line")
	}
	if _, err := hr.packet(); !errors.Is(err, errFlush) {
		return "", errors.New("the forge's advertisement has no flush after its service line")
	}
	first, err := hr.packet()
	if errors.Is(err, errFlush) {
		return "", nil
	}
	if err != nil {
		return "", errors.New("the forge's advertisement has no first ref line")
	}
	_, caps, _ := bytes.Cut(first, []byte{0})
	for _, c := range strings.Fields(string(caps)) {
		if ref, ok := strings.CutPrefix(c, "symref=HEAD:"); ok {
			if badRefName(ref) != "" || !strings.HasPrefix(ref, "refs/heads/") {
				return "", fmt.Errorf("the forge names %q as HEAD", ref)
			}
			return ref, nil
		}
	}
	return "", nil
}

// under is the URL of tail in the repository, its path spelled as the
// push's was (escapes kept, no dot segment resolved), so the forge finds
// the repository the push goes to however it reads a path.
func under(repo *url.URL, tail string) url.URL {
	u := *repo
	u.Path = strings.TrimSuffix(u.Path, "/") + tail
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + tail
	}
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return u
}
