package sandbox

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// policyDocs are the places the docs write out a list of the policy: each
// a document, the passages that hold the list (from one marker to the
// next), and which list.
var policyDocs = []struct {
	doc      string
	passages [][2]string
	list     string
}{
	{"../README.md", [][2]string{{"leave anything in the workspace that later runs outside", "\n"}}, "protected"},
	{"../docs/policy.md", [][2]string{{"- by default: ", "in every subdirectory too"}}, "protected"},
	{"../docs/policy.md", [][2]string{{"| no new Mercurial, Sapling or Jujutsu repository | the warden refuses ", " (any case)"}}, "vcs"},
	{"../docs/policy.md", [][2]string{{"| no file that picks a toolchain's program | the warden refuses ", " (any case)"}}, "selectors"},
	{"../docs/threat-model.md", [][2]string{{"| new ", " refused by the warden wherever the outside sees them;"}}, "vcs+selectors"},
	{"../docs/policy.md", [][2]string{{"In every directory named `.git` the outside sees", "cannot be made or written"}}, "gitdir"},
	{"../docs/policy.md", [][2]string{{"| what git reads in a git directory is read-only | in every git directory: ", " (one list"}}, "gitdir"},
	{"../docs/policy.md", [][2]string{{"Empty tmpfs over each of ", " that exists"}}, "masks"},
	{"../docs/policy.md", [][2]string{{"- from the caller, when set: ", "- set by the launcher: "}}, "allow"},
	{"../docs/policy.md", [][2]string{{"- set by the launcher: ", "Names that change what runs"}}, "launcher"},
	{"../docs/policy.md", [][2]string{{"Names that change what runs can never be passed", "and the names the launcher sets"}}, "never"},
	{"../docs/verify.md", [][2]string{{"| `protected-paths-read-only` |", "\n"}}, "protected"},
	{"../docs/verify.md", [][2]string{
		{"| `run-private` |", "\n"}, {"| `tmp-private` |", "\n"}, {"| `other-homes-hidden` |", "\n"}, {"| `other-projects-hidden` |", "\n"},
	}, "masks"},
	{"../docs/policy.md", [][2]string{{"stayed replaceable (`launcher_settings_link`", "each from the workspace's own directory"}}, "ownstate"},
	{"../docs/verify.md", [][2]string{{"| `claude-state-own` |", "\n"}}, "ownstate"},
	{"../docs/configuration.md", [][2]string{{"| `~/.cache/claude-sandbox/state/NAME-HASH/` | the workspace's own", " bound over"}}, "ownstate"},
	{"../docs/threat-model.md", [][2]string{{"for the\n  folders Claude Code runs or acts on without asking", "which\n  are the workspace's own inside"}}, "ownstate"},
	{"../docs/threat-model.md", [][2]string{{"So is a link at one of the folders", "with `rm` of the link"}}, "ownstate"},
	{"../docs/policy.md", [][2]string{{"| variables | why they may enter |", "\n\n"}}, "gitconfig"},
	{"../docs/policy.md", [][2]string{{"The forge API's default writes", "\n\n## "}}, "forgeapi"},
	{"../promote/curated/SKILL.md", [][2]string{{"Protected workspace paths are read-only: ", "These hold"}}, "protected"},
}

// policyLists are the lists as the policy has them: the names a doc must
// write, those it may write besides, and what a name looks like there.
func policyLists() map[string]struct {
	want, also []string
	token      *regexp.Regexp
} {
	dotPath := regexp.MustCompile(`^\.[^ ]*$`)
	absPath := regexp.MustCompile(`^/[^ ]*$`)
	envName := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)
	claudeDirName := regexp.MustCompile(`^[a-z][a-z-]+$`) // a folder of ~/.claude, written "~/.claude/" first or not
	gitName := regexp.MustCompile(`^[a-z][a-z.-]*$`)
	var protected, gitEntries, gitDir, masked, allow, launcher, never, ownState, carried []string
	var apiWrites []string
	for _, w := range forgeAPIWrites {
		apiWrites = append(apiWrites, w.rule)
	}
	for _, g := range gitConfigCarried {
		carried = append(carried, g.names...)
	}
	for _, p := range claudeOwnState {
		ownState = append(ownState, strings.TrimPrefix(p.rel, ".claude/"))
	}
	for _, p := range defaultProtect {
		protected = append(protected, p.path)
	}
	for _, e := range gitDirEntries {
		gitEntries = append(gitEntries, ".git/"+e.name) // the workspace's own are held as every git directory's
		gitDir = append(gitDir, e.name)
	}
	var vcs, selectors []string
	for _, d := range vcsDirs {
		vcs = append(vcs, d.name)
	}
	for _, f := range selectorFiles {
		selectors = append(selectors, f.name)
	}
	// The README names some of the repositories and files held wherever
	// they are among the protected paths.
	alsoProtected := append(append(append([]string{}, gitEntries...), vcs...), selectors...)
	for _, m := range masks {
		masked = append(masked, m.dir)
	}
	for name := range passedNames {
		allow = append(allow, name)
	}
	for _, p := range passedPrefixes {
		allow = append(allow, p+"*")
	}
	for _, v := range launcherVars {
		launcher = append(launcher, v.name)
	}
	for name := range neverNames {
		never = append(never, name)
	}
	for p := range neverPrefixes {
		never = append(never, p+"*")
	}
	return map[string]struct {
		want, also []string
		token      *regexp.Regexp
	}{
		"protected":     {protected, alsoProtected, dotPath},
		"vcs":           {vcs, nil, dotPath},
		"selectors":     {selectors, nil, regexp.MustCompile(`^\.?[a-z][a-z.-]*$`)},
		"vcs+selectors": {append(append([]string{}, vcs...), selectors...), nil, regexp.MustCompile(`^\.?[a-z][a-z.-]*$`)},
		"gitdir":        {gitDir, nil, gitName},
		"masks":         {masked, nil, absPath},
		"allow":         {allow, nil, envName},
		"launcher":      {launcher, nil, envName},
		"never":         {never, nil, envName},
		"ownstate":      {ownState, nil, claudeDirName},
		"gitconfig":     {carried, nil, regexp.MustCompile(`^[a-z]+\.[A-Za-z.*]+$`)},
		"forgeapi":      {apiWrites, nil, regexp.MustCompile(`^(POST|PUT|PATCH|DELETE|mutation) `)},
	}
}

// TestPolicyDocs keeps the docs' lists of protected paths, masks, the
// environment's allow, launcher and never lists and the git variables the
// home's configuration carries in step with the policy: a
// name the policy has that a list lacks fails, and so does a name a list
// writes that the policy does not have.
func TestPolicyDocs(t *testing.T) {
	lists := policyLists()
	for _, place := range policyDocs {
		b, err := os.ReadFile(place.doc)
		if err != nil {
			t.Fatal(err)
		}
		list := lists[place.list]
		got := map[string]bool{}
		for _, passage := range place.passages {
			text, ok := between(string(b), passage[0], passage[1])
			if !ok {
				t.Errorf("%s: no passage from %q to %q, where the %s list was", place.doc, passage[0], passage[1], place.list)
				continue
			}
			for _, name := range docNames(text, list.token) {
				got[name] = true
			}
		}
		for _, name := range list.want {
			if !got[strings.TrimSuffix(name, "/")] {
				t.Errorf("%s: the %s list does not name %s", place.doc, place.list, name)
			}
			delete(got, strings.TrimSuffix(name, "/"))
		}
		for _, name := range list.also {
			delete(got, strings.TrimSuffix(name, "/"))
		}
		for _, name := range sortedKeys(got) {
			t.Errorf("%s: the %s list names %s, which the policy does not have", place.doc, place.list, name)
		}
	}
}

// TestPolicyDocsGitCount keeps the count of the names held in every git
// directory, which docs/policy.md writes out, in step with gitDirEntries.
func TestPolicyDocsGitCount(t *testing.T) {
	b, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("all %d names refused", len(gitDirEntries)); !strings.Contains(string(b), want) {
		t.Errorf("docs/policy.md does not say %q", want)
	}
}

// between returns the text from the end of from to the next to.
func between(text, from, to string) (string, bool) {
	_, after, ok := strings.Cut(text, from)
	if !ok {
		return "", false
	}
	passage, _, ok := strings.Cut(after, to)
	return passage, ok
}

// docNames are the names in backquotes in text that look like token: a
// trailing slash and a value (NAME=1) dropped.
func docNames(text string, token *regexp.Regexp) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		name, _, _ := strings.Cut(m[1], "=")
		if name = strings.TrimPrefix(strings.TrimSuffix(name, "/"), "~/.claude/"); token.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
