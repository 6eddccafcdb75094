package packaging

import (
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/google/go-containerregistry/pkg/registry"
)

// featureManifest is what `devcontainer features info manifest` prints
// with --output-format json.
type featureManifest struct {
	Manifest struct {
		Layers []struct {
			MediaType   string            `json:"mediaType"`
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"layers"`
		Annotations map[string]string `json:"annotations"`
	} `json:"manifest"`
	CanonicalID string `json:"canonicalId"`
}

// infoJSON runs `devcontainer features info MODE REF` and decodes its JSON.
func infoJSON(t *testing.T, cli CLI, mode, ref string, v any) {
	t.Helper()
	out, err := cli.run("", "features", "info", mode, ref, "--output-format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("devcontainer features info %s %s: %v\n%s", mode, ref, err, out)
	}
}

// semverTags are the tags a publish of version gives: 0, 0.1, 0.1.0, latest.
func semverTags(version string) []string {
	parts := strings.SplitN(version, ".", 3)
	return []string{parts[0], parts[0] + "." + parts[1], version, "latest"}
}

// The feature, published by the pinned devcontainer CLI to an OCI registry
// on loopback, reads back as a dev container build would fetch it: the
// manifest names our feature and version, every semver tag leads to it,
// and its layer holds both binaries. Publishing the same version again
// fails rather than doing nothing quietly.
func TestPublishToLocalRegistry(t *testing.T) {
	cli := testCLI(t)
	m, staged := stageRelease(t)
	src := filepath.Join(staged, Collection)

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(failureLog(t, "registry"), "", 0))))
	defer srv.Close()
	// localhost, not the listener's 127.0.0.1: see CLI.Publish.
	host := fmt.Sprintf("localhost:%d", srv.Listener.Addr().(*net.TCPAddr).Port)
	repo := host + "/" + Namespace + "/" + m.ID

	start := time.Now()
	published, err := publish(cli, src, host, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("published in %v: %+v", time.Since(start).Round(time.Millisecond), published)
	if published.Version != m.Version || !slices.Equal(published.Tags, semverTags(m.Version)) {
		t.Errorf("publish reported version %s, tags %v; want %s, %v", published.Version, published.Tags, m.Version, semverTags(m.Version))
	}

	var manifest featureManifest
	infoJSON(t, cli, "manifest", repo+":"+m.Version, &manifest)
	var meta features.Metadata
	if err := json.Unmarshal([]byte(manifest.Manifest.Annotations["dev.containers.metadata"]), &meta); err != nil {
		t.Fatalf("the manifest's dev.containers.metadata: %v", err)
	}
	if meta != m {
		t.Errorf("the manifest names %+v, want %+v", meta, m)
	}
	if want := repo + "@" + published.Digest; manifest.CanonicalID != want {
		t.Errorf("canonical id %s, want %s", manifest.CanonicalID, want)
	}

	var tags struct {
		PublishedTags []string `json:"publishedTags"`
	}
	infoJSON(t, cli, "tags", repo, &tags)
	if got, want := slices.Sorted(slices.Values(tags.PublishedTags)), slices.Sorted(slices.Values(semverTags(m.Version))); !slices.Equal(got, want) {
		t.Errorf("the registry has tags %v, want %v", got, want)
	}
	for _, tag := range semverTags(m.Version) {
		var byTag featureManifest
		infoJSON(t, cli, "manifest", repo+":"+tag, &byTag)
		if byTag.CanonicalID != manifest.CanonicalID {
			t.Errorf("tag %s is %s, want %s", tag, byTag.CanonicalID, manifest.CanonicalID)
		}
	}

	if len(manifest.Manifest.Layers) != 1 || manifest.Manifest.Layers[0].MediaType != "application/vnd.devcontainers.layer.v1+tar" {
		t.Fatalf("the manifest's layers are %+v, want one devcontainers tar", manifest.Manifest.Layers)
	}
	blob, err := http.Get(srv.URL + "/v2/" + Namespace + "/" + m.ID + "/blobs/" + manifest.Manifest.Layers[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Body.Close()
	if blob.StatusCode != http.StatusOK {
		t.Fatalf("fetching the layer: %s", blob.Status)
	}
	checkFeatureArchive(t, blob.Body)

	if _, err := publish(cli, src, host, m); err == nil || !strings.Contains(err.Error(), "already has that version") {
		t.Errorf("publishing %s again: %v, want an error saying the registry has it", m.Version, err)
	}
}
