// Package frr is the fabricbench driver for FRR routers: vtysh over SSH
// with scrapligo (a network driver built from the embedded platform
// definition platform.yaml: the login shell, vtysh and its configuration
// mode), plus the Linux kernel data plane of the same box through the
// linux driver (sysctls, iproute2, network namespaces), which also runs
// Exec.
//
// Both connections verify the host key against drivers.Config.KnownHosts.
// The vtysh session uses scrapligo's standard (crypto/ssh) transport for
// key and password authentication; with ssh-agent authentication (which
// that transport cannot do) it runs on a session of the linux driver's
// connection, whose host key has been verified the same way. A router
// that is a container on this machine (drivers.Config.Container, e.g. a
// containerlab node of the official FRR image, which runs no sshd) is
// reached as containerlab users reach it: vtysh through `docker exec -it`
// (scrapligo's system transport on a pty), the kernel through the linux
// driver's docker exec shell.
//
// Features:
//
//   - bgp: read back from `show bgp vrf all neighbors json`.
//   - ecmp-hash: the kernel's multipath hash sysctls (see the linux
//     driver) and `maximum-paths 64` (or DeviceFeatures.ECMPWidth when
//     more) in the ipv4 and ipv6 unicast address families of every
//     `router bgp`, read back from the running configuration; an
//     ECMPWidth above zebra's ECMP maximum (`show zebra`) is refused.
//   - pfc, pfc-watchdog, ecn-wred, trimming, queue-size,
//     adaptive-routing: refused (drivers.RegisterLimits).
//   - vrf: VRF devices when the kernel can make them; otherwise, when
//     zebra runs in netns VRF mode (-n), network namespaces: Apply creates
//     the namespace (ip netns add), moves the member interfaces into it
//     with their addresses and waits for zebra to list the VRF (show vrf).
//   - srv6-usid: FRR 8.4 has no micro-SIDs; the kernel data plane does
//     (seg6local next-csid, mode "kernel-seg6local"), installed by the
//     linux driver, as are uDX4/uDX6 SIDs, steering into policy tables
//     and the fwmark policy rules of SRv6.Rules (State reports the
//     kernel's Rules and PolicyRoutes). uDT46 needs a VRF device and is
//     refused with netns VRFs. IPv6 forwarding is turned on through zebra
//     (ipv6 forwarding).
//   - ecn-wred, pfc, trimming: not available.
//
// Configuration changes go to the running configuration (not written to
// frr.conf).
package frr

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/opoptions"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/dockerx"
	"github.com/fabricbench/fabricbench/drivers/linux"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// Platform is the registry name of this driver.
const Platform = "frr"

// termWidth is the pty width asked for: wide enough that vtysh's readline
// does not wrap the echo of long commands.
const termWidth = 511

// PlatformDefinition is the scrapligo platform definition of the vtysh
// session (platform.yaml).
//
//go:embed platform.yaml
var PlatformDefinition []byte

func init() {
	drivers.Register(Platform, Open)
	drivers.RegisterLimits(Platform, map[drivers.Feature]string{
		drivers.FeatECN:         "FRR does not configure WRED/ECN",
		drivers.FeatPFC:         reasonPFC,
		drivers.FeatTrimming:    reasonTrimming,
		drivers.FeatPFCWatchdog: reasonPFC,
		drivers.FeatQueueSize:   linux.ReasonQueueSize,
		drivers.FeatAdaptive:    reasonAdaptive,
	})
}

// Driver manages one FRR router. It implements drivers.Driver and is safe
// for concurrent use: vtysh commands run one at a time on the one
// session, Apply calls one at a time.
type Driver struct {
	name    string
	timeout time.Duration
	lx      *linux.Driver
	cfg     drivers.Config // for reopening the vtysh session; Auth is never printed
	extra   []util.Option  // cfg.Options

	mu     sync.Mutex // the vtysh session
	conn   *network.Driver
	broken error // the session lost sync; reopened on the next command
	closed bool

	capMu sync.Mutex
	caps  drivers.Capabilities

	applyMu sync.Mutex
}

var _ drivers.Driver = (*Driver)(nil)

// Open connects to the router described by cfg (drivers.Register
// signature).
func Open(cfg drivers.Config) (drivers.Driver, error) {
	d, err := New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// New connects to the router: the linux driver's SSH connection first,
// then the vtysh session. cfg.KnownHosts is required. cfg.Options may hold
// extra scrapligo options (util.Option), applied last; options that would
// skip host key verification are refused.
func New(ctx context.Context, cfg drivers.Config) (*Driver, error) {
	name := sshx.Name(cfg)
	var extra []util.Option
	for i, o := range cfg.Options {
		uo, ok := o.(util.Option)
		if !ok {
			return nil, fmt.Errorf("frr %s: Options[%d] is a %T, not a scrapligo util.Option", name, i, o)
		}
		extra = append(extra, uo)
	}
	lcfg := cfg
	lcfg.Options = nil
	lx, err := linux.New(ctx, lcfg)
	if err != nil {
		return nil, fmt.Errorf("frr %s: %w", name, err)
	}
	d := &Driver{name: name, timeout: sshx.Timeout(cfg), lx: lx, cfg: lcfg, extra: extra}
	conn, err := d.openVtysh(ctx)
	if err != nil {
		lx.Close()
		return nil, err
	}
	d.conn = conn
	return d, nil
}

// openVtysh opens the scrapligo session and enters vtysh. When vtysh
// does not start, the device's shell says why (no FRR daemon running).
func (d *Driver) openVtysh(ctx context.Context) (*network.Driver, error) {
	conn, err := d.openVtyshSession(ctx)
	if err != nil && d.lx != nil {
		if out, xerr := d.lx.Exec(ctx, "vtysh -c 'show version' 2>&1 | head -3"); xerr == nil && strings.Contains(out, "failed to connect") {
			return nil, fmt.Errorf("frr %s: FRR is not running: vtysh says %q", d.name, strings.TrimSpace(out))
		}
	}
	return conn, err
}

func (d *Driver) openVtyshSession(ctx context.Context) (*network.Driver, error) {
	cfg := d.cfg
	if cfg.Container != "" {
		return d.openDockerVtysh()
	}
	host, port, err := sshx.HostPort(cfg.Address, cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("frr %s: %w", d.name, err)
	}
	if cfg.KnownHosts == "" {
		return nil, fmt.Errorf("frr %s: %w", d.name, sshx.ErrNoKnownHosts)
	}
	opts := []util.Option{
		options.WithPort(port),
		options.WithTimeoutOps(d.timeout),
		options.WithTimeoutSocket(d.timeout),
		options.WithTermWidth(termWidth),
		options.WithAuthUsername(cfg.Auth.User),
	}
	agentOnly := cfg.Auth.Agent && len(cfg.Auth.PrivateKey) == 0 && cfg.Auth.Password == ""
	if agentOnly {
		// scrapligo's standard transport has no ssh-agent support: run the
		// vtysh session on the linux driver's (verified) connection.
		client, ok := d.lx.Shell().(*sshx.Client)
		if !ok {
			return nil, fmt.Errorf("frr %s: ssh-agent authentication needs an SSH connection", d.name)
		}
		opts = append(opts, options.WithCustomTransport(&sessionTransport{ctx: context.WithoutCancel(ctx), client: client}))
	} else {
		opts = append(opts, options.WithTransportType(transport.StandardTransport),
			options.WithSSHKnownHostsFile(cfg.KnownHosts))
		if cb, err := knownhosts.New(cfg.KnownHosts); err == nil {
			if algos := sshx.KnownAlgorithms(cb, fmt.Sprintf("%s:%d", host, port), nil); len(algos) > 0 {
				opts = append(opts, options.WithStandardTransportHostKeyAlgorithms(algos))
			}
		}
		if cfg.Auth.Password != "" {
			opts = append(opts, options.WithAuthPassword(cfg.Auth.Password))
		}
		if len(cfg.Auth.PrivateKey) > 0 {
			key, err := sshx.PlainPrivateKey(cfg.Auth.PrivateKey, cfg.Auth.Passphrase)
			if err != nil {
				return nil, fmt.Errorf("frr %s: %w", d.name, err)
			}
			opts = append(opts, options.WithStandardTransportPrivateKeyBytes(key, ""))
		}
	}
	opts = append(opts, d.extra...)
	p, err := platform.NewPlatform(PlatformDefinition, host, opts...)
	if err != nil {
		return nil, fmt.Errorf("frr %s: scrapligo setup: %v", d.name, err)
	}
	conn, err := p.GetNetworkDriver()
	if err != nil {
		return nil, fmt.Errorf("frr %s: scrapligo setup: %v", d.name, err)
	}
	switch t := conn.Transport.Impl.(type) {
	case *transport.Standard:
		if t.SSHArgs == nil || !t.SSHArgs.StrictKey || t.SSHArgs.KnownHostsFile == "" {
			return nil, fmt.Errorf("frr %s: host key verification cannot be turned off", d.name)
		}
	case *sessionTransport:
	default:
		return nil, fmt.Errorf("frr %s: scrapligo transport %T is not allowed (only SSH with host key verification)", d.name, t)
	}
	if err := conn.Open(); err != nil {
		return nil, fmt.Errorf("frr %s: vtysh session to %s:%d: %w", d.name, host, port, err)
	}
	return conn, nil
}

// openDockerVtysh opens vtysh in the router's container with
// `docker exec -it CONTAINER vtysh` on a pty (scrapligo's system
// transport): the session starts in vtysh's exec mode.
func (d *Driver) openDockerVtysh() (*network.Driver, error) {
	opts := []util.Option{
		options.WithTransportType(transport.SystemTransport),
		options.WithSystemTransportOpenBin(dockerx.Binary()),
		options.WithSystemTransportOpenArgsOverride([]string{"exec", "-it", d.cfg.Container, "vtysh"}),
		options.WithAuthBypass(),
		options.WithTimeoutOps(d.timeout),
		options.WithTimeoutSocket(d.timeout),
		options.WithTermWidth(termWidth),
	}
	opts = append(opts, d.extra...)
	p, err := platform.NewPlatform(PlatformDefinition, d.cfg.Container, opts...)
	if err != nil {
		return nil, fmt.Errorf("frr %s: scrapligo setup: %v", d.name, err)
	}
	conn, err := p.GetNetworkDriver()
	if err != nil {
		return nil, fmt.Errorf("frr %s: scrapligo setup: %v", d.name, err)
	}
	if t, ok := conn.Transport.Impl.(*transport.System); !ok || t.OpenBin != dockerx.Binary() {
		return nil, fmt.Errorf("frr %s: scrapligo transport %T is not allowed for a container (only docker exec)", d.name, conn.Transport.Impl)
	}
	if err := conn.Open(); err != nil {
		return nil, fmt.Errorf("frr %s: vtysh session in container %s: %w", d.name, d.cfg.Container, err)
	}
	return conn, nil
}

// Platform returns "frr".
func (d *Driver) Platform() string { return Platform }

// Linux returns the linux driver of the router's kernel data plane.
func (d *Driver) Linux() *linux.Driver { return d.lx }

// Close ends the vtysh session and the SSH connection.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if d.conn != nil {
		if d.broken != nil {
			// Out of sync: do not talk to it, just hang up.
			_ = d.conn.Channel.Close()
		} else if err := d.conn.Close(); err != nil {
			errs = append(errs, fmt.Errorf("vtysh session: %w", err))
		}
		d.conn = nil
	}
	if err := d.lx.Close(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("frr %s: close: %w", d.name, errors.Join(errs...))
	}
	return nil
}

// Exec runs a shell command on the router (through the linux driver's SSH
// connection, not the vtysh session).
func (d *Driver) Exec(ctx context.Context, cmd string) (string, error) {
	out, err := d.lx.Exec(ctx, cmd)
	if err != nil {
		return out, fmt.Errorf("frr %s: %w", d.name, err)
	}
	return out, nil
}

// opTimeout is the timeout of one vtysh operation: the driver's, or less
// when ctx ends sooner.
func (d *Driver) opTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := d.timeout
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return 0, context.DeadlineExceeded
		}
		if left < t {
			t = left
		}
	}
	return t, nil
}

// session returns the vtysh session, reopening it when an earlier command
// left it out of sync. The caller holds d.mu.
func (d *Driver) session(ctx context.Context) (*network.Driver, error) {
	if d.closed {
		return nil, fmt.Errorf("frr %s: driver is closed", d.name)
	}
	if d.broken != nil || d.conn == nil {
		if d.conn != nil {
			_ = d.conn.Channel.Close()
			d.conn = nil
		}
		conn, err := d.openVtysh(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w (reopening after: %v)", err, d.broken)
		}
		d.conn, d.broken = conn, nil
	}
	return d.conn, nil
}

// Vtysh runs one vtysh command (exec mode) and returns its output. Output
// that shows a failure (failed-when-contains in platform.yaml) is an
// error.
func (d *Driver) Vtysh(ctx context.Context, cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n") {
		return "", fmt.Errorf("frr %s: vtysh command must be one line: %q", d.name, cmd)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	timeout, err := d.opTimeout(ctx)
	if err != nil {
		return "", fmt.Errorf("frr %s: vtysh %q: %w", d.name, cmd, err)
	}
	conn, err := d.session(ctx)
	if err != nil {
		return "", err
	}
	r, err := conn.SendCommand(cmd, opoptions.WithTimeoutOps(timeout))
	if err != nil {
		// The reply may still come and would be taken for the next one.
		d.broken = err
		return "", fmt.Errorf("frr %s: vtysh %q: %w", d.name, cmd, err)
	}
	if r.Failed != nil {
		return r.Result, fmt.Errorf("frr %s: vtysh %q failed: %s", d.name, cmd, sshx.Excerpt(r.Result, 400))
	}
	return r.Result, nil
}

// Configure sends configuration lines in vtysh's configuration mode,
// stopping at the first line FRR rejects.
func (d *Driver) Configure(ctx context.Context, lines []string) error {
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\n") {
			return fmt.Errorf("frr %s: configuration line must be one line: %q", d.name, l)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	timeout, err := d.opTimeout(ctx)
	if err != nil {
		return fmt.Errorf("frr %s: configure: %w", d.name, err)
	}
	conn, err := d.session(ctx)
	if err != nil {
		return err
	}
	m, err := conn.SendConfigs(lines, opoptions.WithTimeoutOps(timeout), opoptions.WithStopOnFailed())
	if err != nil {
		d.broken = err
		return fmt.Errorf("frr %s: configure: %w", d.name, err)
	}
	for _, r := range m.Responses {
		if r.Failed != nil {
			return fmt.Errorf("frr %s: configuration line %q rejected: %s", d.name, r.Input, sshx.Excerpt(r.Result, 300))
		}
	}
	// Back to exec mode (zebra and bgpd apply lines as they come).
	if err := conn.AcquirePriv("exec"); err != nil {
		d.broken = err
		return fmt.Errorf("frr %s: leave configuration mode: %w", d.name, err)
	}
	return nil
}

var versionRe = regexp.MustCompile(`FRRouting \S+`)

// Facts reads the hostname and interfaces (linux), the FRR version (`show
// version`) and the VRF mode.
func (d *Driver) Facts(ctx context.Context) (*drivers.Facts, error) {
	f, err := d.lx.Facts(ctx)
	if err != nil {
		return nil, fmt.Errorf("frr %s: %w", d.name, err)
	}
	f.Platform = Platform
	out, err := d.Vtysh(ctx, "show version")
	if err != nil {
		return nil, err
	}
	f.OSVersion = parseVersion(out)
	if f.OSVersion == "" {
		return nil, fmt.Errorf("frr %s: `show version` returned an unexpected reply: %q", d.name, sshx.Excerpt(out, 200))
	}
	caps, err := d.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	f.VRFMode = ""
	if s := caps[drivers.FeatVRF]; s.Supported {
		f.VRFMode = s.Mode
	}
	return f, nil
}

// parseVersion returns "FRRouting X.Y.Z" from `show version` (or its
// first line when it does not say FRRouting).
func parseVersion(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if m := versionRe.FindString(l); m != "" {
			return m
		}
		return l
	}
	return ""
}
