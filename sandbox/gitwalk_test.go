package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestFindGitEntries(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(root, p), []byte("gitdir: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("ws/.git/objects/aa")
	mk("ws/.git/modules/sub/.git") // inside a git directory: not walked
	mk("ws/vendor/lib/.git/hooks")
	write("ws/sub/.git")
	mk("ws/a/b/c/d/e/f/.git")
	mk("ws/node_modules/x/node_modules/y")
	write("ws/node_modules/x/node_modules/y/.git")
	mk("elsewhere/deep/.git")
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "ws/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere/deep/.git"), filepath.Join(root, "ws/linked/.git")); err != nil {
		mk("ws/linked")
		if err := os.Symlink(filepath.Join(root, "elsewhere/deep/.git"), filepath.Join(root, "ws/linked/.git")); err != nil {
			t.Fatal(err)
		}
	}
	mk("ws/locked/.git")
	if err := os.Chmod(filepath.Join(root, "ws/locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(root, "ws/locked"), 0o755)

	got, err := findGitEntries([]string{filepath.Join(root, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, map[byte]string{unix.DT_DIR: "dir", unix.DT_REG: "file", unix.DT_LNK: "link"}[e.kind]+" "+strings.TrimPrefix(e.path, root+"/"))
	}
	want := []string{
		"dir ws/.git",
		"dir ws/a/b/c/d/e/f/.git",
		"link ws/linked/.git",
		"file ws/node_modules/x/node_modules/y/.git",
		"file ws/sub/.git",
		"dir ws/vendor/lib/.git",
	}
	if os.Geteuid() == 0 { // root reads a directory without permissions
		want = append(want[:3], append([]string{"dir ws/locked/.git"}, want[3:]...)...)
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("findGitEntries mismatch (-want +got):\n%s", diff)
	}
}

// BenchmarkFindGitEntries times the walk alone over two large trees: one of
// 300k files in 30k directories, and a node_modules-like one (deeply
// nested packages of small directories).
//
//	go test -run '^$' -bench FindGitEntries -benchtime 10x ./sandbox/
func BenchmarkFindGitEntries(b *testing.B) {
	dir := b.TempDir()
	for _, tree := range []struct {
		name  string
		build func(string) (dirs, files int)
	}{{"30k-dirs-300k-files", BuildWideTree}, {"node_modules", BuildNodeModulesTree}} {
		root := filepath.Join(dir, tree.name)
		dirs, files := tree.build(root)
		b.Run(tree.name, func(b *testing.B) {
			for range b.N {
				if _, err := findGitEntries([]string{root}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(dirs), "dirs")
			b.ReportMetric(float64(files), "files")
		})
	}
}

// BuildWideTree makes 30 top directories of 1000 directories of 10 files
// (300k files in 30k directories) with a repository's .git here and there.
func BuildWideTree(root string) (dirs, files int) {
	for i := range 30 {
		for j := range 1000 {
			d := filepath.Join(root, fmt.Sprintf("pkg%02d", i), fmt.Sprintf("mod%04d", j))
			mustMkdir(d)
			dirs++
			for k := range 10 {
				mustWrite(filepath.Join(d, fmt.Sprintf("f%d.go", k)))
				files++
			}
		}
	}
	mustMkdir(filepath.Join(root, ".git/hooks"))
	mustMkdir(filepath.Join(root, "pkg07/mod0042/.git/hooks"))
	return dirs, files
}

// BuildNodeModulesTree makes node_modules as npm leaves it: 1500 packages,
// each with lib/, dist/ and test/ of small files, a third of them with a
// nested node_modules of 5 more packages.
func BuildNodeModulesTree(root string) (dirs, files int) {
	var pkg func(dir string, depth int)
	pkg = func(dir string, depth int) {
		for _, sub := range []string{"lib/util", "dist/esm", "dist/cjs", "test"} {
			mustMkdir(filepath.Join(dir, sub))
			dirs++
			for k := range 8 {
				mustWrite(filepath.Join(dir, sub, fmt.Sprintf("m%d.js", k)))
				files++
			}
		}
		mustWrite(filepath.Join(dir, "package.json"))
		files++
		if depth == 0 {
			return
		}
		for n := range 5 {
			pkg(filepath.Join(dir, "node_modules", fmt.Sprintf("dep%d", n)), depth-1)
		}
	}
	for i := range 1500 {
		depth := 0
		if i%3 == 0 {
			depth = 1
		}
		pkg(filepath.Join(root, "node_modules", fmt.Sprintf("p%04d", i)), depth)
	}
	mustMkdir(filepath.Join(root, ".git/hooks"))
	return dirs, files
}

func mustMkdir(p string) {
	if err := os.MkdirAll(p, 0o755); err != nil {
		panic(err)
	}
}

func mustWrite(p string) {
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		panic(err)
	}
}
