package jsonc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddIfAbsent(t *testing.T) {
	const value = `{"type": "command"}`
	for _, tc := range []struct {
		name, in, want string
		changed        bool
	}{
		{"empty object", "{}\n", "{\"statusLine\": {\"type\": \"command\"}}\n", true},
		{"one per line, comments kept", "{\n  // mine\n  \"model\": \"opus\", // pinned\n}\n",
			"{\n  // mine\n  \"model\": \"opus\", // pinned\n  \"statusLine\": {\"type\": \"command\"}\n}\n", true},
		{"one per line", "{\n  \"model\": \"opus\"\n}\n", "{\n  \"model\": \"opus\",\n  \"statusLine\": {\"type\": \"command\"}\n}\n", true},
		{"one line", `{"model": "opus"}`, `{"model": "opus", "statusLine": {"type": "command"}}`, true},
		{"present, whatever its value", `{"statusLine": null}`, `{"statusLine": null}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := AddIfAbsent([]byte(tc.in), "statusLine", value)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`{"model": `, `["a"]`, `"text"`} {
		if _, _, err := AddIfAbsent([]byte(bad), "statusLine", value); err == nil {
			t.Errorf("AddIfAbsent(%q) gave no error", bad)
		}
	}
}

// The reason a document is not an object stays testable behind the message.
func TestNotAnObjectWrapsTheCause(t *testing.T) {
	_, _, err := AddIfAbsent([]byte("[1, 2]"), "statusLine", `{}`)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || !strings.HasPrefix(err.Error(), "not a JSON object: ") {
		t.Errorf("AddIfAbsent on an array: %v, want a wrapped *json.UnmarshalTypeError", err)
	}
}
