package packaging

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/google/go-cmp/cmp"
)

// root is the module root, where the feature's sources are.
const root = "../.."

// stageFeature copies what the feature's package is made of into a new
// root, so the CLI runs leave the tree alone: the source metadata and the
// files of features.Dir (not bin/, which a build of the tree may have left).
func stageFeature(t *testing.T) string {
	t.Helper()
	staged := t.TempDir()
	copyFile(t, filepath.Join(root, features.Source), filepath.Join(staged, features.Source))
	entries, err := os.ReadDir(filepath.Join(root, features.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			copyFile(t, filepath.Join(root, features.Dir, e.Name()), filepath.Join(staged, features.Dir, e.Name()))
		}
	}
	if err := Sync(staged); err != nil {
		t.Fatal(err)
	}
	return staged
}

// stageRelease stages the feature with both binaries, as a release
// packages it, and returns its metadata.
func stageRelease(t *testing.T) (features.Metadata, string) {
	t.Helper()
	m, err := features.ReadMetadata(root)
	if err != nil {
		t.Fatal(err)
	}
	staged := stageFeature(t)
	stageBinaries(t, staged)
	return m, staged
}

// stageBinaries builds the binaries into a staged feature, where
// BuildBinaries builds them into the tree.
func stageBinaries(t *testing.T, staged string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(staged, features.Dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, arch := range arches {
		if err := BuildBinary(root, arch, filepath.Join(staged, features.Dir, BinaryName(arch))); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// machines are the ELF machines of arches.
var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkFeatureArchive checks a feature's package, the tar the CLI writes
// (a .tgz, but not compressed): the metadata as the source has it, an
// executable install.sh, and an executable static binary for each arch.
func checkFeatureArchive(t *testing.T, archive io.Reader) {
	t.Helper()
	files := map[string][]byte{}
	modes := map[string]int64{}
	tr := tar.NewReader(archive)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the feature's archive: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], modes[h.Name] = data, h.Mode
	}
	source, err := os.ReadFile(filepath.Join(root, features.Source))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["./devcontainer-feature.json"], source) {
		t.Errorf("the archive's devcontainer-feature.json is not %s", features.Source)
	}
	executables := []string{"./install.sh"}
	for _, arch := range arches {
		executables = append(executables, "./"+BinaryName(arch))
	}
	for _, name := range executables {
		if modes[name]&0o111 != 0o111 {
			t.Errorf("the archive's %s: mode %o, want executable (archive holds %d files)", name, modes[name], len(files))
		}
	}
	for _, arch := range arches {
		f, err := elf.NewFile(bytes.NewReader(files["./"+BinaryName(arch)]))
		if err != nil {
			t.Errorf("the archive's %s: %v", BinaryName(arch), err)
			continue
		}
		if f.Machine != machines[arch] {
			t.Errorf("the archive's %s is for %v, want %v", BinaryName(arch), f.Machine, machines[arch])
		}
		if interp := f.Section(".interp"); interp != nil {
			t.Errorf("the archive's %s is dynamically linked", BinaryName(arch))
		}
	}
}

// `devcontainer features package` puts the binaries in the feature's
// archive, and lists the feature in the collection's metadata.
func TestPackageHoldsTheBinaries(t *testing.T) {
	cli := testCLI(t)
	m, staged := stageRelease(t)
	out := t.TempDir()
	if err := cli.Package(filepath.Join(staged, Collection), out); err != nil {
		t.Fatal(err)
	}
	archive, err := os.Open(filepath.Join(out, "devcontainer-feature-"+m.ID+".tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer archive.Close()
	checkFeatureArchive(t, archive)

	data, err := os.ReadFile(filepath.Join(out, "devcontainer-collection.json"))
	if err != nil {
		t.Fatal(err)
	}
	var collection struct{ Features []features.Metadata }
	if err := json.Unmarshal(data, &collection); err != nil {
		t.Fatalf("devcontainer-collection.json: %v", err)
	}
	if want := []features.Metadata{m}; !cmp.Equal(collection.Features, want) {
		t.Errorf("devcontainer-collection.json lists %v, want %v", collection.Features, want)
	}
}

// The committed README is what `mage feature:docs` writes from the
// metadata and NOTES.md. generate-docs puts nothing in it that varies
// between runs, so the copy in the tree can be checked like this.
func TestReadmeIsGenerated(t *testing.T) {
	cli := testCLI(t)
	staged := stageFeature(t)
	if err := GenerateDocs(cli, staged); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(features.Dir, "README.md")
	want, err := os.ReadFile(filepath.Join(staged, readme))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, readme))
	if err != nil {
		t.Fatalf("%v: run `go run github.com/magefile/mage feature:docs`", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not what generate-docs writes (-generated +committed); edit NOTES.md or %s, then run `go run github.com/magefile/mage feature:docs`:\n%s", readme, features.Source, diff)
	}
}
