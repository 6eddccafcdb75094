package mountinfo

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	in := `66 42 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw,discard
97 66 0:44 / /run rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755
105 104 254:0 /w/proj/.bin/real-claude /home/my\040user/.local/bin/claude ro,relatime master:3 - ext4 /dev/vda rw
106 66 0:45 / /mnt rw shared:7 master:2 propagate_from:1 - tmpfs tmpfs rw
`
	got, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{ID: 66, Parent: 42, Dev: "254:0", Root: "/", Point: "/", Options: "ro,nosuid,nodev,relatime", FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard"},
		{ID: 97, Parent: 66, Dev: "0:44", Root: "/", Point: "/run", Options: "rw,nosuid,nodev,relatime", FSType: "tmpfs", Source: "tmpfs", SuperOptions: "rw,mode=755"},
		{ID: 105, Parent: 104, Dev: "254:0", Root: "/w/proj/.bin/real-claude", Point: "/home/my user/.local/bin/claude", Options: "ro,relatime", Optional: []string{"master:3"}, FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw"},
		{ID: 106, Parent: 66, Dev: "0:45", Root: "/", Point: "/mnt", Options: "rw", Optional: []string{"shared:7", "master:2", "propagate_from:1"}, FSType: "tmpfs", Source: "tmpfs", SuperOptions: "rw"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	if _, err := Parse(strings.NewReader("66 42 254:0 / /\n")); err == nil {
		t.Error("a truncated line parsed")
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:     "/a b",
		`/tab\011x`:   "/tab\tx",
		`/back\134sl`: `/back\sl`,
		`/plain`:      "/plain",
		`/short\04`:   `/short\04`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, line := range []string{
		"66 42 254:0 / / rw",               // no separator
		"66 42 254:0 / / rw - ",            // no file system type
		"x 42 254:0 / / rw - ext4 a rw",    // no mount id
		"66 x 254:0 / / rw - ext4 a rw",    // no parent id
		"66 42 254:0 / - ext4 /dev/vda rw", // too few fields
	} {
		if _, err := Parse(strings.NewReader(line + "\n")); err == nil || !strings.Contains(err.Error(), "does not parse") {
			t.Errorf("Parse(%q) = %v, want an error quoting the line", line, err)
		}
	}
}

func TestOptions(t *testing.T) {
	ro := Mount{Options: "ro,nosuid"}
	if !ro.ReadOnly() || (Mount{Options: "rw,errors=ro"}).ReadOnly() {
		t.Error("ReadOnly does not read the mount's own ro option")
	}
	if !HasOption("rw,pids", "pids") || HasOption("rw,pidsx", "pids") || HasOption("", "pids") {
		t.Error("HasOption does not match whole options")
	}
}

func TestReadSelf(t *testing.T) {
	ms, err := Read("self")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Point == "/" {
			return
		}
	}
	t.Errorf("Read(self) has no mount at /: %+v", ms)
}
