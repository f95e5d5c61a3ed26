package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Fabricbench builds the fabricbench command once per test binary (into a
// temporary directory that Main removes): what the backends' lab tests run
// and what their backends copy to the lab's hosts.
func Fabricbench(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fabricbench-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "fabricbench")
		// Static (no cgo): it runs in lab containers whatever their C library.
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/fabricbench/fabricbench/cmd/fabricbench")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Main is a TestMain for packages that use Fabricbench: it runs the tests,
// removes the built binary and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
