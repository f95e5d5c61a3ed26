//go:build unix

package influxtest

import (
	"os"
	"syscall"
)

// killGroup kills p's process group (p is its leader, see sysProcAttr).
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
