package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A skipped or interrupted run has no jobs, KPIs or anomalies: the schema
// says arrays, so they are stored as [] and never as null.
func TestEmptyRunsStoreArraysNotNull(t *testing.T) {
	dir := t.TempDir()
	r := &Results{Schema: Schema, Suite: "s", Status: Interrupted, Runs: []Run{
		{ID: "a", Status: Skipped, Error: "not started: the suite was interrupted"},
		{ID: "bringup", Status: Fail, Bringup: &Bringup{Lab: "l"}},
	}}
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	if r.Runs[0].Jobs != nil {
		t.Error("Save changed its argument")
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "null") {
		t.Errorf("results.json holds null:\n%s", data)
	}
	var doc struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, run := range doc.Runs {
		for _, k := range []string{"jobs", "kpis", "anomalies", "imbalances"} {
			if string(run[k]) != "[]" {
				t.Errorf("run %s: %s is %s, want []", run["id"], k, run[k])
			}
		}
	}
	// No runs at all is an empty array too.
	if err := Save(dir, &Results{Schema: Schema, Status: Interrupted}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(dir, FileName))
	if !strings.Contains(string(data), `"runs": []`) {
		t.Errorf("no runs stored as:\n%s", data)
	}
}
