// Package remote opens a device's shell the way its configuration says:
// SSH to its management address (drivers/sshx, host keys verified), or
// docker exec into its container (drivers/dockerx) when
// drivers.Config.Container is set.
package remote

import (
	"context"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/dockerx"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// Dial opens the shell of the device cfg describes.
func Dial(ctx context.Context, cfg drivers.Config) (sshx.Shell, error) {
	if cfg.Container != "" {
		return dockerx.Dial(ctx, cfg)
	}
	return sshx.Dial(ctx, cfg)
}
