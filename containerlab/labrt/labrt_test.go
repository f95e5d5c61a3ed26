package labrt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab"
)

// A failed deploy: a lab that is up but not ready is kept with its state;
// any other failure destroys the lab by its node names, and a failed
// clean-up is added to the error.
func TestDeployFailed(t *testing.T) {
	lab := &containerlab.Lab{Name: "l", Nodes: []*containerlab.Node{{Name: "a"}, {Name: "b"}}}
	st := &State{}
	var destroyed []string
	destroy := func(_ context.Context, name string, nodes []string) (*Report, error) {
		destroyed = append([]string{name}, nodes...)
		return &Report{}, errors.New("engine gone")
	}
	notReady := &NotReadyError{Lab: "l", Pending: []string{"a: BGP"}}
	if got, err := DeployFailed(context.Background(), lab, st, notReady, destroy); got != st || err != notReady || destroyed != nil {
		t.Errorf("not ready: %v, %v, destroyed %v", got, err, destroyed)
	}
	boom := errors.New("boom")
	got, err := DeployFailed(context.Background(), lab, st, boom, destroy)
	if got != nil || !errors.Is(err, boom) || !strings.Contains(err.Error(), "cleaning up failed: engine gone") {
		t.Errorf("failed: %v, %v", got, err)
	}
	if !reflect.DeepEqual(destroyed, []string{"l", "a", "b"}) {
		t.Errorf("destroyed %v", destroyed)
	}
}

// RemoveStateDir removes a lab's state directory and names it; a missing
// one is not an error and names nothing.
func TestRemoveStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := RemoveStateDir(dir); got != dir || err != nil {
		t.Errorf("RemoveStateDir = %q, %v", got, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
	if got, err := RemoveStateDir(dir); got != "" || err != nil {
		t.Errorf("again: %q, %v", got, err)
	}
}
