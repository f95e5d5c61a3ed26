package faultbench

import (
	"fmt"
	"strconv"
	"strings"
)

// Fault classes: what the catalogue's faulted scenarios exercise. A
// scenario without faults has class Healthy.
const (
	ClassLeafUplink    = "leaf-uplink"     // degraded leaf (ToR) uplink port
	ClassSpineDownlink = "spine-downlink"  // degraded spine (agg) port towards a leaf (ToR)
	ClassAggCore       = "agg-core"        // degraded agg-core link or port (3-tier only)
	ClassSlowNIC       = "slow-nic"        // host NIC at half rate
	ClassDouble        = "double"          // two degraded ports on different switches
	ClassLinkDown      = "link-down"       // a link down, never restored
	ClassLinkDownShort = "link-down-short" // a link down for a few sampling intervals
	ClassFlap          = "flap"            // a flapping link
	Healthy            = "healthy"         // no fault
)

// Classes lists the fault classes in table order.
var Classes = []string{
	ClassLeafUplink, ClassSpineDownlink, ClassAggCore, ClassSlowNIC,
	ClassDouble, ClassLinkDown, ClassLinkDownShort, ClassFlap,
}

// LBs lists the load balancers in table order.
var LBs = []string{"ecmp", "ops", "reps"}

// Settings shared by every scenario.
const (
	// TelemetryInterval is the gNMI sample interval.
	TelemetryInterval = "100us"
	// Reconverge is the simulator's ECMP recomputation delay after a link
	// goes down or up (sim.reconverge). Without it, ECMP flows hashed onto
	// a link that stays down never complete and the run goes on to the
	// simulator's 1s limit; with it, the dead link drops packets for 10
	// intervals before routing avoids it.
	Reconverge = "1ms"
	// SimEnd bounds a run's simulated time (sim.end), so that a scenario
	// whose jobs cannot finish still ends quickly.
	SimEnd = "20ms"
)

// Fault is one injected fault, as in a suite file's faults list: Kind is
// degrade, down or flap; exactly one of Port ("dev:port", its transmit
// side), Link ("A-B", both directions) or NIC (a host name: its access
// link, both directions) is set.
type Fault struct {
	Kind     string
	Port     string
	Link     string
	NIC      string
	Fraction float64 // degrade: the share of the rate kept
	At       string  // e.g. "200us"
	Until    string  // restore time; empty: never
	Period   string  // flap period
	Count    int     // flap count
}

// Target names what the fault hits: "port leaf1:Ethernet5", "link
// leaf0-spine1" or "nic host6".
func (f Fault) Target() string {
	switch {
	case f.Port != "":
		return "port " + f.Port
	case f.Link != "":
		return "link " + f.Link
	case f.NIC != "":
		return "nic " + f.NIC
	}
	return "nothing"
}

// String describes the fault on one line.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(f.Kind + " " + f.Target())
	if f.Kind == "degrade" {
		b.WriteString(" to " + strconv.FormatFloat(f.Fraction, 'g', -1, 64))
	}
	if f.At != "" {
		b.WriteString(" at " + f.At)
	}
	if f.Until != "" {
		b.WriteString(" until " + f.Until)
	}
	if f.Kind == "flap" {
		fmt.Fprintf(&b, " period %s x%d", f.Period, f.Count)
	}
	return b.String()
}

func (f Fault) yaml() string {
	parts := []string{"kind: " + f.Kind}
	switch {
	case f.Port != "":
		parts = append(parts, "port: "+strconv.Quote(f.Port))
	case f.Link != "":
		parts = append(parts, "link: "+strconv.Quote(f.Link))
	case f.NIC != "":
		parts = append(parts, "nic: "+strconv.Quote(f.NIC))
	}
	if f.Kind == "degrade" {
		parts = append(parts, "fraction: "+strconv.FormatFloat(f.Fraction, 'g', -1, 64))
	}
	if f.At != "" {
		parts = append(parts, "at: "+f.At)
	}
	if f.Until != "" {
		parts = append(parts, "until: "+f.Until)
	}
	if f.Period != "" {
		parts = append(parts, "period: "+f.Period)
	}
	if f.Count != 0 {
		parts = append(parts, "count: "+strconv.Itoa(f.Count))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Job is one workload of a scenario.
type Job struct {
	Name     string // e.g. "perm"
	Workload string // permutation, all-to-all, all-reduce, incast
	Size     string // e.g. "8MiB"
	// Hosts are the participants in order (the ring order of an
	// all-reduce); empty: every host, in host order.
	Hosts []string
	// Label, when set, describes the host selection in tables ("striped").
	Label string
	// Incast: the fan-in (Senders) and the receiver; Start delays the
	// job ("" at 0).
	Senders  int
	Receiver string
	Start    string
}

func (j Job) String() string {
	s := j.Workload + " " + j.Size
	if j.Workload == "incast" {
		s = fmt.Sprintf("incast %d:1 %s into %s", j.Senders, j.Size, j.Receiver)
	}
	if j.Label != "" {
		s += " " + j.Label
	}
	if j.Start != "" {
		s += " from " + j.Start
	}
	return s
}

func (j Job) yaml() string {
	s := fmt.Sprintf("{name: %s, workload: %s, size: %s", j.Name, j.Workload, j.Size)
	if len(j.Hosts) > 0 {
		s += ", hosts: [" + strings.Join(j.Hosts, ", ") + "]"
	}
	if j.Senders > 0 {
		s += ", senders: " + strconv.Itoa(j.Senders)
	}
	if j.Receiver != "" {
		s += ", receiver: " + j.Receiver
	}
	if j.Start != "" {
		s += ", start: " + j.Start
	}
	return s + "}"
}

// Scenario is one simulated run: a fabric, its jobs, the faults injected
// during them, the load balancer and the seed.
type Scenario struct {
	// ID is unique in the catalogue and safe in file names, e.g.
	// "ls03-ops-s2".
	ID string
	// Fabric is the generator spec; FabricName a short label for tables
	// ("leafspine 4x4x4", "fattree 36h 3-tier").
	Fabric     string
	FabricName string
	Class      string // one of Classes, or Healthy
	Jobs       []Job
	Faults     []Fault
	LB         string // ecmp, ops, reps
	Seed       uint64
	// Settings beyond the catalogue's defaults (zero: the default).
	Settings Settings
	// World groups scenarios for the tables (Worlds: trees, lossless,
	// dragonfly, ...).
	World string
	// Rep: the scenario is in the representative subset the default test
	// runs (Representative).
	Rep bool
	// Backend runs the scenario ("" the simulator; netns the FRR lab).
	Backend string
}

// Settings are a scenario's suite settings that differ from the
// defaults: a lossless fabric, a routing mode, the congestion control,
// the telemetry interval, the plane load balancing of a multi-plane
// fabric and the simulated time limit.
type Settings struct {
	PFC      bool   // features.pfc.enabled
	Routing  string // features.ecmp.mode (hash, minimal, ugal-l, source-guided, ...)
	CC       string // transport.cc (nscc, dctcp)
	Interval string // telemetry.interval ("" TelemetryInterval)
	Planes   string // transport.planes (plb, global, entropy)
	End      string // sim.end ("" SimEnd)
	Preset   string // preset (spritz on low-diameter fabrics)
	NoECN    bool   // features.ecn.enabled: false
	NoTrim   bool   // features.trimming.enabled: false
	MTU      int    // transport.mtu (0: the default)
}

// interval is the scenario's telemetry interval.
func (s Scenario) interval() string {
	if s.Settings.Interval != "" {
		return s.Settings.Interval
	}
	return TelemetryInterval
}

// String describes the scenario on one line.
func (s Scenario) String() string {
	var jobs, faults []string
	for _, j := range s.Jobs {
		jobs = append(jobs, j.String())
	}
	for _, f := range s.Faults {
		faults = append(faults, f.String())
	}
	var set []string
	st := s.Settings
	if st.PFC {
		set = append(set, "pfc")
	}
	if st.Routing != "" {
		set = append(set, "routing="+st.Routing)
	}
	if st.CC != "" {
		set = append(set, "cc="+st.CC)
	}
	if st.NoECN {
		set = append(set, "no ecn")
	}
	if st.Interval != "" {
		set = append(set, "telemetry="+st.Interval)
	}
	if st.Planes != "" {
		set = append(set, "planes="+st.Planes)
	}
	if len(set) > 0 {
		set[0] = ", " + set[0]
	}
	desc := fmt.Sprintf("%s [%s, %s, %s, lb=%s%s, seed=%d]", s.ID, s.Class, s.FabricName, strings.Join(jobs, " + "), s.LB, strings.Join(set, ", "), s.Seed)
	if len(faults) > 0 {
		desc += " " + strings.Join(faults, "; ")
	}
	return desc
}

// SuiteYAML is the suite file that runs the scenario: one run, telemetry
// every TelemetryInterval, ECMP reconvergence after Reconverge, at most
// SimEnd of simulated time, no KPIs (the benchmark judges the anomaly
// report, not KPIs).
func (s Scenario) SuiteYAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fabricbench fault-localisation benchmark scenario (generated)\n")
	fmt.Fprintf(&b, "# %s\n", s.String())
	fmt.Fprintf(&b, "name: %s\n", strconv.Quote(s.ID))
	fmt.Fprintf(&b, "seed: %d\n", s.Seed)
	st := s.Settings
	if st.Preset != "" {
		fmt.Fprintf(&b, "preset: %s\n", st.Preset)
	}
	fmt.Fprintf(&b, "fabric: {spec: %s}\n", strconv.Quote(s.Fabric))
	var feat []string
	if st.PFC {
		feat = append(feat, "pfc: {enabled: true}")
	}
	if st.Routing != "" {
		feat = append(feat, "ecmp: {mode: "+st.Routing+"}")
	}
	if st.NoECN {
		feat = append(feat, "ecn: {enabled: false}")
	}
	if st.NoTrim {
		feat = append(feat, "trimming: {enabled: false}")
	}
	if len(feat) > 0 {
		fmt.Fprintf(&b, "features: {%s}\n", strings.Join(feat, ", "))
	}
	tr := []string{"lb: " + s.LB}
	if st.CC != "" {
		tr = append(tr, "cc: "+st.CC)
	}
	if st.Planes != "" {
		tr = append(tr, "planes: "+st.Planes)
	}
	if st.MTU > 0 {
		tr = append(tr, "mtu: "+strconv.Itoa(st.MTU))
	}
	fmt.Fprintf(&b, "transport: {%s}\n", strings.Join(tr, ", "))
	fmt.Fprintf(&b, "telemetry: {interval: %s}\n", s.interval())
	end := SimEnd
	if st.End != "" {
		end = st.End
	}
	if s.Backend == "" || s.Backend == "sim" {
		fmt.Fprintf(&b, "sim: {reconverge: %s, end: %s}\n", Reconverge, end)
	}
	b.WriteString("jobs:\n")
	for _, j := range s.Jobs {
		b.WriteString("  - " + j.yaml() + "\n")
	}
	if len(s.Faults) > 0 {
		b.WriteString("faults:\n")
		for _, f := range s.Faults {
			b.WriteString("  - " + f.yaml() + "\n")
		}
	}
	return b.String()
}
