package verify

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReadmeCountsTheChecks keeps the README's count of verify's checks
// true.
func TestReadmeCountsTheChecks(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	if want := fmt.Sprintf("it probes the live sandbox, %d checks,", len(checks)); !strings.Contains(text, want) {
		t.Errorf("README.md does not say %q", want)
	}
}
