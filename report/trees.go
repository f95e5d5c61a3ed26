package report

import (
	"fmt"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// This file renders a run's PFC congestion trees (results.CongestionTree)
// and the anomalies' times to detect.

// Detected formats when an anomaly was found: "detected at 300 µs (100 µs
// to detect)", "" for results without a detection time.
func Detected(a *results.Anomaly) string {
	if a.DetectedUs <= 0 && a.TimeToDetectUs <= 0 {
		return ""
	}
	return fmt.Sprintf("detected at %s (%s to detect)", fmtUs(a.DetectedUs), fmtUs(a.TimeToDetectUs))
}

// TreeLine describes a congestion tree on one line: "leaf3 (incast into
// host12, 0–200 µs): 3 hops, 11 ports and 2 host NICs paused, 690 µs
// paused, 89 pause frames (max 80000/s per port)".
func TreeLine(t *results.CongestionTree) string {
	what := t.Cause
	switch t.Cause {
	case results.TreeIncast:
		what = "incast into " + strings.Join(t.RootHosts, ", ")
	case results.TreeAnomaly:
		what = fmt.Sprintf("rooted at anomaly #%d", t.Anomaly)
	case results.TreeHotPort:
		what = "hot port " + strings.Join(t.RootPorts, ", ")
	}
	if w := fmtWindow(t.StartUs, t.EndUs); w != "" {
		what += ", " + w
	}
	return fmt.Sprintf("%s (%s): %d hop(s), %d port(s) and %d host NIC(s) paused, %s paused, %s pause frames (busiest port %s/s)",
		t.Root, what, t.Hops, t.PortsPaused, t.HostsPaused, fmtUs(t.PausedUs), fmtNum(t.PauseFrames), fmtNum(t.MaxPauseRate))
}

type treeView struct {
	Root, RootPorts, Cause string
	AnomalyHref            string
	Anomaly                int
	Window                 string
	Hops, Switches         int
	PortsPaused            int
	HostsPaused            int
	Paused, Frames, Rate   string
	Evidence               string
	Ports                  []pausedPortView
	Victims                string
}

type pausedPortView struct {
	Port          string
	Hop           int
	Paused        string
	Frames, Rate  string
	HostNIC, Root bool
}

// buildTrees fills the congestion-tree views of a run; byRank maps anomaly
// ranks to their entries' anchors.
func buildTrees(v *runView, run *results.Run, byRank map[int]string) {
	for _, t := range run.CongestionTrees {
		tv := treeView{
			Root: t.Root, RootPorts: strings.Join(t.RootPorts, ", "), Cause: t.Cause, Anomaly: t.Anomaly,
			AnomalyHref: byRank[t.Anomaly], Window: fmtWindow(t.StartUs, t.EndUs),
			Hops: t.Hops, Switches: t.Switches, PortsPaused: t.PortsPaused, HostsPaused: t.HostsPaused,
			Paused: fmtUs(t.PausedUs), Frames: fmtNum(t.PauseFrames), Rate: fmtNum(t.MaxPauseRate) + "/s",
			Evidence: t.Evidence, Victims: strings.Join(t.Victims, ", "),
		}
		if len(t.RootHosts) > 0 {
			tv.Cause += " (" + strings.Join(t.RootHosts, ", ") + ")"
		}
		for _, p := range t.Ports {
			pv := pausedPortView{Port: p.Port, Hop: p.Hop, Frames: fmtNum(p.PauseFrames), Rate: fmtNum(p.PauseRate) + "/s"}
			if p.PausedUs > 0 {
				pv.Paused = fmtUs(p.PausedUs)
			} else {
				pv.Paused = "—"
			}
			tv.Ports = append(tv.Ports, pv)
		}
		v.Trees = append(v.Trees, tv)
	}
	v.AnalysisNotes = run.AnalysisNotes
}

// treesTemplate is the run's congestion-tree section (html.go includes
// it after the anomalies).
const treesTemplate = `{{define "trees"}}{{if .AnalysisNotes}}{{range .AnalysisNotes}}<p class="note">Analysis: {{.}}</p>{{end}}{{end}}
{{if .Trees}}<h3>Congestion trees (PFC)</h3>
<p class="note">Lossless fabric: where pause frames spread from a switch whose egress ports filled while they were not paused themselves (the root) to the ports and host NICs they paused. A tree rooted at an anomaly is that anomaly's; the others are informational (a healthy incast is a property of the workload, not a fault) and are not anomalies. Pause count per second and paused time per port as in the IETF draft on benchmarking AI training fabrics.</p>
<div class="scroll"><table class="trees">
<thead><tr><th>root</th><th>cause</th><th class="num">window</th><th class="num">hops</th><th class="num">switches</th><th class="num">ports paused</th><th class="num">host NICs paused</th><th class="num">paused</th><th class="num">pause frames</th><th class="num">busiest port</th><th>paused ports</th></tr></thead>
<tbody>{{range .Trees}}<tr><td><b>{{.Root}}</b><br><span class="vgroup">{{.RootPorts}}</span></td><td>{{if .Anomaly}}{{if .AnomalyHref}}<a href="#{{.AnomalyHref}}">anomaly #{{.Anomaly}}</a>{{else}}anomaly #{{.Anomaly}}{{end}}{{else}}<span class="tag">{{.Cause}}</span>{{end}}</td><td class="num">{{.Window}}</td><td class="num">{{.Hops}}</td><td class="num">{{.Switches}}</td><td class="num">{{.PortsPaused}}</td><td class="num">{{.HostsPaused}}</td><td class="num">{{.Paused}}</td><td class="num">{{.Frames}}</td><td class="num">{{.Rate}}</td><td><details><summary>{{len .Ports}} port{{if gt (len .Ports) 1}}s{{end}}</summary><table class="paused"><thead><tr><th>port</th><th class="num">hop</th><th class="num">paused</th><th class="num">frames</th><th class="num">frames/s</th></tr></thead><tbody>{{range .Ports}}<tr><td>{{.Port}}</td><td class="num">{{.Hop}}</td><td class="num">{{.Paused}}</td><td class="num">{{.Frames}}</td><td class="num">{{.Rate}}</td></tr>{{end}}</tbody></table>{{if .Victims}}<p class="note">hosts slowed: {{.Victims}}</p>{{end}}</details></td></tr>
{{end}}</tbody></table></div>{{end}}{{end}}`

// anomalyAnchors maps the ranks of the run's anomalies to their entries'
// anchors.
func (v *runView) anomalyAnchors() map[int]string {
	out := map[int]string{}
	for _, a := range v.Anomalies {
		if out[a.Rank] == "" {
			out[a.Rank] = a.ID
		}
	}
	return out
}
