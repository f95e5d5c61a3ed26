//go:build unix && !linux

package influxtest

import "syscall"

// sysProcAttr puts influxd in its own process group, so Stop can kill it and
// anything it spawned.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
