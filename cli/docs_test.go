package cli

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCommandsDoc keeps docs/commands.md in step with the registry: a
// section for every command that names each of its flags, and no section
// or flag the code lacks.
func TestCommandsDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	heading := regexp.MustCompile("(?m)^### `([a-z-]+)`$")
	locs := heading.FindAllStringSubmatchIndex(string(doc), -1)
	for i, loc := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body, _, _ := strings.Cut(string(doc[loc[1]:end]), "\n## ")
		sections[string(doc[loc[2]:loc[3]])] = body
	}
	flagRef := regexp.MustCompile("`(--?[a-z][a-z0-9-]*)")
	for _, c := range Commands() {
		body, ok := sections[c.Name]
		if !ok {
			t.Errorf("docs/commands.md has no section ### `%s`", c.Name)
			continue
		}
		delete(sections, c.Name)
		named := map[string]bool{}
		for _, m := range flagRef.FindAllStringSubmatch(body, -1) {
			named[m[1]] = true
		}
		for _, f := range c.Flags {
			if !named[f] {
				t.Errorf("docs/commands.md: the section on %s does not name its flag `%s`", c.Name, f)
			}
			delete(named, f)
		}
		for f := range named {
			t.Errorf("docs/commands.md: the section on %s names `%s`, which is not one of its flags", c.Name, f)
		}
	}
	for name := range sections {
		t.Errorf("docs/commands.md has a section on %s, which is not a command", name)
	}
}

// TestRegistry checks what the usage and --help rely on: unique names, a
// summary each, and a value name for every flag that takes a value.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range registry() {
		if seen[c.name] {
			t.Errorf("two commands are named %s", c.name)
		}
		seen[c.name] = true
		if c.summary == "" {
			t.Errorf("%s has no summary", c.name)
		}
		fs, _ := c.flagSet(env{})
		fs.VisitAll(func(f *flag.Flag) {
			if arg, _ := flag.UnquoteUsage(f); arg != "" && arg == strings.ToLower(arg) {
				t.Errorf("%s --%s: the usage names no `VALUE` (the help would say %q)", c.name, f.Name, arg)
			}
		})
	}
}
