package sandbox

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigurationDocs keeps the key table of docs/configuration.md in step
// with confKeys: a row for every key and a key for every row, the
// repeatable column as the kind says, a flag's value as "(flag)", the modes
// and the default named, and a retired key's refusal quoted.
func TestConfigurationDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| key | value | repeatable | meaning |\n| --- | --- | --- | --- |\n")
	if !ok {
		t.Fatal("docs/configuration.md has no key table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := keyRows(t, table)
	for _, k := range confKeys {
		row, ok := rows[k.Name]
		if !ok {
			t.Errorf("docs/configuration.md has no row for the conf key %s", k.Name)
			continue
		}
		checkKeyRow(t, k, row[0], row[1], row[2])
	}
}

// keyRows are the key table's rows by key: value, repeatable, meaning.
func keyRows(t *testing.T, table string) map[string][]string {
	t.Helper()
	rowRE := regexp.MustCompile("^\\| `([^`]+)` \\| (.*) \\| (.*) \\| (.*) \\|$")
	rows := map[string][]string{}
	for _, l := range strings.Split(table, "\n") {
		m := rowRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("docs/configuration.md: a key table row not of the form | `key` | value | repeatable | meaning |: %s", l)
			continue
		}
		if _, ok := LookupConfKey(m[1]); !ok {
			t.Errorf("docs/configuration.md has a row for %s, which is not a conf key", m[1])
		}
		rows[m[1]] = m[2:]
	}
	return rows
}

// checkKeyRow checks one key's row against the key.
func checkKeyRow(t *testing.T, k ConfKey, value, repeatable, meaning string) {
	t.Helper()
	want := map[KeyKind]string{KeySingle: "no", KeyRepeatable: "yes", KeyFlag: "no", KeyRetired: "—"}[k.Kind]
	if repeatable != want {
		t.Errorf("docs/configuration.md: %s: repeatable is %q, want %q", k.Name, repeatable, want)
	}
	if (k.Kind == KeyFlag) != (value == "(flag)") {
		t.Errorf("docs/configuration.md: %s: the value is %q; a bare flag's, and only its, is \"(flag)\"", k.Name, value)
	}
	for _, v := range k.Values {
		if !strings.Contains(value, "`"+v+"`") {
			t.Errorf("docs/configuration.md: %s: the value does not name the mode `%s`", k.Name, v)
		}
	}
	if k.Default != "" && !strings.Contains(meaning, "default `"+k.Default+"`") {
		t.Errorf("docs/configuration.md: %s: the meaning does not say default `%s`", k.Name, k.Default)
	}
	if k.Kind == KeyRetired {
		_, err := ParseConf("c", strings.NewReader(k.Name))
		if msg := strings.TrimPrefix(err.Error(), "c:1: "); !strings.Contains(meaning, "`"+msg+"`") {
			t.Errorf("docs/configuration.md: %s: the meaning does not quote the refusal `%s`", k.Name, msg)
		}
	}
}

// A single-valued key's default is one of its modes, and every key that is
// not retired says where its value goes.
func TestConfKeysAreWhole(t *testing.T) {
	for _, k := range confKeys {
		if k.Kind == KeyRetired {
			if k.Why == "" || k.Instead == "" || k.stores() {
				t.Errorf("%s: a retired key says why and what to write instead, and stores nothing", k.Name)
			}
			continue
		}
		if !k.stores() {
			t.Errorf("%s: stores its value nowhere", k.Name)
		}
		if k.Default != "" && (k.Kind != KeySingle || len(k.Values) > 0 && !slices.Contains(k.Values, k.Default)) {
			t.Errorf("%s: default %q is not one of its modes %v", k.Name, k.Default, k.Values)
		}
		if (k.Kind == KeyFlag) != (k.Arg == "") {
			t.Errorf("%s: a bare flag, and only it, has no argument in help", k.Name)
		}
		if (k.Feature == "") != (k.FeatureHelp == "") {
			t.Errorf("%s: a feature option needs its description, and a description its option", k.Name)
		}
	}
}
