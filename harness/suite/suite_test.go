package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/internal/yamlx"
)

// base is a minimal valid suite; cases append to it from line 7 on.
const base = `fabric:
  spec: leafspine:leaves=2,spines=2,hosts_per_leaf=4
jobs:
  - name: perm
    workload: permutation
    size: 1MiB
`

func mustLoad(t *testing.T, path string) *Suite {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return s
}

func mustParse(t *testing.T, name, doc string) *Suite {
	t.Helper()
	s, err := Parse(name, []byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s):\n%v", name, err)
	}
	return s
}

func TestLoadSmoke(t *testing.T) {
	s := mustLoad(t, "testdata/smoke.yaml")
	if s.Name != "smoke" || s.Seed != 7 || s.File != "testdata/smoke.yaml" {
		t.Errorf("name %q seed %d file %q", s.Name, s.Seed, s.File)
	}
	f := s.Features
	// Left out, ECN and trimming follow the backend (harness.PlanSuite).
	if f.ECN.Enabled != nil || f.ECN.KMin != 0 || f.ECN.KMax != 0.8 {
		t.Errorf("ECN = %v %v %v; want the backend's default, explicit kmin 0 kept, default kmax 0.8", f.ECN.Enabled, f.ECN.KMin, f.ECN.KMax)
	}
	if f.Trimming.Enabled != nil {
		t.Error("trimming left out is not the backend's default")
	}
	if !reflect.DeepEqual(f.ECMP.Hash, []HashField{"src-ip", "dst-ip", "src-port", "dst-port", "protocol"}) {
		t.Errorf("hash = %v", f.ECMP.Hash)
	}
	if f.Queue.String() != "512KiB" {
		t.Errorf("queue = %q", f.Queue)
	}
	if tr := s.Transport; tr.CC != "dctcp" || tr.LB != "reps" || tr.MTU != 4096 {
		t.Errorf("transport = %+v", tr)
	}
	if s.Telemetry.Interval.String() != "1ms" || !reflect.DeepEqual(s.Telemetry.Paths, DefaultPaths) {
		t.Errorf("telemetry = %+v", s.Telemetry)
	}
	if len(s.Jobs) != 3 {
		t.Fatalf("%d jobs", len(s.Jobs))
	}
	perm, incast, a2a := s.Jobs[0], s.Jobs[1], s.Jobs[2]
	if perm.Hosts != "all" || perm.Start.String() != "0" || perm.Gap.String() != "0" || perm.Repetitions != 1 {
		t.Errorf("perm defaults: %+v", perm)
	}
	if !reflect.DeepEqual(incast.Hosts, []string{"host0", "host1", "host2", "host3", "host4"}) || incast.Receiver != "host4" || incast.Senders != 3 || incast.Start.String() != "100us" {
		t.Errorf("incast: %+v", incast)
	}
	if a2a.Hosts != 8 || a2a.Window != 2 || a2a.Repetitions != 3 || a2a.Gap.String() != "10us" {
		t.Errorf("a2a: %+v (hosts %T)", a2a, a2a.Hosts)
	}
	if len(s.Faults) != 3 {
		t.Fatalf("%d faults", len(s.Faults))
	}
	if ft := s.Faults[0]; ft.Kind != "degrade" || ft.Link != "leaf0-spine1" || ft.At.String() != "50us" || ft.Until.String() != "500us" || ft.Fraction != 0.5 {
		t.Errorf("degrade fault: %+v", ft)
	}
	if ft := s.Faults[1]; ft.At.String() != "0" || ft.Port != "leaf1:Ethernet4" {
		t.Errorf("port fault: %+v", ft)
	}
	if ft := s.Faults[2]; ft.Kind != "flap" || ft.NIC != "host3" || ft.Period.String() != "20us" || ft.Count != 2 {
		t.Errorf("flap fault: %+v", ft)
	}
	k0, k1 := s.KPIs[0], s.KPIs[1]
	if k0.Name != "fct_p99_us" || k0.Scope != "perm" || k0.Max == nil || *k0.Max != 400 || k0.Min != nil {
		t.Errorf("kpi 0: %+v", k0)
	}
	if k1.Name != "coverage" || k1.Scope != "fabric" || k1.Min == nil || *k1.Min != 0.5 {
		t.Errorf("kpi 1: %+v", k1)
	}
	want := Analysis{Symmetry: SymmetryOpts{Z: 3.5, MinDeviation: 0.2, VictimDeviation: 0.1, ImbalanceCV: 0.15}, Straggler: StragglerOpts{Low: 0.1, High: 0.8, MinMiddle: 0.5},
		Culprit: CulpritOpts{Backlog: mustSize("16KiB"), Capacity: 0.8, Loss: 0.5, MinIntervals: 4, MinBoundIntervals: 1, MinLostPackets: 8, MergeGap: 2}}
	if s.Analysis != want {
		t.Errorf("analysis = %+v", s.Analysis)
	}

	fab, err := s.LoadFabric()
	if err != nil {
		t.Fatal(err)
	}
	if fab.NumHosts() != 16 {
		t.Fatalf("%d hosts", fab.NumHosts())
	}
	for i, want := range [][]int{seq(16), {0, 1, 2, 3, 4}, seq(8)} {
		got, err := s.Jobs[i].Participants(fab)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("jobs[%d].Participants = %v, %v; want %v", i, got, err, want)
		}
	}

	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 1 || pts[0].ID != "smoke" || len(pts[0].Params) != 0 {
		t.Fatalf("points = %+v", pts)
	}
	p := pts[0].Suite
	if p == s || p.Name != "smoke" || p.Transport != s.Transport || !reflect.DeepEqual(p.Jobs, s.Jobs) || !reflect.DeepEqual(p.Faults, s.Faults) {
		t.Errorf("point suite differs from the suite: %+v", p)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, filepath.Join("some", "dir", "nightly.yaml"), base)
	if s.Name != "nightly" || s.Seed != 1 {
		t.Errorf("name %q seed %d", s.Name, s.Seed)
	}
	if s.Transport.CC != "nscc" || s.Transport.LB != "reps" || s.Transport.MTU != 4096 {
		t.Errorf("transport = %+v", s.Transport)
	}
	if s.Telemetry.Interval.String() != "100us" || len(s.Telemetry.Paths) != 2 || s.Telemetry.Paths[0] != "/interfaces/interface/state/counters" ||
		s.Telemetry.Paths[1] != "/qos/interfaces/interface/output/queues/queue/state" {
		t.Errorf("telemetry = %+v", s.Telemetry)
	}
	f := s.Features
	if f.ECN.Enabled != nil || f.ECN.KMin != 0.2 || f.ECN.KMax != 0.8 || f.Trimming.Enabled != nil || f.Queue.String() != "bdp" {
		t.Errorf("features = %+v", f)
	}
	if f.PFC != nil || f.SRv6 != nil || s.Telemetry.Sink.Influx != nil {
		t.Error("optional sections should stay nil")
	}
	j := s.Jobs[0]
	if j.Hosts != "all" || j.Start.String() != "0" || j.Gap.String() != "0" || j.Repetitions != 1 {
		t.Errorf("job = %+v", j)
	}

	// Explicit zero and false values are kept, not defaulted.
	s = mustParse(t, "x.yaml", base+`seed: 0
features:
  ecn: {enabled: false, kmin: 0, kmax: 1}
  trimming: {enabled: false}
  ecmp: {hash: [dst-ip, flow-label]}
transport: {cc: smartt, lb: spray, mtu: 9000}
`)
	if s.Seed != 0 || *s.Features.ECN.Enabled || s.Features.ECN.KMin != 0 || s.Features.ECN.KMax != 1 || *s.Features.Trimming.Enabled {
		t.Errorf("explicit values lost: seed %d features %+v", s.Seed, s.Features)
	}
	if !reflect.DeepEqual(s.Features.ECMP.Hash, []HashField{"dst-ip", "flow-label"}) {
		t.Errorf("hash = %v", s.Features.ECMP.Hash)
	}
	if s.Transport.CC != "nscc" || s.Transport.LB != "ops" || s.Transport.MTU != 9000 {
		t.Errorf("transport not canonical: %+v", s.Transport)
	}
}

func TestOptionalSections(t *testing.T) {
	dir := t.TempDir()
	doc := base + `features:
  pfc: {enabled: true, priorities: [3, 4]}
  srv6:
    locator: fcbb:bb00::/32
    usid: true
    paths:
      - {name: p0, src: host0, dst: host5, via: [leaf0, spine1, leaf1]}
  vrfs:
    - {name: red, table: 10, hosts: [host0, host1]}
    - {name: blue, table: 20}
telemetry:
  sink:
    influx: {url: "https://influx.example:8086", bucket: fb, org: lab, token_file: secrets/token}
sim: {end: 2ms, reconverge: 100us}
`
	path := filepath.Join(dir, "opt.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, path)
	if s.Features.PFC == nil || !reflect.DeepEqual(s.Features.PFC.Priorities, []int{3, 4}) {
		t.Errorf("pfc = %+v", s.Features.PFC)
	}
	if s.Features.SRv6 == nil || len(s.Features.SRv6.Paths) != 1 || s.Features.SRv6.Paths[0].Via[1] != "spine1" {
		t.Errorf("srv6 = %+v", s.Features.SRv6)
	}
	if len(s.Features.VRFs) != 2 || s.Features.VRFs[1].Table != 20 {
		t.Errorf("vrfs = %+v", s.Features.VRFs)
	}
	in := s.Telemetry.Sink.Influx
	if in == nil || in.TokenFile != filepath.Join(dir, "secrets", "token") {
		t.Errorf("influx = %+v; token file must be resolved against the suite's directory (and need not exist)", in)
	}
	if s.Sim.End.String() != "2ms" || s.Sim.Reconverge.String() != "100us" {
		t.Errorf("sim = %+v", s.Sim)
	}
}

func TestFabricFile(t *testing.T) {
	s := mustLoad(t, "testdata/topo.yaml")
	abs, _ := filepath.Abs("testdata/tiny.topo")
	if s.Fabric.File != abs {
		t.Errorf("fabric.file = %q, want %q", s.Fabric.File, abs)
	}
	f, err := s.LoadFabric()
	if err != nil {
		t.Fatal(err)
	}
	if f.NumHosts() != 32 {
		t.Errorf("%d hosts", f.NumHosts())
	}
	got, err := s.Jobs[0].Participants(f)
	if err != nil || !reflect.DeepEqual(got, []int{0, 31}) {
		t.Errorf("participants = %v, %v", got, err)
	}

	// A missing file is reported at fabric.file, relative to the suite.
	_, err = Parse("testdata/missing.yaml", []byte("fabric:\n  file: nope.topo\njobs: []\n"))
	if err == nil || !strings.Contains(err.Error(), `testdata/missing.yaml:2:9: fabric.file: "nope.topo": no such file`) {
		t.Errorf("err = %v", err)
	}
}

func TestMatrix(t *testing.T) {
	s := mustLoad(t, "testdata/matrix.yaml")
	if len(s.Matrix) != 2 {
		t.Fatalf("matrix = %v", s.Matrix)
	}
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ id, lb, size string }
	wants := []want{
		{"lb=ecmp,size=1MiB", "ecmp", "1MiB"},
		{"lb=ops,size=1MiB", "ops", "1MiB"},
		{"lb=reps,size=1MiB", "reps", "1MiB"},
		{"lb=ecmp,size=4MiB", "ecmp", "4MiB"},
		{"lb=ops,size=4MiB", "ops", "4MiB"},
		{"lb=reps,size=4MiB", "reps", "4MiB"},
	}
	if len(pts) != len(wants) {
		t.Fatalf("%d points, want %d", len(pts), len(wants))
	}
	for i, w := range wants {
		p := pts[i]
		if p.ID != w.id {
			t.Errorf("point %d: ID %q, want %q", i, p.ID, w.id)
		}
		wantParams := map[string]string{"transport.lb": w.lb, "jobs[name=perm].size": w.size}
		if !reflect.DeepEqual(p.Params, wantParams) {
			t.Errorf("point %d: params %v", i, p.Params)
		}
		if string(p.Suite.Transport.LB) != w.lb || p.Suite.Jobs[0].Size.String() != w.size {
			t.Errorf("point %d: lb %q size %q", i, p.Suite.Transport.LB, p.Suite.Jobs[0].Size)
		}
		// Only the swept fields change.
		if p.Suite.Jobs[1].Size.String() != "64KiB" || p.Suite.Transport.CC != "nscc" || p.Suite.Matrix != nil || p.Suite.Name != "matrix" {
			t.Errorf("point %d: suite %+v", i, p.Suite)
		}
	}
	// Points is repeatable and the base suite is untouched.
	again, err := s.Points()
	if err != nil || len(again) != len(pts) || again[4].ID != pts[4].ID || again[4].Suite == pts[4].Suite {
		t.Errorf("second Points() = %v, %v", again, err)
	}
	if s.Transport.LB != "reps" || s.Jobs[0].Size.String() != "1MiB" {
		t.Errorf("base suite changed: %+v", s.Transport)
	}
}

func TestMatrixSetsMissingFields(t *testing.T) {
	// jobs[0].size is only given by the matrix; transport and
	// features.trimming do not exist in the document.
	doc := `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=4"}
jobs:
  - name: perm
    workload: permutation
matrix:
  jobs[0].size: [256KiB]
  transport.mtu: [1500, 9000]
  features.trimming.enabled: [true, false]
  jobs[0].hosts: [all, 4, [host1, host6]]
`
	s := mustParse(t, "sweep.yaml", doc)
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 12 {
		t.Fatalf("%d points", len(pts))
	}
	if pts[0].ID != "enabled=true,hosts=all,mtu=1500,size=256KiB" {
		t.Errorf("first ID %q", pts[0].ID)
	}
	last := pts[11]
	if last.ID != "enabled=false,hosts=host1_host6,mtu=9000,size=256KiB" {
		t.Errorf("last ID %q", last.ID)
	}
	if last.Params["jobs[0].hosts"] != "[host1, host6]" {
		t.Errorf("params %v", last.Params)
	}
	ls := last.Suite
	if ls.Transport.MTU != 9000 || *ls.Features.Trimming.Enabled || ls.Jobs[0].Size.String() != "256KiB" || !reflect.DeepEqual(ls.Jobs[0].Hosts, []string{"host1", "host6"}) {
		t.Errorf("last point suite: %+v %+v", ls.Transport, ls.Jobs[0])
	}
	if h := pts[2].Suite.Jobs[0].Hosts; h != 4 {
		t.Errorf("point 2 hosts = %v", h)
	}
}

func TestMatrixIDFallback(t *testing.T) {
	// Two keys end in "size": names would be ambiguous.
	doc := base + `  - {name: bg, workload: all-to-all, size: 1MiB}
matrix:
  jobs[0].size: [1MiB, 2MiB]
  jobs[1].size: [64KiB, 128KiB]
`
	pts, err := mustParse(t, "x.yaml", doc).Points()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pts {
		ids = append(ids, p.ID)
	}
	if !reflect.DeepEqual(ids, []string{"p01", "p02", "p03", "p04"}) {
		t.Errorf("ids = %v", ids)
	}
	if pts[2].Params["jobs[0].size"] != "2MiB" || pts[2].Params["jobs[1].size"] != "64KiB" {
		t.Errorf("params %v", pts[2].Params)
	}

	// Long values.
	long := "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100,uplink_gbps=100,latency=1us,switch_latency=0"
	doc = base + "matrix:\n  fabric.spec: ['" + long + "', 'leafspine:leaves=2,spines=2,hosts_per_leaf=2']\n"
	pts, err = mustParse(t, "x.yaml", doc).Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].ID != "p01" || pts[1].ID != "p02" || pts[0].Suite.Fabric.Spec != long {
		t.Errorf("points %+v", pts)
	}
}

func TestMatrixLimit(t *testing.T) {
	doc := base + `matrix:
  seed: [1, 2, 3, 4, 5, 6, 7]
  transport.mtu: [1000, 2000, 3000, 4000, 5000, 6000, 7000]
  jobs[0].repetitions: [1, 2, 3, 4, 5, 6]
`
	_, err := Parse("x.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "x.yaml:8:3: matrix: expands to more than 256 points") {
		t.Errorf("err = %v", err)
	}
	// 256 is fine.
	var vals []string
	for i := 1; i <= 128; i++ {
		vals = append(vals, strconv.Itoa(i))
	}
	doc = base + "matrix:\n  seed: [" + strings.Join(vals, ", ") + "]\n  transport.lb: [ecmp, ops]\n"
	s := mustParse(t, "x.yaml", doc)
	pts, err := s.Points()
	if err != nil || len(pts) != 256 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	if pts[0].ID != "lb=ecmp,seed=1" || pts[1].ID != "lb=ops,seed=1" || pts[255].ID != "lb=ops,seed=128" || pts[255].Suite.Seed != 128 {
		t.Errorf("ids %q %q, last seed %d", pts[0].ID, pts[1].ID, pts[255].Suite.Seed)
	}
}

// TestBadSuites checks that each problem is reported with the file, line,
// column and field path.
func TestBadSuites(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top-level key", base + "colour: red\n",
			`7:1: colour: unknown key (want name, description, seed, preset, fabric, features, transport, agents, telemetry, jobs, faults, kpis, analysis, sim, controller, bringup, baseline, matrix or tests)`},
		{"unknown job key", base + "    sise: 2MiB\n",
			`7:5: jobs[0].sise: unknown key (did you mean "size"?)`},
		{"unknown nested key", base + "telemetry:\n  sink:\n    influx:\n      url: http://x\n      bucket: b\n      tokne: x\n",
			`12:7: telemetry.sink.influx.tokne: unknown key`},
		{"wrong type int", base + "seed: lots\n", `7:7: seed: want an integer, got "lots"`},
		{"wrong type list", base + "transport:\n  mtu: [1500]\n", `8:8: transport.mtu: want an integer, got a list`},
		{"wrong type float", base + "transport:\n  mtu: 1500.5\n", `8:8: transport.mtu: want an integer, got "1500.5"`},
		{"entropy run out of range", base + "transport:\n  entropy_run: 2000\n", `8:16: transport.entropy_run: 2000 is out of range (want 0..1024 packets)`},
		{"wrong type bool", base + "features:\n  trimming: {enabled: yes}\n", `8:23: features.trimming.enabled: want true or false, got "yes"`},
		{"jobs not a list", "fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}\njobs:\n  name: perm\n", `3:3: jobs: want a list, got a mapping`},
		{"bad size", base + "  - name: big\n    workload: incast\n    size: 2Mib\n",
			`9:11: jobs[1].size: "2Mib" is not a size (want e.g. 2MiB, 512KB)`},
		{"missing size", "fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}\njobs:\n  - name: perm\n    workload: permutation\n",
			`3:5: jobs[0].size: required (want e.g. 2MiB, 512KB)`},
		{"converge out of range", base + "bringup:\n  topology: lab.clab.yml\n  converge: 11m\n",
			`9:13: bringup.converge: "11m" is not a duration from 0 to 10m`},
		{"bgp wait not a duration", base + "bringup:\n  topology: lab.clab.yml\n  bgp_wait: 10 secs\n",
			`9:13: bringup.bgp_wait: "10 secs" is not a duration (e.g. 10s)`},
		{"converge negative", base + "bringup:\n  topology: lab.clab.yml\n  converge: -1s\n",
			`9:13: bringup.converge: "-1s" is not a duration (e.g. 10s)`},
		{"bad duration", base + "    start: 10 sec\n", `7:12: jobs[0].start: "10 sec" is not a duration (want e.g. 100us, 1ms)`},
		{"duration without unit", base + "faults:\n  - {kind: down, nic: host0, at: 5}\n", `8:34: faults[0].at: "5" is not a duration`},
		{"interval out of range", base + "telemetry:\n  interval: 50us\n", `8:13: telemetry.interval: 50us is out of range (want 100us to 10ms)`},
		{"unknown workload", strings.Replace(base, "permutation", "permutations", 1),
			`5:15: jobs[0].workload: unknown workload "permutations" (want permutation, incast, all-to-all, all-reduce, all-gather, reduce-scatter or group-shift)`},
		{"window on a permutation", base + "    window: 4\n", `7:13: jobs[0].window: only for all-to-all`},
		{"receiver on a permutation", base + "    receiver: host1\n", `7:15: jobs[0].receiver: only for incast`},
		{"receiver not a participant", base + "  - {name: in, workload: incast, size: 1KB, hosts: 3, receiver: host5}\n",
			`7:65: jobs[1].receiver: host5 is not a participant of the job`},
		{"too many senders", base + "  - {name: in, workload: incast, size: 1KB, hosts: 3, senders: 3}\n",
			`7:64: jobs[1].senders: 3 senders, but only 2 other participants`},
		{"bad job name", strings.Replace(base, "name: perm", "name: perm 1", 1), `4:11: jobs[0].name: "perm 1" may only contain`},
		{"duplicate job name", base + "  - {name: perm, workload: incast, size: 1KB}\n", `7:12: jobs[1].name: "perm" is already used by jobs[0]`},
		{"host not in fabric", base + "    hosts: [host0, host9]\n", `7:20: jobs[0].hosts[1]: no host named "host9" in the fabric (hosts host0..host7)`},
		{"host is a switch", base + "    hosts: [host0, leaf1]\n", `7:20: jobs[0].hosts[1]: leaf1 is a leaf, not a host`},
		{"too many hosts", base + "    hosts: 9\n", `7:12: jobs[0].hosts: 9 hosts, but the fabric has 8`},
		{"bad hosts", base + "    hosts: most\n", `7:12: jobs[0].hosts: "most" is not all, a host count or a list of host names`},
		{"zero repetitions", base + "    repetitions: 0\n", `7:18: jobs[0].repetitions: must be at least 1, not 0`},
		{"no jobs", "fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}\njobs: []\n", `2:7: jobs: at least one job is required`},
		{"fault with two targets", base + "faults:\n  - kind: down\n    link: leaf0-spine0\n    nic: host1\n",
			`10:10: faults[0].nic: set only one of link, port or nic (link is also set)`},
		{"fault without target", base + "faults:\n  - kind: down\n", `8:5: faults[0]: set one of link, port or nic`},
		{"fault unknown node", base + "faults:\n  - kind: down\n    link: leaf0-spine7\n", `9:11: faults[0].link: no node named "spine7" in the fabric`},
		{"fault unlinked nodes", base + "faults:\n  - kind: down\n    link: spine0-spine1\n", `9:11: faults[0].link: spine0 and spine1 are not linked`},
		{"fault parallel index", base + "faults:\n  - kind: down\n    link: leaf0-spine1/1\n", `9:11: faults[0].link: leaf0 and spine1 have 1 parallel link(s); index 1 is out of range`},
		{"fault unknown port", base + "faults:\n  - kind: degrade\n    port: leaf1:Ethernet9\n    fraction: 0.5\n",
			`9:11: faults[0].port: leaf1 has no port "Ethernet9" (ports Ethernet0..Ethernet5)`},
		{"fault unknown port device", base + "faults:\n  - {kind: down, port: 'leaf9:Ethernet0'}\n", `8:24: faults[0].port: no node named "leaf9" in the fabric`},
		{"fault nic not a host", base + "faults:\n  - {kind: down, nic: spine0}\n", `8:23: faults[0].nic: spine0 is a spine, not a host`},
		{"fault unknown kind", base + "faults:\n  - {kind: melt, nic: host0}\n", `8:12: faults[0].kind: unknown fault kind "melt" (want down, up, flap, degrade or random)`},
		{"random fault with a link", base + "faults:\n  - {kind: random, fraction: 0.02, link: leaf0-spine0}\n", `8:42: faults[0].link: not for random faults (they pick switch-to-switch links by fraction)`},
		{"random fault fraction", base + "faults:\n  - {kind: random, fraction: 0.9}\n", `8:30: faults[0].fraction: 0.9 is out of range (want 0 < fraction <= 0.5)`},
		{"random fault no fraction", base + "faults:\n  - {kind: random}\n", `8:5: faults[0].fraction: required for random`},
		{"degrade without fraction", base + "faults:\n  - {kind: degrade, nic: host0}\n", `8:5: faults[0].fraction: required for degrade`},
		{"fraction out of range", base + "faults:\n  - {kind: degrade, nic: host0, fraction: 0}\n", `8:43: faults[0].fraction: 0 is out of range (want 0 < fraction <= 1)`},
		{"fraction on down", base + "faults:\n  - {kind: down, nic: host0, fraction: 0.5}\n", `8:40: faults[0].fraction: only for degrade faults`},
		{"flap without period", base + "faults:\n  - {kind: flap, nic: host0, count: 2}\n", `8:5: faults[0].period: required for flap`},
		{"flap zero count", base + "faults:\n  - {kind: flap, nic: host0, period: 10us, count: 0}\n", `8:51: faults[0].count: flap needs count >= 1, not 0`},
		{"period on degrade", base + "faults:\n  - {kind: degrade, nic: host0, fraction: 0.5, period: 1us}\n", `8:56: faults[0].period: only for flap faults`},
		{"until before at", base + "faults:\n  - {kind: down, nic: host0, at: 10us, until: 5us}\n", `8:47: faults[0].until: 5us is not after at (10us)`},
		{"kpi with max and min", base + "kpis:\n  - metric: fct_p99_us\n    max: 100\n    min: 1\n", `10:10: kpis[0].min: set only one of max and min`},
		{"kpi without bound", base + "kpis:\n  - metric: fct_p99_us\n", `8:5: kpis[0]: set max or min`},
		{"kpi without metric", base + "kpis:\n  - max: 1\n", `8:5: kpis[0].metric: required`},
		{"kpi scope names a missing job", base + "kpis:\n  - metric: fct_p99_us\n    scope: perm2\n    max: 100\n",
			`9:12: kpis[0].scope: no job named "perm2" (want fabric or a job: perm)`},
		{"fabric spec and file", "fabric:\n  spec: leafspine:leaves=2,spines=2,hosts_per_leaf=4\n  file: x.topo\n", `3:9: fabric.file: set only one of fabric.spec and fabric.file`},
		{"bad fabric spec", "fabric:\n  spec: leafspine:leaves=2\n", `2:9: fabric.spec: `},
		{"no fabric", "jobs:\n  - {name: a, workload: permutation, size: 1KB}\n", `1:1: fabric: set fabric.spec`},
		{"bad hash field", base + "features:\n  ecmp:\n    hash: [src-ip, vlan]\n", `9:20: features.ecmp.hash[1]: unknown hash field "vlan"`},
		{"duplicate hash field", base + "features:\n  ecmp:\n    hash: [src-ip, src-ip]\n", `9:20: features.ecmp.hash[1]: src-ip is already listed`},
		{"empty hash", base + "features:\n  ecmp:\n    hash: []\n", `9:11: features.ecmp.hash: needs at least one field`},
		{"empty hash field", base + "features:\n  ecmp:\n    hash: [src-ip, '']\n", `9:20: features.ecmp.hash[1]: unknown hash field ""`},
		{"unknown congestion control", base + "transport:\n  cc: cubic\n", `8:7: transport.cc: unknown congestion control "cubic" (want nscc or dctcp)`},
		{"ecn kmin above kmax", base + "features:\n  ecn: {kmin: 0.9}\n", `8:15: features.ecn.kmin: kmin (0.9) must be less than kmax (0.8)`},
		{"ecn kmax out of range", base + "features:\n  ecn: {kmax: 1.5}\n", `8:15: features.ecn.kmax: 1.5 is out of range (want 0 < kmax <= 1)`},
		{"bad queue", base + "features:\n  queue: huge\n", `8:10: features.queue: "huge" is neither bdp, longest-path nor a size`},
		{"pfc priority", base + "features:\n  pfc: {priorities: [3, 8]}\n", `8:25: features.pfc.priorities[1]: priority 8 is out of range (want 0..7)`},
		{"srv6 locator", base + "features:\n  srv6: {locator: 10.0.0.0/8}\n", `8:19: features.srv6.locator: "10.0.0.0/8" is not an IPv6 prefix`},
		{"srv6 placement", base + "features:\n  srv6: {placement: best}\n", `8:21: features.srv6.placement: "best" is not a placement (want none or disjoint)`},
		{"srv6 elephant", base + "features:\n  srv6: {elephant: 0B}\n", `8:20: features.srv6.elephant: "0B" is not a positive size`},
		{"srv6 path job", base + "features:\n  srv6: {paths: [{src: host0, dst: host4, via: [spine0], job: nope}]}\n", `8:63: features.srv6.paths[0].job: no job named "nope"`},
		{"vrf duplicate", base + "features:\n  vrfs:\n    - {name: a, table: 1}\n    - {name: a, table: 2}\n", `10:14: features.vrfs[1].name: "a" is already used by features.vrfs[0]`},
		{"vrf table", base + "features:\n  vrfs:\n    - {name: a}\n", `9:7: features.vrfs[0].table: must be a positive routing table number, not 0`},
		{"unknown cc", base + "transport:\n  cc: cubic\n", `8:7: transport.cc: unknown congestion control "cubic" (want nscc or dctcp)`},
		{"unknown lb", base + "transport:\n  lb: flowlet\n", `8:7: transport.lb: unknown load balancer "flowlet" (want ecmp, ops, reps, ops-w, spritz-scout, spritz-spray, flicr or owd)`},
		{"mtu out of range", base + "transport:\n  mtu: 100\n", `8:8: transport.mtu: 100 is out of range (want 256..9216)`},
		{"telemetry path", base + "telemetry:\n  paths: [interfaces]\n", `8:11: telemetry.paths[0]: "interfaces" must start with /`},
		{"influx url", base + "telemetry:\n  sink:\n    influx: {url: 'localhost:8086', bucket: b}\n", `9:19: telemetry.sink.influx.url: "localhost:8086" is not an http(s) URL`},
		{"influx bucket", base + "telemetry:\n  sink:\n    influx: {url: 'http://localhost:8086'}\n", `9:13: telemetry.sink.influx.bucket: required`},
		{"analysis z", base + "analysis:\n  symmetry: {z: 0}\n", `8:17: analysis.symmetry.z: 0 is out of range (want z > 0)`},
		{"analysis low/high", base + "analysis:\n  straggler: {low: 0.9}\n", `8:20: analysis.straggler.low: low (0.9) must be less than high (0.8)`},
		{"analysis min_middle", base + "analysis:\n  straggler: {min_middle: 1.5}\n", `8:27: analysis.straggler.min_middle: 1.5 is out of range`},
		{"analysis culprit capacity", base + "analysis:\n  culprit: {capacity: 1.5}\n", `8:23: analysis.culprit.capacity: 1.5 is out of range`},
		{"analysis culprit backlog", base + "analysis:\n  culprit: {backlog: 2GiB}\n", `8:22: analysis.culprit.backlog: 2GiB is out of range`},
		{"analysis culprit min_intervals", base + "analysis:\n  culprit: {min_intervals: 0}\n", `8:28: analysis.culprit.min_intervals: 0 is out of range`},
		{"sim end", base + "sim:\n  end: soon\n", `8:8: sim.end: "soon" is not a duration`},
		{"sim stall_after", base + "sim:\n  stall_after: never\n", `8:16: sim.stall_after: "never" is not a duration`},
		{"sim stall_after zero", base + "sim:\n  stall_after: 0s\n", `8:16: sim.stall_after: must be positive (or off)`},
		{"matrix key that does not exist", base + "matrix:\n  transport.speed: [1, 2]\n",
			`8:3: matrix["transport.speed"]: transport has no field "speed" (want cc, lb, mtu, quick_adapt, fast_increase, planes or entropy_run)`},
		{"matrix key with a bad selector", base + "matrix:\n  jobs[name=big].size: [1MiB]\n", `8:3: matrix["jobs[name=big].size"]: no entry of jobs is named "big"`},
		{"matrix key out of range", base + "matrix:\n  jobs[2].size: [1MiB]\n", `8:3: matrix["jobs[2].size"]: jobs[2] does not exist (jobs has 1 entry)`},
		{"matrix key on the matrix", base + "matrix:\n  matrix: [1]\n", `8:3: matrix["matrix"]: the matrix cannot sweep itself`},
		{"matrix key malformed", base + "matrix:\n  'jobs..size': [1]\n", `8:3: matrix["jobs..size"]: malformed key`},
		{"matrix without values", base + "matrix:\n  transport.lb: []\n", `8:17: matrix["transport.lb"]: needs at least one value`},
		{"matrix not a list", base + "matrix:\n  transport.lb: ops\n", `8:17: matrix["transport.lb"]: want a list, got "ops"`},
		{"matrix duplicate value", base + "matrix:\n  transport.lb: [ops, ops]\n", `8:23: matrix["transport.lb"][1]: "ops" is already listed (matrix["transport.lb"][0])`},
		{"matrix overlapping keys", base + "matrix:\n  jobs[0].size: [1KB]\n  jobs[name=perm].size: [2KB]\n", `9:3: matrix["jobs[name=perm].size"]: overlaps matrix["jobs[0].size"]`},
		{"matrix value invalid", base + "matrix:\n  transport.lb:\n    - ecmp\n    - spray-and-pray\n    - reps\n",
			`10:7: matrix["transport.lb"][1]: unknown load balancer "spray-and-pray" (want ecmp, ops, reps, ops-w, spritz-scout, spritz-spray, flicr or owd)`},
		{"matrix value of the wrong type", base + "matrix:\n  jobs[0].size: [1MiB, {a: 1}]\n", `8:24: matrix["jobs[0].size"][1]: want a string, got a mapping`},
		{"matrix value with a bad size", base + "matrix:\n  jobs[name=perm].size: [1MiB, 2Mib]\n", `8:32: matrix["jobs[name=perm].size"][1]: "2Mib" is not a size (want e.g. 2MiB, 512KB)`},
		{"matrix value with an unknown key", base + "matrix:\n  features.ecn: [{kmin: 0.1}, {kmin: 0.1, kmid: 0.5}]\n",
			`8:43: matrix["features.ecn"][1].kmid: unknown key (did you mean "kmin"?)`},
		{"error only in some points", base + "    hosts: 4\nmatrix:\n  fabric.spec: ['leafspine:leaves=2,spines=2,hosts_per_leaf=2', 'leafspine:leaves=1,spines=1,hosts_per_leaf=3']\n",
			`7:12: jobs[0].hosts: 4 hosts, but the fabric has 3 (in matrix point spec=leafspine_leaves_1_spines_1_hosts_per_leaf_3)`},
		{"syntax error", base + "seed: [1\n", `7:7: sequence end token ']' not found`},
		{"duplicate key", base + "seed: 1\nseed: 2\n", `8:1: seed: duplicate key (first set on line 7)`},
		{"duplicate nested key", base + "    size: 2MiB\n", `7:5: jobs[0].size: duplicate key (first set on line 6)`},
		{"not a mapping", "- a\n- b\n", `1:1: want a mapping, got a list`},
		{"two documents", base + "---\nname: other\n", `8:1: a suite file holds one YAML document`},
		{"unknown alias", base + "seed: *nope\n", `7:7: seed: unknown alias *nope`},
		{"alias before its anchor", base + "  - {name: b, workload: incast, size: *s}\n  - {name: c, workload: incast, size: &s 1KB}\n", `7:39: jobs[1].size: alias *s is used before its anchor &s`},
		{"follow-on errors are not reported", base + "defs: &d {size: 1KB}\n", "7:1: defs: unknown key"},
		{"non-string key", base + "features:\n  1: x\n", `8:3: features: key "1" is not a string`},
		// Words and quantities are decoded at their positions.
		{"unknown launcher", base + "agents:\n  launcher: pdsh\n", `8:13: agents.launcher: unknown launcher "pdsh" (want ssh or srun)`},
		{"unknown controller", base + "controller:\n  kind: magic\n", `8:9: controller.kind: unknown controller "magic" (want srv6-reroute or none)`},
		{"unknown runtime", base + "bringup:\n  runtime: vm\n", `8:12: bringup.runtime: "vm" is not a lab runtime (want auto, containerlab or native)`},
		{"bad rate", base + "    rate: 120%\n", `7:11: jobs[0].rate: "120%" is not a share of the line rate`},
		{"bad hold-down", base + "controller:\n  kind: none\n  hold_down: 1 minute\n", `9:14: controller.hold_down: "1 minute" is not a duration (want e.g. 100us, 1ms)`},
		{"matrix value with a bad mode", base + "matrix:\n  features.ecmp.mode: [hash, spray]\n", `8:30: matrix["features.ecmp.mode"][1]: unknown mode "spray"`},
		{"matrix value with a bad duration", base + "matrix:\n  telemetry.interval: [1ms, 1 ms, 2 hours]\n", `8:35: matrix["telemetry.interval"][2]: "2 hours" is not a duration`},
		{"matrix key below a quantity", base + "matrix:\n  jobs[0].size.bytes: [1]\n", `8:3: matrix["jobs[0].size.bytes"]: jobs[0].size has no fields`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatalf("no error; want %s", tt.want)
			}
			want := "t.yaml:" + tt.want
			if strings.HasPrefix(tt.want, ":") {
				want = "t.yaml" + tt.want
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant a line containing:\n%s", err, want)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is %T, not an ErrorList", err)
			}
			for _, e := range list {
				if e.File != "t.yaml" {
					t.Errorf("error without the file name: %v", e)
				}
			}
		})
	}
}

// A KPI bound written with a unit is one error at the bound, naming the
// metric's unit, not also a missing bound (issue 19).
func TestKPIBoundWithUnit(t *testing.T) {
	base := "fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}\njobs:\n  - {name: a2a, workload: all-to-all, size: 64KiB}\nkpis:\n"
	for _, c := range []struct{ kpi, want string }{
		{"  - {metric: busbw_gbps, scope: a2a, min: 60Gbps}\n",
			`t.yaml:5:43: kpis[0].min: want a number, got "60Gbps": a KPI bound is a plain number in the metric's unit, without the unit (busbw_gbps is in Gb/s)`},
		{"  - {metric: fct_p99_us, scope: a2a, max: 500us}\n",
			`t.yaml:5:43: kpis[0].max: want a number, got "500us": a KPI bound is a plain number in the metric's unit, without the unit (fct_p99_us is in µs)`},
		{"  - {max: 1%, metric: drops}\n",
			`t.yaml:5:11: kpis[0].max: want a number, got "1%": a KPI bound is a plain number in the metric's unit, without the unit (drops is in packets)`},
		{"  - {max: 1%, metric: drop}\n",
			`t.yaml:5:11: kpis[0].max: want a number, got "1%": a KPI bound is a plain number in the metric's unit, without the unit (see the metric table in docs/suites.md)`},
	} {
		_, err := Parse("t.yaml", []byte(base+c.kpi))
		if err == nil || strings.Split(err.Error(), "\n")[0] != c.want || strings.Contains(err.Error(), "max and min") {
			t.Errorf("%s: error\n%v\nwant first\n%s", c.kpi, err, c.want)
		}
	}
}

// Without a matrix the one point is named after the suite, as a file name.
func TestSingleID(t *testing.T) {
	for name, want := range map[string]string{
		"smoke": "smoke", "lab smoke/v2": "lab_smoke_v2", "..": "run", "#!": "run", "x..": "x..", "bringup": "run",
		strings.Repeat("x", 81): "run",
	} {
		if got := singleID(name); got != want {
			t.Errorf("singleID(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestErrorList(t *testing.T) {
	doc := `fabric:
  spec: leafspine:leaves=2,spines=2,hosts_per_leaf=4
colour: red
jobs:
  - name: a
    workload: permutation
    size: 2Mib
    sise: 1
  - name: b
    workload: all-reduce
    size: 1MiB
    window: 3
telemetry:
  interval: 1s
`
	_, err := Parse("smoke.yaml", []byte(doc))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`smoke.yaml:3:1: colour: unknown key (want name, description, seed, preset, fabric, features, transport, agents, telemetry, jobs, faults, kpis, analysis, sim, controller, bringup, baseline, matrix or tests)`,
		`smoke.yaml:7:11: jobs[0].size: "2Mib" is not a size (want e.g. 2MiB, 512KB)`,
		`smoke.yaml:8:5: jobs[0].sise: unknown key (did you mean "size"?)`,
		`smoke.yaml:12:13: jobs[1].window: only for all-to-all`,
		`smoke.yaml:14:13: telemetry.interval: 1s is out of range (want 100us to 10ms)`,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || e.Column != 1 || e.Path != "colour" {
		t.Errorf("errors.As *Error: %+v", e)
	}

	// A type error does not hide problems elsewhere, nor cause follow-on
	// errors at its own path.
	_, err = Parse("x.yaml", []byte(base+"    repetitions: many\n  - {name: perm, workload: incast, size: 1KB}\n"))
	want = []string{
		`x.yaml:7:18: jobs[0].repetitions: want an integer, got "many"`,
		`x.yaml:8:12: jobs[1].name: "perm" is already used by jobs[0]`,
	}
	if err == nil || !reflect.DeepEqual(strings.Split(err.Error(), "\n"), want) {
		t.Errorf("errors:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString(base)
	for i := 0; i < 30; i++ {
		b.WriteString("  - {name: perm, workload: permutation, size: 1KB}\n")
	}
	_, err := Parse("x.yaml", []byte(b.String()))
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("err = %v", err)
	}
	if len(list) != 21 || list[20].Msg != "too many errors (10 more not shown)" || list[0].Line != 7 || list[19].Line != 26 {
		t.Errorf("%d errors:\n%v", len(list), err)
	}
}

func TestParticipants(t *testing.T) {
	s := mustParse(t, "x.yaml", base)
	f, err := s.LoadFabric()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		hosts any
		want  []int
		err   string
	}{
		{nil, seq(8), ""},
		{"all", seq(8), ""},
		{3, []int{0, 1, 2}, ""},
		{"5", seq(5), ""},
		{uint64(2), []int{0, 1}, ""},
		{[]string{"host7", "host2"}, []int{7, 2}, ""},
		{[]any{"host1"}, []int{1}, ""},
		{0, nil, "host count must be positive, not 0"},
		{9, nil, "9 hosts, but the fabric has 8"},
		{[]string{"host1", "host1"}, nil, "host1 is listed twice"},
		{[]string{"leaf0"}, nil, `no host named "leaf0" in the fabric`},
		{"some", nil, `hosts "some" is not all, a count or a list of host names`},
		{1.5, nil, "hosts has type float64"},
	}
	for _, tt := range tests {
		j := Job{Hosts: tt.hosts}
		got, err := j.Participants(f)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Participants(%v) error = %v, want %q", tt.hosts, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Participants(%v) = %v, %v; want %v", tt.hosts, got, err, tt.want)
		}
	}
}

func TestHandBuiltSuitePoints(t *testing.T) {
	s := &Suite{
		Name:   "hand",
		Fabric: Fabric{Spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"},
		Jobs:   []Job{{Name: "p", Workload: "permutation", Size: mustSize("1MiB")}},
		Matrix: map[string][]any{"transport.cc": {"nscc", "dctcp"}},
	}
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].ID != "cc=nscc" || pts[1].ID != "cc=dctcp" || pts[1].Suite.Transport.CC != "dctcp" || pts[1].Suite.Transport.MTU != 4096 {
		t.Errorf("points %+v", pts)
	}
	// A quantity is typed: a bad one cannot be built, only decoded.
	if _, err := ParseSize("lots"); err == nil || err.Error() != `"lots" is not a size (want e.g. 2MiB, 512KB)` {
		t.Errorf("ParseSize: err = %v", err)
	}
	s.Jobs[0].Workload = "lots"
	if _, err := s.Points(); err == nil || !strings.Contains(err.Error(), `jobs[0].workload: unknown workload "lots"`) {
		t.Errorf("err = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("testdata/does-not-exist.yaml"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
	big := make([]byte, yamlx.MaxBytes+1)
	if _, err := Parse("big.yaml", big); err == nil || !strings.Contains(err.Error(), "big.yaml: file too large") {
		t.Errorf("err = %v", err)
	}
	// Alias bombs are rejected, not expanded.
	var b strings.Builder
	b.WriteString(base + "    hosts:\n      x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i < 10; i++ {
		ref := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "      x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(ref+", ", 10), ", "))
	}
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Errorf("alias bomb: %v", err)
	}
}

// TestPathAwareLBOnHashECMP: the path-aware load balancers run on plain
// ECMP hashing (coarse-grained Spritz: each UDP source port an EV), also
// in a matrix that sweeps them next to the others.
func TestPathAwareLBOnHashECMP(t *testing.T) {
	for _, lb := range []string{"ops-w", "spritz-scout", "spritz-spray", "flicr"} {
		s := mustParse(t, "x.yaml", base+"transport:\n  lb: "+lb+"\n")
		if string(s.Transport.LB) != lb || s.Features.ECMP.Mode != ECMPModeHash {
			t.Errorf("%s: parsed lb %q on mode %q", lb, s.Transport.LB, s.Features.ECMP.Mode)
		}
	}
	s := mustParse(t, "x.yaml", base+"matrix:\n  transport.lb: [ecmp, reps, spritz-spray, flicr]\n")
	if pts, err := s.Points(); err != nil || len(pts) != 4 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
}
