package features

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const root = ".."

// The feature's copy of the metadata is the source, byte for byte:
// `mage feature:sync` (and every packaging) rewrites it.
func TestCopyMatchesSource(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(root, Copy))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, cp) {
		t.Errorf("%s differs from %s; edit %s and run `go run github.com/magefile/mage feature:sync`", Copy, Source, Source)
	}
}

// The schemas in testdata are the spec's, unchanged.
func TestSchemaCopies(t *testing.T) {
	for _, name := range []string{"devContainerFeature.schema.json", "devContainer.base.schema.json"} {
		shared, err := os.ReadFile(filepath.Join(root, "..", "shared", "schemas", name))
		if err != nil {
			t.Skipf("no workplace copy to compare with: %v", err)
		}
		ours, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shared, ours) {
			t.Errorf("testdata/%s differs from ../shared/schemas/%s", name, name)
		}
	}
}

// The metadata validates against the devcontainer spec's feature schema,
// and every option has a default.
func TestMetadataValidates(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile(filepath.Join("testdata", "devContainerFeature.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("%s does not validate against the feature schema:\n%v", Source, err)
	}
	var m struct {
		Options map[string]struct {
			Type    string `json:"type"`
			Default any    `json:"default"`
		} `json:"options"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for name, o := range m.Options {
		if o.Default == nil {
			t.Errorf("option %s has no default: defaults must give the strict policy", name)
		}
	}
}

// The feature starts the installed launcher by the layout's path.
func TestPostStartIsTheLayouts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		PostStart string `json:"postStartCommand"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.PostStart != layout.ContainerStartCommand {
		t.Errorf("%s: postStartCommand is %q, the layout's is %q", Source, m.PostStart, layout.ContainerStartCommand)
	}
}
