// Package sonic is the fabricbench driver for SONiC switches.
//
// It logs in over SSH (scrapligo, host keys always verified against the
// configured known_hosts file) to the admin user's bash shell and works with
// the tools SONiC ships there:
//
//   - configuration lives in CONFIG_DB and is read with
//     `sonic-db-cli CONFIG_DB HGETALL 'KEY'` / `KEYS 'PATTERN'` and written
//     with `sonic-db-cli CONFIG_DB HSET 'KEY' field value ...` (HDEL to
//     remove a field), except VRFs, which are created and bound with the
//     `sudo config vrf add` / `sudo config interface vrf bind` CLI;
//   - capabilities come from STATE_DB `SWITCH_CAPABILITY|switch`;
//   - facts from `show version`, `hostname` and the PORT table;
//   - operational state from `show interfaces status`, FRR's JSON output
//     (`vtysh -c '... json'`) and the SRV6_MY_SIDS table.
//
// Features map to CONFIG_DB as follows (Diff lists changes keyed
// "KEY field"; Verify gives one check per KEY):
//
//   - ecmp-hash: SWITCH_HASH|GLOBAL ecmp_hash and lag_hash, comma lists of
//     SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT,
//     IPV6_FLOW_LABEL, stored as the list fields ecmp_hash@/lag_hash@ (a
//     plain ecmp_hash field already on the device is read and updated in
//     place); compared as sets.
//   - vrf: VRF|<name> (names start with "Vrf", at most 15 characters) and
//     INTERFACE|<if> vrf_name (PORTCHANNEL_, VLAN_, LOOPBACK_ and
//     VLAN_SUB_INTERFACE by interface name). VRF.Table is not used: SONiC's
//     vrfmgrd picks the kernel table.
//   - srv6-usid: SRV6_MY_LOCATORS|<loc> prefix, block_len, node_len,
//     func_len 16, arg_len 0; SRV6_MY_SIDS|<loc>|<sid> action uN, or uDT46
//     with decap_vrf. Other behaviors and steering are a
//     *drivers.CapabilityError.
//   - ecn-wred: WRED_PROFILE|AZURE_LOSSLESS ecn=ecn_all,
//     wred_green_enable=true and the green thresholds and drop
//     probability; QUEUE|<port>|3-4 wred_profile on every port of the PORT
//     table.
//   - pfc: PORT_QOS_MAP|<port> pfc_enable on every port: PFC.Priorities
//     plus the traffic classes PFC.DSCPs are in by the port's
//     dscp_to_tc_map (no priorities: the field is removed); with
//     Headroom, BUFFER_PROFILE|fabricbench_lossless_profile (pool: the
//     ingress lossless pool; xon, xoff, size; dynamic_th the device's
//     ingress_lossless_profile's) and BUFFER_PG|<port>|<pg> profile for
//     the priority groups of those classes (tc_to_pg_map), written to the
//     device's own entry whose range holds the group (e.g. 3-4), never an
//     overlapping one; and the device's egress lossless profile
//     (egress_lossless_profile) on the BUFFER_QUEUE entries of those
//     classes' queues (tc_to_queue_map), except where queue-size puts its
//     own.
//   - pfc-watchdog: PFC_WD|<port> action drop, detection_time and
//     restoration_time in ms (SONiC's ranges: 100..5000 and 100..60000,
//     and not below PFC_WD|GLOBAL POLL_INTERVAL; otherwise a
//     *drivers.CapabilityError).
//   - queue-size: BUFFER_PROFILE|fabricbench_queue_profile (the egress
//     lossless pool when PFC is requested too, else the lossy one; size 0,
//     static_th the size, which must fit the pool; with trimming and no
//     PFC, packet_discard_action=trim) and BUFFER_QUEUE|<port>|<q>
//     profile for the queues QueueSize.DSCPs are in (or QueueSize.Queues),
//     again in the device's own range entries.
//   - adaptive-routing: refused (SONiC's ARS tables are not written).
//   - trimming: only when STATE_DB says SWITCH_TRIMMING_CAPABLE=true;
//     SWITCH_TRIMMING|GLOBAL size, dscp_value, queue_index and
//     packet_discard_action=trim on the egress lossy buffer profiles
//     (BUFFER_PROFILE names with "lossy", not "lossless" or "ingress").
//
// Every operation sends a fixed, deterministic sequence of commands (keys
// are read in the order of the desired features, ports in natural order),
// so a session can be replayed from a recorded transcript with scrapligo's
// file transport.
package sonic

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sshx"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/opoptions"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"
)

// Platform is the registry name of this driver.
const Platform = "sonic"

// DefaultTimeout is the per-operation timeout when drivers.Config.Timeout
// is zero.
const DefaultTimeout = 30 * time.Second

// termWidth is the pty width asked for, wide enough that bash does not wrap
// the long sonic-db-cli command lines it echoes.
const termWidth = 511

//go:embed platform.yaml
var platformDefinition []byte

func init() {
	drivers.Register(Platform, Open)
	drivers.RegisterLimits(Platform, map[drivers.Feature]string{drivers.FeatAdaptive: reasonAdaptive})
}

// Driver manages one SONiC switch. It implements drivers.Driver. Its
// methods are safe for concurrent use; they run one at a time on the one
// shell session.
type Driver struct {
	device  string
	timeout time.Duration

	mu     sync.Mutex
	conn   *network.Driver
	broken error // set when the session lost sync with the device
	closed bool
	// applied are the CONFIG_DB field changes Apply made, by change key
	// (the first one: its Old is the value before), for Revert.
	applied map[string]change
}

var _ drivers.Driver = (*Driver)(nil)

// Open connects to the switch described by cfg.
//
// SSH uses scrapligo's standard (crypto/ssh) transport with strict host key
// checking against cfg.KnownHosts, which is therefore required. cfg.Options
// may hold extra scrapligo options (util.Option values); they are applied
// last. With options.WithTransportType(transport.FileTransport) and
// options.WithFileTransportFile(path) the session is replayed from a
// recorded transcript and no known_hosts file is needed.
func Open(cfg drivers.Config) (drivers.Driver, error) {
	d, err := open(cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func open(cfg drivers.Config) (*Driver, error) {
	name := cfg.Device
	if name == "" {
		name = cfg.Address
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("sonic %s: "+format, append([]any{name}, a...)...)
	}

	host, port, err := sshx.HostPort(cfg.Address, cfg.Port)
	if err != nil {
		return nil, fail("%v", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	opts := []util.Option{
		options.WithTransportType(transport.StandardTransport),
		options.WithPort(port),
		options.WithTimeoutOps(timeout),
		options.WithTimeoutSocket(timeout),
		options.WithTermWidth(termWidth),
	}
	if cfg.Auth.User != "" {
		opts = append(opts, options.WithAuthUsername(cfg.Auth.User))
	}
	if cfg.Auth.Password != "" {
		opts = append(opts, options.WithAuthPassword(cfg.Auth.Password))
	}
	if len(cfg.Auth.PrivateKey) > 0 {
		key, err := sshx.PlainPrivateKey(cfg.Auth.PrivateKey, cfg.Auth.Passphrase)
		if err != nil {
			return nil, fail("private key: %v", err)
		}
		opts = append(opts, options.WithStandardTransportPrivateKeyBytes(key, ""))
	}
	if cfg.KnownHosts != "" {
		opts = append(opts, options.WithSSHKnownHostsFile(cfg.KnownHosts))
	}
	for i, o := range cfg.Options {
		uo, ok := o.(util.Option)
		if !ok {
			return nil, fail("Options[%d] is a %T, not a scrapligo util.Option", i, o)
		}
		opts = append(opts, uo)
	}

	p, err := platform.NewPlatform(platformDefinition, host, opts...)
	if err != nil {
		if errors.Is(err, util.ErrFileNotFoundError) && cfg.KnownHosts != "" {
			return nil, fail("known_hosts file %q cannot be read: %v", cfg.KnownHosts, err)
		}
		return nil, fail("scrapligo setup: %v", err)
	}
	conn, err := p.GetNetworkDriver()
	if err != nil {
		return nil, fail("scrapligo setup: %v", err)
	}

	switch t := conn.Transport.Impl.(type) {
	case *transport.File:
		// a recorded session: nothing to authenticate
	case *transport.Standard:
		if err := checkSSHArgs(t.SSHArgs, cfg); err != nil {
			return nil, fail("%v", err)
		}
	case *transport.System:
		if err := checkSSHArgs(t.GetSSHArgs(), cfg); err != nil {
			return nil, fail("%v", err)
		}
	default:
		return nil, fail("transport %T is not allowed: only SSH with host key verification (or the file transport in tests)", t)
	}

	if err := conn.Open(); err != nil {
		return nil, fail("connect to %s:%d: %v", host, port, err)
	}
	return &Driver{device: name, timeout: timeout, conn: conn}, nil
}

// checkSSHArgs refuses SSH sessions whose host key would not be verified.
func checkSSHArgs(a *transport.SSHArgs, cfg drivers.Config) error {
	if cfg.KnownHosts == "" {
		return errors.New("no known_hosts file configured: host keys are always verified, set KnownHosts")
	}
	if a == nil || !a.StrictKey || a.KnownHostsFile == "" {
		return errors.New("host key verification cannot be turned off")
	}
	if cfg.Auth.User == "" {
		return errors.New("no SSH user")
	}
	if cfg.Auth.Password == "" && len(cfg.Auth.PrivateKey) == 0 {
		if cfg.Auth.Agent {
			return errors.New("ssh-agent authentication is not supported by the sonic driver: give a password or a private key")
		}
		return errors.New("no SSH password or private key")
	}
	return nil
}

// Platform returns "sonic".
func (d *Driver) Platform() string { return Platform }

// Close ends the shell session.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := d.conn.Close(); err != nil {
		return fmt.Errorf("sonic %s: close: %w", d.device, err)
	}
	return nil
}

// Exec runs cmd in the admin shell and returns its output. Output that
// shows a failure (see failed-when-contains in platform.yaml) is returned
// together with an error.
func (d *Driver) Exec(ctx context.Context, cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n") {
		return "", fmt.Errorf("sonic %s: exec: command must be a single line: %q", d.device, cmd)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run(ctx, cmd)
}

// run sends one command and returns its output (without echo and prompt).
// The caller holds d.mu.
func (d *Driver) run(ctx context.Context, cmd string) (string, error) {
	if d.closed {
		return "", fmt.Errorf("sonic %s: %q: driver is closed", d.device, cmd)
	}
	if d.broken != nil {
		return "", fmt.Errorf("sonic %s: %q: session unusable after an earlier failure: %w", d.device, cmd, d.broken)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("sonic %s: %q: %w", d.device, cmd, err)
	}
	timeout := d.timeout
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return "", fmt.Errorf("sonic %s: %q: %w", d.device, cmd, context.DeadlineExceeded)
		}
		if left < timeout {
			timeout = left
		}
	}
	r, err := d.conn.SendCommand(cmd, opoptions.WithTimeoutOps(timeout))
	if err != nil {
		// The reply may still arrive later and would be taken for the
		// answer to the next command: do not send any more.
		d.broken = fmt.Errorf("%q: %w", cmd, err)
		return "", fmt.Errorf("sonic %s: %q: %w", d.device, cmd, err)
	}
	// keep the leading blanks: tables are cut by column positions
	out := strings.Trim(r.Result, "\r\n")
	if r.Failed != nil {
		return out, fmt.Errorf("sonic %s: %q failed: %s", d.device, cmd, excerpt(out))
	}
	return out, nil
}

// excerpt shortens device output for error messages.
func excerpt(s string) string {
	const limit = 400
	s = strings.TrimSpace(s)
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return strconv.Quote(s)
}

// replyError is an unparseable reply.
func (d *Driver) replyError(cmd, out string, err error) error {
	return fmt.Errorf("sonic %s: %q returned an unparseable reply: %v: %s", d.device, cmd, err, excerpt(out))
}

// shellQuote quotes s for bash: words of safe characters stay as they
// are, anything else goes in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dbQuote always single-quotes a CONFIG_DB key or pattern ('|' and '*'
// are special to the shell).
func dbQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
