// Package control is the control API of a fabricbench transport agent:
// the harness starts flows on an agent, follows their completions and
// reads its counters and, when a run stalls, its senders' state. It is
// JSON over HTTP, bound to the lab management address, and every request
// must carry the run's bearer token (a random per-run secret the harness
// hands the agent in a 0600 file). Tokens are compared in constant time
// and never logged.
package control

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// API paths.
const (
	PathHealth   = "/v1/health"
	PathFlows    = "/v1/flows"
	PathEvents   = "/v1/events"
	PathStats    = "/v1/stats"
	PathState    = "/v1/state"
	PathShutdown = "/v1/shutdown"
)

// Flow asks an agent to start sending one flow now.
type Flow struct {
	ID        uint32 `json:"id"`
	Dst       string `json:"dst"` // the receiving agent's data address, host:port
	Size      int64  `json:"size"`
	BaseRTTPs int64  `json:"base_rtt_ps"`
	RateBps   int64  `json:"rate_bps"`
	Mark      uint32 `json:"mark,omitempty"` // path class (SRv6 policy), 0: ECMP
	// PlaneDsts are the receiving agent's data addresses on planes 1, 2,
	// ... (its port is Dst's): the flow is spread over every plane. Empty:
	// plane 0 only.
	PlaneDsts []string `json:"plane_dsts,omitempty"`
}

// StartRequest is the body of POST /v1/flows.
type StartRequest struct {
	Flows []Flow `json:"flows"`
}

// StartReply answers POST /v1/flows.
type StartReply struct {
	Accepted int `json:"accepted"`
}

// Event is one flow completion (or failure), in agent order.
type Event struct {
	Seq      int    `json:"seq"`
	Flow     uint32 `json:"flow"`
	StartNs  int64  `json:"start_ns"` // agent wall clock, Unix ns
	FCTNs    int64  `json:"fct_ns"`   // -1 when the flow failed
	Sent     uint64 `json:"sent"`
	Retx     uint64 `json:"retx"`
	Nacks    uint64 `json:"nacks"`
	Timeouts uint64 `json:"timeouts"`
	ECNAcks  uint64 `json:"ecn_acks"`
	// Spurious counts retransmitted packets whose original was
	// acknowledged after the resend (absent from older agents).
	Spurious uint64 `json:"spurious_retx,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Health answers GET /v1/health.
type Health struct {
	Host     string  `json:"host"`
	Version  string  `json:"version"`
	RunID    uint32  `json:"run_id"`
	Data     string  `json:"data"` // data-plane address
	UptimeS  float64 `json:"uptime_s"`
	Active   int     `json:"active"` // flows sending
	Finished int     `json:"finished"`
}

// State is an agent's sending state (GET /v1/state): what a run that
// stalled reports with its abandoned flows.
type State struct {
	// LoopIdleMs: how long ago the sending goroutine last went round its
	// loop. WriteBlockedMs: how long it has waited for a socket to take
	// its batch (0: it is not in a socket write).
	LoopIdleMs     float64 `json:"loop_idle_ms"`
	WriteBlockedMs float64 `json:"write_blocked_ms"`
	// Answered is false when the sending goroutine did not answer within
	// StateWait; Flows is then empty.
	Answered bool        `json:"answered"`
	Flows    []FlowState `json:"flows"`
}

// FlowState is one sending flow's transport state.
type FlowState struct {
	ID            uint32  `json:"id"`
	Dst           string  `json:"dst"`
	Mark          uint32  `json:"mark,omitempty"`
	Packets       uint32  `json:"packets"`
	Acked         uint32  `json:"acked"`
	Unsent        uint32  `json:"unsent"`
	QueuedRetx    int     `json:"queued_retx"`
	InflightBytes int64   `json:"inflight_bytes"`
	CwndBytes     int64   `json:"cwnd_bytes"`
	Active        bool    `json:"active"`      // in the sending round robin
	TimerInMs     float64 `json:"timer_in_ms"` // until its retransmission timeout (-1: none armed)
	SinceAckMs    float64 `json:"since_ack_ms"`
	AgeMs         float64 `json:"age_ms"`
	Sent          uint64  `json:"sent"`
	Retx          uint64  `json:"retx"`
	Timeouts      uint64  `json:"timeouts"`
}

// StateWait is how long the server waits for the sending goroutine's
// answer to a state request.
const StateWait = 2 * time.Second

// Stats are an agent's data-plane counters (GET /v1/stats).
type Stats map[string]uint64

// Agent is what the server serves: the agent's data plane.
type Agent interface {
	Health() Health
	Start(flows []Flow) error
	Stats() Stats
}

// Server serves the control API of one agent.
type Server struct {
	agent    Agent
	tokenSum [sha256.Size]byte
	srv      *http.Server
	lis      net.Listener
	shutdown chan struct{}
	once     sync.Once

	mu     sync.Mutex
	events []Event
	notify chan struct{} // closed and replaced on every new event
	closed bool
}

// MinTokenLen is the shortest token a server accepts.
const MinTokenLen = 16

// NewServer listens on addr and serves the API for agent; token is the
// bearer token every request must carry.
func NewServer(addr, token string, agent Agent) (*Server, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("control token too short (%d bytes, want at least %d)", len(token), MinTokenLen)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control API: listen on %s: %w", addr, err)
	}
	s := &Server{agent: agent, tokenSum: sha256.Sum256([]byte(token)), lis: lis,
		shutdown: make(chan struct{}), notify: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealth, s.health)
	mux.HandleFunc("POST "+PathFlows, s.flows)
	mux.HandleFunc("GET "+PathEvents, s.eventsHandler)
	mux.HandleFunc("GET "+PathStats, s.stats)
	mux.HandleFunc("GET "+PathState, s.state)
	mux.HandleFunc("POST "+PathShutdown, s.shutdownHandler)
	s.srv = &http.Server{Handler: s.auth(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// ShutdownRequested is closed when a client asked the agent to stop.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown }

// Publish records a completion and wakes the event streams.
func (s *Server) Publish(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Seq = len(s.events)
	s.events = append(s.events, e)
	close(s.notify)
	s.notify = make(chan struct{})
}

// Close ends the event streams and stops the server.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.notify)
		s.notify = make(chan struct{})
	}
	s.mu.Unlock()
	return s.srv.Shutdown(ctx)
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(tok))
		if !ok || subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fabricbench-agent"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.agent.Health()) }
func (s *Server) stats(w http.ResponseWriter, r *http.Request)  { writeJSON(w, s.agent.Stats()) }

// Stater is an Agent that reports its sending state (GET /v1/state).
type Stater interface {
	State(ctx context.Context) State
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	st, ok := s.agent.(Stater)
	if !ok {
		http.Error(w, "this agent does not report its state", http.StatusNotImplemented)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), StateWait)
	defer cancel()
	writeJSON(w, st.State(ctx))
}

func (s *Server) flows(w http.ResponseWriter, r *http.Request) {
	var req StartRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.agent.Start(req.Flows); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	writeJSON(w, StartReply{Accepted: len(req.Flows)})
}

func (s *Server) shutdownHandler(w http.ResponseWriter, r *http.Request) {
	s.once.Do(func() { close(s.shutdown) })
	writeJSON(w, map[string]bool{"ok": true})
}

// eventsHandler streams events from ?from=SEQ as JSON lines until the
// client goes away or the server closes.
func (s *Server) eventsHandler(w http.ResponseWriter, r *http.Request) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	if from < 0 {
		from = 0
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	enc := json.NewEncoder(w)
	keepalive := time.NewTicker(2 * time.Second)
	defer keepalive.Stop()
	for {
		s.mu.Lock()
		batch := append([]Event(nil), s.events[min(from, len(s.events)):]...)
		ch, closed := s.notify, s.closed
		s.mu.Unlock()
		for _, e := range batch {
			if err := enc.Encode(e); err != nil {
				return
			}
		}
		from += len(batch)
		if fl != nil && len(batch) > 0 {
			fl.Flush()
		}
		if closed {
			return
		}
		select {
		case <-ch:
		case <-keepalive.C:
			// A blank line keeps idle connections honest: a dead client
			// shows up as a write error.
			if _, err := io.WriteString(w, "\n"); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		case <-r.Context().Done():
			return
		}
	}
}

// Client talks to one agent.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client for the agent whose control API listens on
// addr (host:port).
func NewClient(addr, token string) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{base: "http://" + addr, token: token, hc: &http.Client{Transport: tr}}
}

// StatusError is a non-2xx reply.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("agent replied %d %s: %s", e.Code, http.StatusText(e.Code), strings.TrimSpace(e.Body))
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Health asks the agent how it is.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.do(ctx, http.MethodGet, PathHealth, nil, &h)
	return h, err
}

// Start starts flows on the agent.
func (c *Client) Start(ctx context.Context, flows []Flow) error {
	var rep StartReply
	return c.do(ctx, http.MethodPost, PathFlows, StartRequest{Flows: flows}, &rep)
}

// State reads the agent's sending state.
func (c *Client) State(ctx context.Context) (State, error) {
	var st State
	err := c.do(ctx, http.MethodGet, PathState, nil, &st)
	return st, err
}

// Stats reads the agent's counters.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	st := Stats{}
	err := c.do(ctx, http.MethodGet, PathStats, nil, &st)
	return st, err
}

// Shutdown asks the agent to exit.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, PathShutdown, nil, nil)
}

// Events streams events from sequence number from to fn until ctx is done,
// the stream ends (nil) or breaks (an error). fn runs on the caller's
// goroutine.
func (c *Client) Events(ctx context.Context, from int, fn func(Event)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+PathEvents+"?from="+strconv.Itoa(from), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("agent event stream: %w", err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return io.ErrUnexpectedEOF
}

// IsUnauthorized reports whether err is a 401 from the agent.
func IsUnauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized
}

// Addr is the agent's control address (host:port).
func (c *Client) Addr() string { return strings.TrimPrefix(c.base, "http://") }
