package runspec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// maxDescribeFlows bounds the flows Describe counts by building the
// workload (deterministic, no side effects); above it the count is left
// to the run, so that planning stays fast on large fabrics.
const maxDescribeFlows = 200_000

// Describe lists what the point runs, one line each: fabric, features,
// transport, telemetry, jobs (with their flow counts), faults, KPIs and
// the path controller.
func (p *RunSpec) Describe() []string {
	f := p.Fabric
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	add("fabric     %s", f.Summary())
	ft := &p.Features
	feats := []string{"ecmp hash " + strings.Join(ft.ECMPHash, ",")}
	switch {
	case ft.Adaptive:
		feats = append(feats, "adaptive routing")
	case ft.LowDiameter != "":
		feats = append(feats, "routing "+ft.LowDiameter)
	}
	if ft.ECN {
		feats = append(feats, fmt.Sprintf("ECN on (kmin %g, kmax %g)", ft.KMin, ft.KMax))
	} else {
		feats = append(feats, "ECN off")
	}
	feats = append(feats, "trimming "+onOff(ft.Trimming), "PFC "+onOff(ft.PFC))
	switch {
	case ft.QueueLongestPath:
		feats = append(feats, "queue longest-path")
	case ft.QueueBytes > 0:
		feats = append(feats, "queue "+fmtBytes(ft.QueueBytes))
	default:
		feats = append(feats, "queue bdp")
	}
	if ft.SRv6 {
		s := fmt.Sprintf("SRv6 (%d pinned paths", len(ft.SRv6Paths))
		if ft.SRv6Placement != "" {
			s += ", placement " + ft.SRv6Placement
		}
		feats = append(feats, s+")")
	}
	if len(ft.VRFs) > 0 {
		var names []string
		for _, v := range ft.VRFs {
			names = append(names, v.Name)
		}
		feats = append(feats, "VRFs "+strings.Join(names, ","))
	}
	add("features   %s", strings.Join(feats, "; "))
	t := &p.Transport
	tp := fmt.Sprintf("cc %s, lb %s, mtu %d, seed %d", t.CC, t.LB, t.MTU, t.Seed)
	if f.NumPlanes() > 1 {
		tp += fmt.Sprintf(", %d planes (%s)", f.NumPlanes(), orDash(t.Planes))
	}
	if t.Launcher != "" {
		tp += ", agents by " + t.Launcher
	}
	add("transport  %s", tp)
	if p.NoTelemetry {
		add("telemetry  off")
	} else {
		add("telemetry  gNMI every %v: %s", p.Interval, strings.Join(p.Paths, ", "))
	}
	flowCount := map[int]int{}
	total := 0
	for _, j := range p.Jobs {
		total += len(j.Hosts) * len(j.Hosts) * max(1, j.Reps)
	}
	if total <= maxDescribeFlows {
		if w, err := BuildWorkload(f, p.Jobs, p.Transport.Seed); err == nil {
			for _, fj := range w.FlowJob {
				flowCount[fj]++
			}
		}
	}
	for i, j := range p.Jobs {
		s := fmt.Sprintf("job        %s: %s over %d hosts, %s per flow", j.Name, j.Workload, len(j.Hosts), fmtBytes(j.Size))
		if j.Workload == Incast {
			s += fmt.Sprintf(" into %s", f.Host(j.Receiver).Name)
		}
		if j.Reps > 1 {
			s += fmt.Sprintf(", %d repetitions %s apart", j.Reps, units.FormatPsBrief(j.Gap))
		}
		if j.Start > 0 {
			s += ", from " + units.FormatPsBrief(j.Start)
		}
		if n, ok := flowCount[i]; ok {
			s += fmt.Sprintf("; %s", Plural(n, "flow", "flows"))
		}
		add("%s", s)
	}
	for _, fl := range p.Faults {
		add("fault      %s %s", fl.ID, fl.Description)
	}
	for _, k := range p.KPIs {
		name := k.Name
		if name == "" {
			name = k.Scope + "." + k.Metric
		}
		var bounds []string
		if k.Min != nil {
			bounds = append(bounds, ">= "+strconv.FormatFloat(*k.Min, 'g', -1, 64))
		}
		if k.Max != nil {
			bounds = append(bounds, "<= "+strconv.FormatFloat(*k.Max, 'g', -1, 64))
		}
		add("kpi        %s %s", name, strings.Join(bounds, ", "))
	}
	if c := p.Controller; c != nil {
		add("controller %s every %s", c.Kind, units.FormatPsBrief(c.Interval*1000))
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtBytes formats a size in binary units where it is a whole number of
// them (2MiB), else in bytes.
func fmtBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Plural is "1 run", "2 runs", "0 runs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
