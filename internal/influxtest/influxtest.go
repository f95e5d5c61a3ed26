// Package influxtest runs a real InfluxDB 1.8.10 server (influxd) for tests.
//
// The binary is $FABRICBENCH_INFLUXD if set, else
// $(go env GOPATH)/bin/influxd-1.8.10, which scripts/install-influxd.sh
// builds. Without it, Start skips the test and says how to install it.
//
// Each Server gets its own directories under t.TempDir() and its own
// loopback ports, with authentication disabled, Flux enabled (unless
// WithoutFlux) and the database DB() created. It is killed when the test
// ends.
package influxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// Version is the InfluxDB version the helper runs.
	Version = "1.8.10"
	// BinaryEnv names the environment variable with the influxd path.
	BinaryEnv = "FABRICBENCH_INFLUXD"
	// DefaultDB is the database Start creates.
	DefaultDB = "fabricbench"

	startTimeout = 60 * time.Second
	logTailLines = 40
)

// Server is a running (or stopped) influxd.
type Server struct {
	t       testing.TB
	bin     string
	dir     string
	config  string
	logPath string
	port    int // HTTP API
	rpcPort int // bind-address (backup/restore RPC)
	db      string
	flux    bool
	client  *http.Client

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// Binary returns the influxd path to use, or an error explaining how to get
// one.
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", BinaryEnv, p, err)
		}
		return p, nil
	}
	name := "influxd-" + Version
	var tried []string
	for _, gp := range filepath.SplitList(goPath()) {
		p := filepath.Join(gp, "bin", name)
		if checkExecutable(p) == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("InfluxDB %s server not found (looked at $%s and %s); "+
		"build it with ./scripts/install-influxd.sh (about a minute, needs only the Go module proxy) "+
		"or set %s to an influxd %s binary",
		Version, BinaryEnv, strings.Join(tried, ", "), BinaryEnv, Version)
}

func goPath() string {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if gp := strings.TrimSpace(string(out)); err == nil && gp != "" {
		return gp
	}
	return build.Default.GOPATH
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// Option changes how Start configures the server.
type Option func(*Server)

// WithoutFlux sets flux-enabled = false. influxd then starts in well under a
// second instead of spending several seconds of CPU (tens of seconds on a
// loaded machine) type-checking the Flux standard library, which it does at
// every start when Flux is enabled. QueryFlux does not work then.
func WithoutFlux() Option {
	return func(s *Server) { s.flux = false }
}

// Start starts influxd and creates the database DB(). It skips the test if
// no influxd binary is installed and fails it if the server does not come
// up (with the end of its log). The server is killed when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv(BinaryEnv) != "" {
			t.Fatal(err) // explicitly configured but unusable
		}
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	s := &Server{
		t:       t,
		bin:     bin,
		dir:     dir,
		config:  filepath.Join(dir, "influxdb.conf"),
		logPath: filepath.Join(dir, "influxd.log"),
		db:      DefaultDB,
		client:  &http.Client{Timeout: 30 * time.Second},
		flux:    true,
	}
	for _, o := range opts {
		o(s)
	}
	// Registered after t.TempDir, so it runs before the directory is
	// removed.
	t.Cleanup(func() {
		s.kill()
		s.client.CloseIdleConnections()
		if t.Failed() {
			t.Logf("influxd log (last %d lines of %s):\n%s", logTailLines, s.logPath, s.logTail())
		}
	})

	// Free ports are picked by binding port 0 and releasing it, so another
	// process may grab one before influxd binds it; retry a few times.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if s.rpcPort, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if err := s.writeConfig(); err != nil {
			t.Fatal(err)
		}
		if lastErr = s.start(); lastErr == nil {
			break
		}
		s.kill()
		if !strings.Contains(s.logTail(), "address already in use") {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("influxd: %v\nlast %d lines of %s:\n%s", lastErr, logTailLines, s.logPath, s.logTail())
	}
	if _, err := s.Query(fmt.Sprintf("CREATE DATABASE %s", quoteIdent(s.db))); err != nil {
		t.Fatalf("influxd: %v", err)
	}
	return s
}

// URL is the HTTP API's base URL, e.g. "http://127.0.0.1:38211".
func (s *Server) URL() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// DB is the database Start created.
func (s *Server) DB() string { return s.db }

// Bucket is DB()+"/autogen", the bucket name for the /api/v2 endpoints.
func (s *Server) Bucket() string { return s.db + "/autogen" }

// Dir is the server's directory (config, log, meta, data and wal).
func (s *Server) Dir() string { return s.dir }

// LogPath is the file that receives influxd's output.
func (s *Server) LogPath() string { return s.logPath }

// Stop kills influxd (SIGKILL, like a crash: acknowledged writes survive in
// its WAL) and waits until it has exited. The directories are kept for
// Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.t.Helper()
	s.kill()
}

// Restart starts influxd again with the same ports, config and data, and
// waits until it answers /ping. It stops the server first if needed. It
// fails the test if the server does not come up.
func (s *Server) Restart() {
	s.t.Helper()
	s.kill()
	if err := s.start(); err != nil {
		s.t.Fatalf("influxd restart: %v\nlast %d lines of %s:\n%s", err, logTailLines, s.logPath, s.logTail())
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeConfig() error {
	q := strconv.Quote
	conf := fmt.Sprintf(`# Written by internal/influxtest.
reporting-disabled = true
bind-address = %s

[meta]
  dir = %s
  logging-enabled = false

[data]
  dir = %s
  wal-dir = %s
  query-log-enabled = false

[retention]
  enabled = false

[monitor]
  store-enabled = false

[http]
  enabled = true
  bind-address = %s
  auth-enabled = false
  log-enabled = false
  flux-enabled = %t
  pprof-enabled = false

[continuous_queries]
  enabled = false

[subscriber]
  enabled = false
`,
		q(fmt.Sprintf("127.0.0.1:%d", s.rpcPort)),
		q(filepath.Join(s.dir, "meta")),
		q(filepath.Join(s.dir, "data")),
		q(filepath.Join(s.dir, "wal")),
		q(fmt.Sprintf("127.0.0.1:%d", s.port)),
		s.flux,
	)
	return os.WriteFile(s.config, []byte(conf), 0o644)
}

// start runs influxd and waits for /ping.
func (s *Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "--- influxtest: starting %s run -config %s at %s\n", s.bin, s.config, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.bin, "run", "-config", s.config)
	cmd.Dir = s.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	// INFLUXDB_* variables would override the config file.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INFLUXDB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		if s.ping() == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("influxd exited before answering /ping: %v", waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("influxd did not answer %s/ping within %s", s.URL(), startTimeout)
		}
	}
}

func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/ping", nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("/ping: %s", resp.Status)
	}
	return nil
}

// kill kills the process group and waits for the process to exit.
func (s *Server) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	killGroup(cmd.Process)
	<-exited
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}

// Row is one row of an InfluxQL result.
type Row struct {
	Measurement string
	Tags        map[string]string // from GROUP BY; nil without it
	Time        int64             // ns since the Unix epoch (0 if there is no time column)
	// Values holds the other columns by name. JSON numbers become int64
	// if they are integral and fit, float64 otherwise (so a float field
	// with an integral value reads as int64); strings, bools as such; null
	// columns are left out.
	Values map[string]any
}

// Query runs InfluxQL statements against DB() (timestamps in ns) and returns
// the rows of all their results in order. An error of any statement is
// returned as an error.
func (s *Server) Query(influxql string) ([]Row, error) {
	form := url.Values{"db": {s.db}, "q": {influxql}, "epoch": {"ns"}}
	resp, err := s.client.PostForm(s.URL()+"/query", form)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", influxql, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", influxql, err)
	}
	var r struct {
		Results []struct {
			Error  string `json:"error"`
			Series []struct {
				Name    string            `json:"name"`
				Tags    map[string]string `json:"tags"`
				Columns []string          `json:"columns"`
				Values  [][]any           `json:"values"`
			} `json:"series"`
		} `json:"results"`
		Error string `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("query %q: %s: cannot decode response: %v: %.200s", influxql, resp.Status, err, body)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("query %q: %s", influxql, r.Error)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query %q: %s: %.200s", influxql, resp.Status, body)
	}
	var rows []Row
	for _, res := range r.Results {
		if res.Error != "" {
			return nil, fmt.Errorf("query %q: %s", influxql, res.Error)
		}
		for _, ser := range res.Series {
			for _, vals := range ser.Values {
				row := Row{Measurement: ser.Name, Tags: ser.Tags, Values: make(map[string]any, len(vals))}
				for i, v := range vals {
					if i >= len(ser.Columns) || v == nil {
						continue
					}
					col := ser.Columns[i]
					if n, ok := v.(json.Number); ok {
						if iv, err := n.Int64(); err == nil {
							v = iv
						} else if fv, err := n.Float64(); err == nil {
							v = fv
						}
					}
					if col == "time" {
						if iv, ok := v.(int64); ok {
							row.Time = iv
							continue
						}
					}
					row.Values[col] = v
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// QueryFlux runs a Flux query through /api/v2/query and returns the
// annotated CSV response as is.
func (s *Server) QueryFlux(flux string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/api/v2/query", strings.NewReader(flux))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/vnd.flux")
	req.Header.Set("Accept", "application/csv")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("flux query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("flux query: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("flux query: %s: %.500s", resp.Status, body)
	}
	return string(body), nil
}

// WriteLineProtocol writes line protocol (precision ns) into DB() through the
// 1.x /write endpoint, e.g. to import a spill file.
func (s *Server) WriteLineProtocol(lp string) error {
	u := s.URL() + "/write?" + url.Values{"db": {s.db}, "precision": {"ns"}}.Encode()
	resp, err := s.client.Post(u, "text/plain; charset=utf-8", strings.NewReader(lp))
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("write: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// quoteIdent quotes an InfluxQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
