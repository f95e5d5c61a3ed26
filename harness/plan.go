package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/units"
)

// InputError is bad input: a suite, fabric or option the user must fix.
// The CLI exits with status 2 for it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// InfraError is an infrastructure failure: the backend, the lab host, an
// agent, telemetry, InfluxDB or the results directory failed, not the
// input. The CLI exits with status 3 for it.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// infra wraps err as an InfraError unless it is one, or is bad input.
func infra(err error) error {
	var ie *InputError
	var fe *InfraError
	if err == nil || errors.As(err, &ie) || errors.As(err, &fe) {
		return err
	}
	return &InfraError{err}
}

// Plan loads a suite file and resolves every matrix point. All errors are
// *InputError and name the file and field.
func Plan(file string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanContext(context.Background(), file)
}

// planHook, when set (tests), is called after each point is resolved.
var planHook func()

// PlanContext is Plan that stops when ctx is done (Ctrl-C while a large
// matrix is planned), between steps and between points, returning
// ctx.Err(). Points with the same fabric share one *inventory.Fabric
// (read-only), so a matrix over a large fabric builds it once.
func PlanContext(ctx context.Context, file string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanBackend(ctx, file, "")
}

// PlanBackend is PlanContext for the named backend ("" checks for none):
// every point is checked against what the backend declares it can do
// (Capabilities), and what it cannot do is bad input at the suite field
// (file:line:col), before anything is brought up.
func PlanBackend(ctx context.Context, file, backend string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanWith(ctx, file, backend, "")
}

// PlanWith is PlanBackend with the suite's fabric replaced by a hardware
// inventory's (inv, "" for none: run --inventory).
func PlanWith(ctx context.Context, file, backend, inv string) (*suite.Suite, []*runspec.RunSpec, error) {
	pl, err := PlanSuite(ctx, file, backend, inv)
	if err != nil {
		return nil, nil, err
	}
	return pl.Suite, pl.Points, nil
}

// A SuitePlan is a suite resolved for a backend: everything a run does
// before its first side effect.
type SuitePlan struct {
	Suite   *suite.Suite
	Points  []*runspec.RunSpec
	Backend string // "" when planned for no backend
	// Caps is the backend's declaration (the zero value without one).
	Caps Capabilities
	// Notes are one line each: defaults that follow the backend, e.g. a
	// feature the suite leaves at its default that the backend cannot do
	// and that is therefore off.
	Notes []string
}

// PlanSuite is PlanWith returning the whole SuitePlan. A feature that is on by
// default (features.ecn, features.trimming) follows the backend: on where
// it can do it, off where it cannot, with a note saying so; asked for
// explicitly, what the backend cannot do is refused (bad input at the
// field).
func PlanSuite(ctx context.Context, file, backend, inv string) (*SuitePlan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pl := &SuitePlan{Backend: backend}
	var na suite.CheckFunc
	if backend != "" {
		caps, err := BackendCapabilities(backend)
		if err != nil {
			return nil, &InputError{fmt.Errorf("--backend: %w", err)}
		}
		pl.Caps = caps
		na = allChecks(caps.check(backend), needsCheck(backend, caps))
	}
	// Each checked point is resolved into its RunSpec once, and the
	// RunSpec's rules are reported at the suite's fields.
	d := defaults(pl.Caps)
	specs := map[*suite.Suite]*runspec.RunSpec{}
	resolveCheck := func(s *suite.Suite, errf func(path, format string, args ...any)) {
		p, err := runspec.Resolve(suite.Point{Suite: s}, d)
		if err != nil {
			return // reported below, when the point is planned
		}
		specs[s] = p
		for _, e := range p.Validate(runspec.SuiteSpelling) {
			errf(e.Path, "%s", e.Msg)
		}
	}
	check := allChecks(resolveCheck, knownNeeds())
	s, err := suite.LoadWith(file, suite.Options{Inventory: inv})
	if err != nil {
		return nil, &InputError{err}
	}
	pl.Suite = s
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pts, err := s.PointsApplicable(check, na)
	if err != nil {
		return nil, &InputError{err}
	}
	notes := map[string]bool{}
	var pc PlanChecker
	if backend != "" {
		if b, err := newBackend(backend); err == nil {
			pc, _ = b.(PlanChecker)
		}
	}
	for _, sp := range pts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := specs[sp.Suite], error(nil)
		if p == nil {
			p, err = runspec.Resolve(sp, d)
		} else {
			p.ID, p.Params = sp.ID, sp.Params
		}
		if planHook != nil {
			planHook()
		}
		if err != nil && len(sp.NotApplicable) > 0 {
			// Not run: what it cannot do may be why it does not resolve.
			p, err = &runspec.RunSpec{ID: sp.ID, Params: sp.Params, Suite: sp.Suite}, nil
		}
		if p != nil {
			p.Test, p.NotApplicable = sp.Test, sp.NotApplicable
		}
		if err != nil {
			if len(pts) > 1 {
				err = fmt.Errorf("%s: matrix point %s: %w", file, sp.ID, err)
			} else {
				err = fmt.Errorf("%s: %w", file, err)
			}
			return nil, &InputError{err}
		}
		if pc != nil {
			if err := pc.CheckPlan(p); err != nil {
				return nil, &InputError{fmt.Errorf("%s: %w", file, err)}
			}
		}
		for _, n := range defaultNotes(sp.Suite, backend, pl.Caps) {
			if !notes[n] {
				notes[n] = true
				pl.Notes = append(pl.Notes, n)
			}
		}
		pl.Points = append(pl.Points, p)
	}
	return pl, nil
}

// featureOn is whether a default-on feature is on: as the suite says, or,
// left at its default, whether the backend can do it (off where only some
// devices can: Capabilities.ByDevice).
func featureOn(enabled *bool, f Feature, caps Capabilities) bool {
	if enabled != nil {
		return *enabled
	}
	_, cannot := caps.Unsupported[f]
	_, byDevice := caps.ByDevice[f]
	return !cannot && !byDevice
}

// defaultNotes says which default-on features s leaves at their default
// and the backend cannot do, or does only where its devices can (so they
// are off), one line each.
func defaultNotes(s *suite.Suite, backend string, caps Capabilities) []string {
	var out []string
	for _, k := range FeatureKinds() {
		if k.Enabled == nil || k.Enabled(&s.Features) != nil {
			continue
		}
		if reason, cannot := caps.Unsupported[k.Feature]; cannot {
			out = append(out, fmt.Sprintf("%s: off (on by default, but the %s backend cannot do %s: %s)", k.EnabledField, backend, k.Doc, reason))
		} else if reason, some := caps.ByDevice[k.Feature]; some {
			out = append(out, fmt.Sprintf("%s: off (on by default, but on the %s backend only where the devices can: %s)", k.EnabledField, backend, reason))
		}
	}
	return out
}

// defaults are what the backend settles for a run that the suite leaves
// open: the default-on features it can do and what telemetry.interval
// fastest means.
func defaults(caps Capabilities) runspec.Defaults {
	return runspec.Defaults{ECN: featureOn(nil, FeatECN, caps), Trimming: featureOn(nil, FeatTrimming, caps),
		FastestInterval: max(int64(caps.MinInterval)*1000, 100*1_000_000)}
}

// allChecks runs the checks that are not nil, in order.
func allChecks(checks ...suite.CheckFunc) suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		for _, c := range checks {
			if c != nil {
				c(s, errf)
			}
		}
	}
}

// check returns the suite check of the named backend's capabilities: one
// error per field that asks for what the backend cannot do.
func (c Capabilities) check(backend string) suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		cannot := func(path string, what, reason, fix string) {
			msg := fmt.Sprintf("the %s backend cannot do %s: %s", backend, what, reason)
			if fix != "" {
				msg += "; " + fix
			}
			errf(path, "%s", msg)
		}
		if l := string(s.Agents.Launcher); l != "" && l != suite.LauncherSSH && c.Launchers != nil && !slices.Contains(c.Launchers, l) {
			cannot("agents.launcher", "agents.launcher "+l, "it starts the agents with "+strings.Join(c.Launchers, " or "), "srun starts agents on the hardware backend (--inventory)")
		}
		if c.NeedsInventory && s.Fabric.Inventory == "" {
			errf("fabric", "the %s backend runs on the devices of a hardware inventory: give --inventory FILE or set fabric.inventory (docs/inventory.md)", backend)
		}
		// One loop over the feature registry (features.go), asking only
		// about the features the backend cannot do.
		for _, k := range FeatureKinds() {
			reason, no := c.Unsupported[k.Feature]
			if !no {
				continue
			}
			for _, a := range k.Asks(s) {
				cannot(a.Path, k.Doc, reason, a.Fix)
			}
		}
		ft := &s.Features
		for _, need := range c.ECMPHashNeeds {
			if !slices.Contains(ft.ECMP.Hash, suite.HashField(need)) {
				cannot("features.ecmp.hash", "a hash without "+need, c.ECMPHashReason, "")
				break
			}
		}
		if c.MaxMTU > 0 && s.Transport.MTU > c.MaxMTU {
			cannot("transport.mtu", fmt.Sprintf("an mtu of %d", s.Transport.MTU), c.MaxMTUReason, fmt.Sprintf("at most %d", c.MaxMTU))
		}
		if c.MinInterval > 0 && (s.Telemetry.Enabled == nil || *s.Telemetry.Enabled) {
			if iv := s.Telemetry.Interval; !iv.Fastest() && units.Duration(iv.Ps()) < c.MinInterval {
				cannot("telemetry.interval", "telemetry every "+iv.String(), c.MinIntervalReason,
					fmt.Sprintf("at least %v (or telemetry.enabled: false)", c.MinInterval))
			}
		}
		if c.Workloads != nil {
			for i, j := range s.Jobs {
				if !slices.Contains(c.Workloads, string(j.Workload)) {
					cannot(fmt.Sprintf("jobs[%d].workload", i), "the "+string(j.Workload)+" workload",
						"it runs "+strings.Join(c.Workloads, ", "), "")
				}
			}
		}
		if c.FaultKinds != nil {
			for i, f := range s.Faults {
				if !slices.Contains(c.FaultKinds, string(f.Kind)) {
					cannot(fmt.Sprintf("faults[%d].kind", i), string(f.Kind)+" faults",
						"it injects "+strings.Join(c.FaultKinds, ", "), "")
				}
			}
		}
	}
}
