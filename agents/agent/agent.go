// Package agent is the fabricbench transport agent: the UDP data plane
// (agents/dataplane, driving the agents/transport state machines) behind
// the authenticated control API (agents/control). `fabricbench agent`
// runs it on each host of a fabric.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/agents/transport"
)

// Version is reported by the health check.
const Version = "fabricbench-agent/1"

// Config configures an agent. It is also the agent's configuration file:
// `fabricbench agent --config FILE` reads it as JSON (DecodeConfig), and the
// netns backend writes it (EncodeConfig) to every host it starts an agent
// on. The keys, with DefaultConfig's values for what a file leaves out:
//
//	{
//	  "name": "host0",                  // host name, for health and logs (default: hostname)
//	  "control": "198.19.100.12:7400",  // control API listen address (required)
//	  "token_file": "/path/agent.token", // bearer token of the control API, a 0600 file (required)
//	  "data": "10.0.0.1:7500",          // data-plane address and main port (required)
//	  "planes": ["10.0.1.1"],           // the data addresses of further NIC ports, one per plane (same ports)
//	  "entropy_ports": 64,              // UDP source ports (entropies) after the data port
//	  "rate_bps": 200000000,            // NIC rate to pace at (0: unpaced)
//	  "run_id": 0,                      // run identifier carried in every packet
//	  "flow_timeout": "2m0s",           // abandon a flow after this long ("0s": never)
//	  "transport": {"cc": "nscc", "lb": "reps", "mtu": 4096, ...}
//	}
//
// "transport" holds transport.Params (its json keys); header_bytes and
// ack_bytes 0 (the default) are the real wire overhead of the data
// address's family (dataplane.WireHeaderBytes).
type Config struct {
	Name      string         `json:"name"`
	Control   string         `json:"control"`
	TokenFile string         `json:"token_file"`
	Token     string         `json:"-"` // read from TokenFile (ReadToken)
	Data      netip.AddrPort `json:"data"`
	// Planes are the data addresses of the host's further NIC ports, one
	// per plane after plane 0 (Data's); the agent opens the same ports on
	// each and spreads flows over them (transport.Params.PlaneMode).
	Planes       []netip.Addr `json:"planes,omitempty"`
	EntropyPorts int          `json:"entropy_ports"`
	RateBps      int64        `json:"rate_bps"`
	// Params are the transport parameters of every flow.
	Params      transport.Params                 `json:"transport"`
	RunID       uint32                           `json:"run_id"`
	FlowTimeout time.Duration                    `json:"-"` // "flow_timeout" in JSON, as "2m0s"
	Logf        func(format string, args ...any) `json:"-"`
}

// DefaultConfig is the configuration a file or the command line amends:
// the host's name, 64 entropy ports, unpaced, the default transport
// parameters without trimming (the fabric drops) and with the wire header
// sizes derived from the data address, seed 1, a 2-minute flow timeout.
func DefaultConfig() Config {
	p := transport.DefaultParams()
	p.Trimming = false
	p.HeaderBytes, p.AckBytes = 0, 0
	p.Seed = 1
	name, _ := os.Hostname()
	return Config{Name: name, EntropyPorts: 64, Params: p, FlowTimeout: 2 * time.Minute}
}

// configJSON is Config with its flow timeout as a duration string.
type configJSON struct {
	config
	FlowTimeout string `json:"flow_timeout"`
}

type config Config // Config without its JSON methods

// MarshalJSON implements json.Marshaler.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(configJSON{config(c), c.FlowTimeout.String()})
}

// UnmarshalJSON implements json.Unmarshaler: keys the data leaves out keep
// c's values; unknown keys are an error.
func (c *Config) UnmarshalJSON(b []byte) error {
	j := configJSON{config: config(*c), FlowTimeout: c.FlowTimeout.String()}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	d, err := time.ParseDuration(j.FlowTimeout)
	if err != nil {
		return fmt.Errorf("flow_timeout: %w", err)
	}
	*c = Config(j.config)
	c.FlowTimeout = d
	return nil
}

// EncodeConfig returns c as the JSON DecodeConfig reads.
func EncodeConfig(c Config) ([]byte, error) { return json.MarshalIndent(c, "", "  ") }

// DecodeConfig reads a JSON configuration over DefaultConfig, refusing
// unknown keys. It does not read the token file.
func DecodeConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	if dec.More() {
		return c, errors.New("more than one JSON value")
	}
	return c, nil
}

// Validate checks what Run needs: the control and data-plane addresses
// and the transport parameters as the data plane will use them (header
// sizes of 0 become the wire overhead, dataplane.WireHeaderBytes).
func (c *Config) Validate() error {
	if c.Control == "" {
		return errors.New("agent: no control API address (--control, \"control\" in the config)")
	}
	if !c.Data.IsValid() {
		return errors.New("agent: no data-plane address (--data, \"data\" in the config)")
	}
	if 1+len(c.Planes) > transport.MaxPlanes {
		return fmt.Errorf("agent: %d planes, at most %d", 1+len(c.Planes), transport.MaxPlanes)
	}
	for i, a := range c.Planes {
		if !a.IsValid() || a.Unmap().Is6() != c.Data.Addr().Unmap().Is6() {
			return fmt.Errorf("agent: planes[%d] %v is not an address of the data address's family", i, a)
		}
	}
	p := c.Params
	hdr, ack := dataplane.WireHeaderBytes(c.Data.Addr().Is6())
	if p.HeaderBytes == 0 {
		p.HeaderBytes = hdr
	}
	if p.AckBytes == 0 {
		p.AckBytes = ack
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("agent: transport: %w", err)
	}
	return nil
}

// ReadToken reads a token file, refusing files others can read.
func ReadToken(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s: mode %v lets others read it; want 0600", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < control.MinTokenLen {
		return "", fmt.Errorf("token file %s: token too short", path)
	}
	return tok, nil
}

// Agent is a running agent.
type Agent struct {
	cfg     Config
	eng     *dataplane.Engine
	srv     *control.Server
	started time.Time

	mu       sync.Mutex
	active   map[uint32]bool
	finished atomic.Int64
}

// Run starts the agent and serves until ctx is done or a client asks it to
// shut down.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if !cfg.Data.IsValid() {
		return errors.New("agent: no data-plane address")
	}
	eng, err := dataplane.New(dataplane.Config{Addr: cfg.Data.Addr(), Planes: cfg.Planes, Port: int(cfg.Data.Port()),
		EntropyPorts: cfg.EntropyPorts, RateBps: cfg.RateBps, Params: cfg.Params, RunID: cfg.RunID,
		FlowTimeout: cfg.FlowTimeout, Logf: cfg.Logf})
	if err != nil {
		return fmt.Errorf("agent: data plane: %w", err)
	}
	a := &Agent{cfg: cfg, eng: eng, started: time.Now(), active: map[uint32]bool{}}
	srv, err := control.NewServer(cfg.Control, cfg.Token, a)
	if err != nil {
		eng.Close()
		return fmt.Errorf("agent: %w", err)
	}
	a.srv = srv
	cfg.Logf("agent %s: control API on %s, data plane on %s, run %d", cfg.Name, srv.Addr(), eng.LocalAddr(), cfg.RunID)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(ctx) }()
	go a.forward(ctx)
	var runErr error
	select {
	case <-ctx.Done():
	case <-srv.ShutdownRequested():
		cfg.Logf("agent %s: shutdown requested", cfg.Name)
	case runErr = <-engDone:
		if runErr != nil {
			cfg.Logf("agent %s: data plane stopped: %v", cfg.Name, runErr)
		}
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer scancel()
	_ = srv.Close(sctx)
	_ = eng.Close()
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}

// forward turns data-plane completions into control events.
func (a *Agent) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-a.eng.Completions():
			if !ok {
				return
			}
			a.mu.Lock()
			delete(a.active, c.ID)
			a.mu.Unlock()
			a.finished.Add(1)
			e := control.Event{Flow: c.ID, StartNs: c.Start.UnixNano(), FCTNs: c.FCT.Nanoseconds(),
				Sent: c.Stats.Sent, Retx: c.Stats.Retx, Nacks: c.Stats.Nacks, Timeouts: c.Stats.Timeouts, ECNAcks: c.Stats.ECNAcks,
				Spurious: c.Stats.Spurious}
			if c.Err != nil {
				e.FCTNs, e.Error = -1, c.Err.Error()
			}
			a.srv.Publish(e)
		}
	}
}

// Health implements control.Agent.
func (a *Agent) Health() control.Health {
	a.mu.Lock()
	active := len(a.active)
	a.mu.Unlock()
	return control.Health{Host: a.cfg.Name, Version: Version, RunID: a.cfg.RunID, Data: a.eng.LocalAddr().String(),
		UptimeS: time.Since(a.started).Seconds(), Active: active, Finished: int(a.finished.Load())}
}

// Start implements control.Agent: it validates every flow first, then
// starts them all.
func (a *Agent) Start(flows []control.Flow) error {
	specs := make([]dataplane.FlowSpec, len(flows))
	for i, f := range flows {
		dst, err := netip.ParseAddrPort(f.Dst)
		if err != nil {
			return fmt.Errorf("flow %d: dst %q: %v", f.ID, f.Dst, err)
		}
		if f.Size < 0 {
			return fmt.Errorf("flow %d: negative size %d", f.ID, f.Size)
		}
		if f.BaseRTTPs < 0 || f.RateBps < 0 {
			return fmt.Errorf("flow %d: negative base RTT or rate", f.ID)
		}
		specs[i] = dataplane.FlowSpec{ID: f.ID, Dst: dst, Size: f.Size, BaseRTT: f.BaseRTTPs, RateBps: f.RateBps, Mark: f.Mark}
		for _, s := range f.PlaneDsts {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return fmt.Errorf("flow %d: plane_dsts %q: %v", f.ID, s, err)
			}
			specs[i].PlaneDsts = append(specs[i].PlaneDsts, a)
		}
	}
	a.mu.Lock()
	for _, f := range flows {
		if a.active[f.ID] {
			a.mu.Unlock()
			return fmt.Errorf("flow %d is already running", f.ID)
		}
	}
	for _, f := range flows {
		a.active[f.ID] = true
	}
	a.mu.Unlock()
	for i, s := range specs {
		if err := a.eng.StartFlow(s); err != nil {
			// The flows not started are not running.
			a.mu.Lock()
			for _, r := range specs[i:] {
				delete(a.active, r.ID)
			}
			a.mu.Unlock()
			return fmt.Errorf("flow %d: %w", s.ID, err)
		}
	}
	return nil
}

// State implements control.Stater.
func (a *Agent) State(ctx context.Context) control.State {
	st := a.eng.State(ctx)
	ms := func(d time.Duration) float64 {
		if d < 0 {
			return -1
		}
		return float64(d) / float64(time.Millisecond)
	}
	out := control.State{LoopIdleMs: ms(st.LoopIdle), WriteBlockedMs: ms(st.WriteBlocked), Answered: st.Answered,
		Flows: make([]control.FlowState, len(st.Flows))}
	for i, f := range st.Flows {
		out.Flows[i] = control.FlowState{ID: f.ID, Dst: f.Dst.String(), Mark: f.Mark, Packets: f.Packets, Acked: f.Acked,
			Unsent: f.Unsent, QueuedRetx: f.QueuedRetx, InflightBytes: f.InflightBytes, CwndBytes: f.CwndBytes,
			Active: f.Active, TimerInMs: ms(f.TimerIn), SinceAckMs: ms(f.SinceAck), AgeMs: ms(f.Age),
			Sent: f.Sent, Retx: f.Retx, Timeouts: f.Timeouts}
	}
	return out
}

// Stats implements control.Agent.
func (a *Agent) Stats() control.Stats {
	st := a.eng.Stats()
	b, _ := json.Marshal(st)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	out := control.Stats{}
	for k, v := range m {
		if f, ok := v.(float64); ok && f >= 0 {
			out[k] = uint64(f)
		}
	}
	return out
}
