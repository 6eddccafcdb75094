package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// The verify scripts' probe, added to the probe command's table.
func init() {
	probes["verify-json"] = verifyJSON
}

// verifyJSON FILE parses `claude-sandbox verify --json` output strictly and
// prints "ok ID" or "FAIL ID" for each check, then "N checks, M failed".
func verifyJSON(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var results []struct {
		ID     string `json:"id"`
		OK     *bool  `json:"ok"`
		Detail string `json:"detail"`
	}
	if err := dec.Decode(&results); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("%s holds more than one JSON value", path)
	}
	seen, failed := map[string]bool{}, 0
	for _, r := range results {
		if r.ID == "" || r.OK == nil || r.Detail == "" || seen[r.ID] {
			return fmt.Errorf("%s: a result without id, ok or detail, or a repeated id: %+v", path, r)
		}
		seen[r.ID] = true
		if *r.OK {
			fmt.Println("ok", r.ID)
		} else {
			fmt.Println("FAIL", r.ID)
			failed++
		}
	}
	fmt.Printf("%d checks, %d failed\n", len(results), failed)
	return nil
}
