package labtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/clabrt"
)

// The lab images the containerlab tests deploy (scripts/lab-images.sh
// builds them; no registry is reachable from the test machines).
const (
	DefaultFRRImage  = "fabricbench/frr:8.4"
	DefaultHostImage = "fabricbench/host:bookworm"
)

// RequireContainerlab skips (with the reason printed) unless this machine
// can run containerlab labs: root, a containerlab binary
// ($FABRICBENCH_CONTAINERLAB, containerlab in PATH, or
// ../shared/tools/containerlab beside the repository, which it then
// exports as $FABRICBENCH_CONTAINERLAB), a Docker engine and the lab
// images ($FABRICBENCH_FRR_IMAGE and $FABRICBENCH_HOST_IMAGE, default
// fabricbench/frr:8.4 and fabricbench/host:bookworm, which it exports).
// It returns the images.
func RequireContainerlab(t *testing.T) (frrImage, hostImage string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("containerlab lab tests need root (containerlab, docker, nsenter); run ./scripts/test.sh as root")
	}
	if os.Getenv("FABRICBENCH_CONTAINERLAB") == "" {
		if _, err := exec.LookPath("containerlab"); err != nil {
			p := filepath.Join(repoRoot(t), "..", "shared", "tools", "containerlab")
			if _, err := os.Stat(p); err != nil {
				t.Skipf("containerlab lab tests need containerlab (none in PATH, $FABRICBENCH_CONTAINERLAB unset, %s absent)", p)
			}
			t.Setenv("FABRICBENCH_CONTAINERLAB", p)
		}
	}
	t.Setenv("CLAB_VERSION_CHECK", "disable")
	if ok, why := clabrt.Usable(); !ok {
		t.Skipf("containerlab lab tests: %s (./scripts/test.sh installs docker.io and starts dockerd)", why)
	}
	frrImage, hostImage = os.Getenv("FABRICBENCH_FRR_IMAGE"), os.Getenv("FABRICBENCH_HOST_IMAGE")
	if frrImage == "" {
		frrImage = DefaultFRRImage
	}
	if hostImage == "" {
		hostImage = DefaultHostImage
	}
	for _, img := range []string{frrImage, hostImage} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exec.CommandContext(ctx, "docker", "image", "inspect", img).Run()
		cancel()
		if err != nil {
			t.Skipf("containerlab lab tests need the image %s (build it with ./scripts/lab-images.sh; ./scripts/test.sh does)", img)
		}
	}
	t.Setenv("FABRICBENCH_FRR_IMAGE", frrImage)
	t.Setenv("FABRICBENCH_HOST_IMAGE", hostImage)
	return frrImage, hostImage
}

// ContainerlabLeft lists what of a containerlab lab is left on this
// machine: its containers (label containerlab=LAB) and its management
// network (network, when not "").
func ContainerlabLeft(t *testing.T, lab, network string) []string {
	t.Helper()
	var left []string
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=containerlab="+lab, "--format", "{{.Names}}").CombinedOutput()
	if err != nil {
		t.Errorf("docker ps: %v %s", err, out)
	}
	for _, l := range strings.Fields(string(out)) {
		left = append(left, "container "+l)
	}
	if network != "" {
		if exec.Command("docker", "network", "inspect", network).Run() == nil {
			left = append(left, "network "+network)
		}
	}
	return left
}

// repoRoot walks up from the working directory to the directory holding
// go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}
