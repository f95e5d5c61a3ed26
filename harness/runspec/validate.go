package runspec

import (
	"fmt"
	"slices"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// A FieldError is a rule a RunSpec breaks, reported at a field: Path is
// the suite's field path (e.g. transport.lb); a suite positions it
// (file:line:col), a CLI names its flag.
type FieldError struct {
	Path, Msg string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// Spelling names a field, with a value of it when value is not empty, in
// a rule's message: the suite's "features.ecmp.mode: port-msb"
// (SuiteSpelling) or a CLI's "--routing port-msb".
type Spelling func(path, value string) string

// SuiteSpelling spells fields as a suite file does.
func SuiteSpelling(path, value string) string {
	if value == "" {
		return path
	}
	return path + ": " + value
}

// Routing is the switches' routing mode of the run, as
// features.ecmp.mode spells it: hash, adaptive, flowlet or a
// low-diameter mode.
func (f *Features) Routing() string {
	switch {
	case f.Adaptive:
		return "adaptive"
	case f.LowDiameter != "":
		return f.LowDiameter
	case f.Flowlet:
		return "flowlet"
	}
	return "hash"
}

// Validate checks the rules between fields of a resolved run (what one
// field alone cannot say): the transport's settings together, the load
// balancer against the switches' routing, the jobs' flows against the
// VRFs. Each broken rule is one FieldError; name spells the fields the
// messages mention (nil: SuiteSpelling).
func (p *RunSpec) Validate(name Spelling) []FieldError {
	if name == nil {
		name = SuiteSpelling
	}
	var out []FieldError
	errf := func(path, format string, args ...any) {
		out = append(out, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if err := p.TransportParams.Validate(); err != nil {
		errf("transport", "%v", err)
	}
	lb, ft := p.TransportParams.LB, &p.Features
	mode := ft.Routing()
	if lb == transport.OWD && mode != "port-msb" {
		errf("transport.lb", "owd probes paths selected by the entropy's MSB: it needs %s (a dragonfly fabric)", name("features.ecmp.mode", "port-msb"))
	}
	if lb.PathAware() {
		// Source-guided routing gives a path-aware load balancer (ops-w,
		// spritz-scout, spritz-spray, flicr) the fabric's paths
		// (fine-grained Spritz); hash and minimal routing hash each
		// entropy (EV) onto a path the sender does not know, and it
		// learns per EV (coarse-grained, Spritz Sec. III-D), which needs
		// the EV, the UDP source port, in the hash. Adaptive, Valiant and
		// UGAL routing choose each packet's path in the switch, so an EV
		// names no path; with port-msb the entropy's MSB is owd's path
		// class.
		switch mode {
		case "hash", "minimal":
			if !slices.Contains(ft.ECMPHash, "src-port") {
				errf("transport.lb", "%s steers packets by their UDP source port (the entropy); %s must include src-port", lb, name("features.ecmp.hash", ""))
			}
		case "adaptive", "valiant", "valiant-hop", "ugal-l", "ugal-g":
			errf("transport.lb", "%s learns which entropies reach good paths, but with %s the switches choose each packet's path: use mode hash (ECMP hashing, coarse-grained) or source-guided (a dragonfly or slimfly fabric)", lb, name("features.ecmp.mode", mode))
		case "port-msb":
			errf("transport.lb", "%s cannot run with %s, where the entropy's MSB is owd's path class: use mode hash or source-guided", lb, name("features.ecmp.mode", "port-msb"))
		}
	}
	p.vrfRule(errf)
	return out
}

// vrfRule refuses every job with a flow between hosts whose VRFs do not
// reach each other, at the job's hosts and naming the first such pair:
// on any backend that traffic would be unreachable.
func (p *RunSpec) vrfRule(errf func(path, format string, args ...any)) {
	if len(p.Features.VRFs) == 0 || p.Fabric == nil {
		return
	}
	f := p.Fabric
	m := NewVRFMap(f.NumHosts(), p.Features.VRFs)
	// The flows the run will have: the same jobs and seed as the run
	// (on a copy: BuildWorkload settles the repetitions).
	jobs := slices.Clone(p.Jobs)
	w, err := BuildWorkload(f, jobs, p.Transport.Seed)
	if err != nil {
		return
	}
	bad := make([]bool, len(jobs))
	for fi, fl := range w.Matrix.Flows {
		ji := w.FlowJob[fi]
		if bad[ji] || m.Reachable(fl.Src, fl.Dst) {
			continue
		}
		bad[ji] = true
		errf(fmt.Sprintf("jobs[%d].hosts", ji),
			"job %s sends from %s (VRF %s) to %s (VRF %s): unreachable, the two VRFs leak no routes to each other; put both hosts in one VRF, add a leak (features.vrfs[].leak) or leave the pair out of the job",
			jobs[ji].Name, f.Host(fl.Src).Name, m.VRFOf(fl.Src), f.Host(fl.Dst).Name, m.VRFOf(fl.Dst))
	}
}
