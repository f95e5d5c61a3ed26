package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/fabricbench/fabricbench/units"
)

// serveOpts are the --serve-gnmi flags of sim and run.
type serveOpts struct {
	addr, user, passwordFile, pace string
	// sim only
	interval string
	wait     int
	linger   time.Duration
}

// maxPace bounds --gnmi-pace: a simulated nanosecond per 1000 s.
const maxPace = 1e12

func addServeFlags(f *pflag.FlagSet, o *serveOpts, simCmd bool) {
	f.StringVar(&o.addr, "serve-gnmi", "", "serve the simulated fabric's telemetry to gNMI clients (gnmic, gnmi_cli, Telegraf) on this address, e.g. 127.0.0.1:9339: every switch and host NIC is a target named after its node (docs/telemetry.md)")
	f.StringVar(&o.user, "gnmi-username", telemetry.DefaultUsername, "with --serve-gnmi: the username clients must send")
	f.StringVar(&o.passwordFile, "gnmi-password-file", "", "with --serve-gnmi: file holding the password clients must send (default: a random one, written to a new 0600 file whose path is printed, removed at exit)")
	f.StringVar(&o.pace, "gnmi-pace", "realtime", "with --serve-gnmi: realtime (a simulated second takes a wall-clock second), asap (as fast as possible), or a slow-down factor N (a simulated millisecond takes N ms; e.g. 1000; at most 1e12)")
	if simCmd {
		f.StringVar(&o.interval, "gnmi-interval", "100us", "with --serve-gnmi: the sample interval, in simulated time (1us to 1s): subscriptions sample at multiples of it")
		f.IntVar(&o.wait, "gnmi-wait", 0, "with --serve-gnmi: wait until this many STREAM subscriptions before the simulation starts (0: start at once)")
		f.DurationVar(&o.linger, "gnmi-linger", 0, "with --serve-gnmi: keep serving the final values this long after the simulation ends (Ctrl-C stops earlier)")
	}
}

// check refuses --gnmi-* flags without --serve-gnmi.
func (o *serveOpts) check(f *pflag.FlagSet) error {
	if o.addr != "" {
		return nil
	}
	for _, n := range []string{"gnmi-username", "gnmi-password-file", "gnmi-pace", "gnmi-interval", "gnmi-wait", "gnmi-linger"} {
		if fl := f.Lookup(n); fl != nil && fl.Changed {
			return badInput(fmt.Errorf("--%s needs --serve-gnmi ADDR", n))
		}
	}
	return nil
}

// parsePace parses --gnmi-pace.
func parsePace(s string) (float64, error) {
	switch s {
	case "realtime":
		return 1, nil
	case "asap":
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	if err != nil || math.IsNaN(v) || v <= 0 || v > maxPace {
		return 0, fmt.Errorf("--gnmi-pace %q: want realtime, asap or a slow-down factor above 0 and at most %g", s, float64(maxPace))
	}
	return v, nil
}

// resolve turns the flags into what the backend needs; it reads or makes
// the password. cleanup removes a generated password file.
func (o *serveOpts) resolve(stderr io.Writer) (sv *harness.ServeGNMI, cleanup func(), err error) {
	cleanup = func() {}
	pace, err := parsePace(o.pace)
	if err != nil {
		return nil, cleanup, badInput(err)
	}
	if o.user == "" {
		return nil, cleanup, badInput(errors.New("--gnmi-username: empty"))
	}
	if o.wait < 0 {
		return nil, cleanup, badInput(fmt.Errorf("--gnmi-wait: %d is not a number of subscriptions", o.wait))
	}
	if o.linger < 0 {
		return nil, cleanup, badInput(fmt.Errorf("--gnmi-linger: negative %v", o.linger))
	}
	sv = &harness.ServeGNMI{Addr: o.addr, Username: o.user, Pace: pace}
	file := o.passwordFile
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, cleanup, badInput(fmt.Errorf("--gnmi-password-file: %w", err))
		}
		if sv.Password = strings.TrimSpace(string(b)); sv.Password == "" {
			return nil, cleanup, badInput(fmt.Errorf("--gnmi-password-file %s: empty", file))
		}
	} else {
		dir, err := os.MkdirTemp("", "fabricbench-gnmi-")
		if err != nil {
			return nil, cleanup, infraError(fmt.Errorf("--serve-gnmi: a file for the password: %w", err))
		}
		cleanup = func() { os.RemoveAll(dir) }
		sv.Password = rand.Text()
		file = filepath.Join(dir, "password")
		if err := os.WriteFile(file, []byte(sv.Password+"\n"), 0o600); err != nil {
			cleanup()
			return nil, func() {}, infraError(fmt.Errorf("--serve-gnmi: writing the password file: %w", err))
		}
	}
	fmt.Fprintf(stderr, "gNMI: username %s, password in %s\n", sv.Username, file)
	return sv, cleanup, nil
}

// simServer is sim --serve-gnmi: the fabric's gNMI server and the
// publisher the simulation's samples go through.
type simServer struct {
	srv    *telemetry.Server
	pub    *simbackend.Publisher
	linger time.Duration
	err    error // the first publishing error
}

// startSimServer serves cfg's fabric on o.addr and hooks the samples into
// cfg (SampleEvery, OnSample). ctx ends the publishing (Ctrl-C).
func startSimServer(ctx context.Context, stderr io.Writer, o *serveOpts, cfg *sim.Config) (*simServer, func(), error) {
	sv, cleanup, err := o.resolve(stderr)
	if err != nil {
		return nil, cleanup, err
	}
	iv, err := units.ParsePs(o.interval)
	if err != nil || iv < 1e6 || iv > 1e12 || iv%1000 != 0 {
		cleanup()
		return nil, func() {}, badInput(fmt.Errorf("--gnmi-interval %q: want a whole number of nanoseconds from 1us to 1s", o.interval))
	}
	pub := simbackend.NewPublisher(cfg.Fabric)
	srv, err := telemetry.NewServer(pub.Devices(), telemetry.WithListenAddress(sv.Addr),
		telemetry.WithBaseInterval(time.Duration(iv/1000)), telemetry.WithCredentials(sv.Username, sv.Password))
	if err != nil {
		cleanup()
		return nil, func() {}, infraError(fmt.Errorf("--serve-gnmi %s: %w", sv.Addr, err))
	}
	pub.Serve(srv)
	pub.Pace = sv.Pace
	pub.Epoch = time.Now().Truncate(time.Millisecond).UnixNano()
	ss := &simServer{srv: srv, pub: pub, linger: o.linger}
	fmt.Fprintf(stderr, "gNMI: serving %d targets (the fabric's switches and hosts) on %s, a sample every %v of simulated time, %s\n",
		len(pub.Devices()), srv.Addr(), time.Duration(iv/1000), sv.PaceText())
	if o.wait > 0 {
		fmt.Fprintf(stderr, "gNMI: waiting for %d subscriptions before the simulation starts\n", o.wait)
		if err := srv.WaitSubscribers(ctx, o.wait); err != nil {
			ss.close()
			cleanup()
			return nil, func() {}, &exitError{code: exitInterrupted, err: fmt.Errorf("--gnmi-wait: %w", err)}
		}
	}
	cfg.SampleEvery = iv
	cfg.OnSample = func(s *sim.Sim, now int64) {
		if ss.err != nil {
			return
		}
		if err := pub.Publish(ctx, s, now); err != nil {
			ss.err = err
			s.Interrupt()
		}
	}
	return ss, cleanup, nil
}

// finish keeps serving for the linger time (or until ctx ends), then
// closes the server: every subscriber gets what is queued, then EOF.
func (ss *simServer) finish(ctx context.Context, stderr io.Writer) {
	if ss.linger > 0 && ctx.Err() == nil {
		fmt.Fprintf(stderr, "gNMI: the simulation ended; serving its final values for %v more (Ctrl-C stops)\n", ss.linger)
		t := time.NewTimer(ss.linger)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	ss.close()
}

func (ss *simServer) close() {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = ss.srv.Close(cctx)
}
