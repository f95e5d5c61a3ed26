package linux

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// The testdata files are replies of iproute2 6.1 on kernel 6.18 (see
// testdata/README): End.DX4/End.DX6 SIDs, steered routes in table 101 and
// policy rules of many kinds.

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseRules(t *testing.T) {
	rs, err := parseRules(readTestdata(t, "rules4.json"), 4)
	if err != nil {
		t.Fatal(err)
	}
	// Rendered like `ip -N rule show` prints them (a space for its tab,
	// route-type actions by name).
	text := strings.Split(strings.TrimSpace(readTestdata(t, "rules4.txt")), "\n")
	if len(rs) != len(text) {
		t.Fatalf("%d rules, %d text lines", len(rs), len(text))
	}
	for i, r := range rs {
		want := strings.TrimSpace(strings.Replace(text[i], ":\t", ": ", 1))
		want = strings.Replace(want, "fwmark 0x103 6", "fwmark 0x103 blackhole", 1)
		if r.st.Rule != want {
			t.Errorf("rule %d rendered %q, ip prints %q", i, r.st.Rule, want)
		}
	}
	byPrio := map[int]ipRule{}
	for _, r := range rs {
		byPrio[r.st.Priority] = r
	}
	if got, want := byPrio[101].st, (drivers.RuleState{Family: 4, Priority: 101, Mark: 0x101, Mask: 0xffffffff, Action: "lookup", Table: 101,
		Rule: "101: from all fwmark 0x101 lookup 101"}); got != want {
		t.Errorf("rule 101:\n got %+v\nwant %+v", got, want)
	}
	if got := byPrio[0].st; got.Table != tableLocal || got.Mark != 0 || got.Mask != 0 || got.Action != "lookup" {
		t.Errorf("rule 0: %+v", got)
	}
	if got := byPrio[103].st; got.Action != "blackhole" || got.Table != 0 {
		t.Errorf("rule 103: %+v", got)
	}
	if got := byPrio[106]; got.st.Action != "goto" || got.gotoPrio != 32766 || got.plain {
		t.Errorf("rule 106: %+v", got)
	}
	if got := byPrio[104].st; got.Mask != 0xfff || got.Mark != 0x101 {
		t.Errorf("rule 104: %+v", got)
	}
	// Plain: the mark alone selects (the kind PolicyRule makes).
	plain := map[int]bool{90: true, 101: true, 102: true, 103: true, 108: true}
	for p, r := range byPrio {
		if r.plain != plain[p] {
			t.Errorf("rule %d (%s): plain = %v", p, r.st.Rule, r.plain)
		}
	}
	if !byPrio[108].modified || byPrio[101].modified {
		t.Errorf("suppress_prefixlength is a modifier: 108 %v, 101 %v", byPrio[108].modified, byPrio[101].modified)
	}
	rs6, err := parseRules(readTestdata(t, "rules6.json"), 6)
	if err != nil || len(rs6) != 4 || rs6[1].st.Family != 6 || rs6[1].st.Rule != "101: from all fwmark 0x101 lookup 101" || rs6[3].st.Table != tableMain {
		t.Errorf("IPv6 rules: %+v %v", rs6, err)
	}

	for _, bad := range []string{"", "Error: x", `{}`, `[{"src":"all","table":"1"}]`, `[{"priority":"x","table":"1"}]`,
		`[{"priority":1,"fwmark":"0x1zz","table":"1"}]`, `[{"priority":1,"fwmark":"0x1","fwmask":"nope","table":"1"}]`,
		`[{"priority":1,"src":"all"}]`, `[{"priority":1,"table":"mytable"}]`, `[{"priority":1,"table":"0"}]`, `[{"priority":-1,"table":"1"}]`,
		`[{"priority":1,"goto":"x"}]`, `[{"priority":1,"fwmark":{},"table":"1"}]`} {
		if _, err := parseRules(bad, 4); err == nil {
			t.Errorf("rules %q: no error", bad)
		}
	}
}

// snapCtx answers the given commands as if a batch had read them.
func snapCtx(replies map[string]string) context.Context {
	snap := snapshot{}
	for k, v := range replies {
		snap[k] = result{out: v}
	}
	return context.WithValue(context.Background(), snapKey{}, snap)
}

func TestRulePlan(t *testing.T) {
	d := &Driver{name: "host0"}
	ctx := snapCtx(map[string]string{rulesCmd(4): readTestdata(t, "rules4.json"), rulesCmd(6): readTestdata(t, "rules6.json")})
	want, err := policyRules([]drivers.PolicyRule{
		{Mark: 0x101, Table: 101, Priority: 101},            // both families: as installed
		{Mark: 0x102, Table: 102, Priority: 102, Family: 4}, // installed, and a stale rule at 90 to table 202
		{Mark: 0x103, Table: 103, Priority: 103, Family: 4}, // a blackhole rule of the mark
		{Mark: 0x107, Table: 107, Priority: 107, Family: 6}, // missing
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan{}
	if err := d.rulePlan(ctx, p, want); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, it := range p.items {
		cmds = append(cmds, it.cmd)
	}
	wantCmds := []string{
		"ip -4 rule del pref 90 fwmark 0x102 lookup 202",
		"ip -4 rule del pref 103 fwmark 0x103 blackhole && ip -4 rule add fwmark 0x103 lookup 103 pref 103",
		"ip -6 rule add fwmark 0x107 lookup 107 pref 107",
	}
	if !reflect.DeepEqual(cmds, wantCmds) {
		t.Errorf("commands:\n%s\nwant\n%s", strings.Join(cmds, "\n"), strings.Join(wantCmds, "\n"))
	}
	wantDiff := drivers.Diff{
		{Feature: drivers.FeatSRv6, Key: "rule -4 fwmark 0x102", Old: "from all fwmark 0x102 lookup 202 pref 90; from all fwmark 0x102 lookup 102 pref 102", New: "from all fwmark 0x102 lookup 102 pref 102"},
		{Feature: drivers.FeatSRv6, Key: "rule -4 fwmark 0x103", Old: "from all fwmark 0x103 blackhole pref 103", New: "from all fwmark 0x103 lookup 103 pref 103"},
		{Feature: drivers.FeatSRv6, Key: "rule -6 fwmark 0x107", New: "from all fwmark 0x107 lookup 107 pref 107"},
	}
	if got := p.diff(); !reflect.DeepEqual(got, wantDiff) {
		t.Errorf("diff:\n%s\nwant\n%s", got, wantDiff)
	}
	checks := p.result("host0")
	if len(checks) != 5 {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}
	wantChecks := []struct {
		name string
		ok   bool
		ev   string
	}{
		{"rule -4 fwmark 0x101 lookup 101 pref 101", true, "101: from all fwmark 0x101 lookup 101"},
		{"rule -6 fwmark 0x101 lookup 101 pref 101", true, "101: from all fwmark 0x101 lookup 101"},
		{"rule -4 fwmark 0x102 lookup 102 pref 102", false, "90: from all fwmark 0x102 lookup 202; 102: from all fwmark 0x102 lookup 102"},
		{"rule -4 fwmark 0x103 lookup 103 pref 103", false, "103: from all fwmark 0x103 blackhole"},
		{"rule -6 fwmark 0x107 lookup 107 pref 107", false, "no IPv6 rule with fwmark 0x107"},
	}
	for i, w := range wantChecks {
		c := checks[i]
		if c.Name != w.name || c.OK != w.ok || c.Evidence != w.ev || c.Feature != drivers.FeatSRv6 || c.Device != "host0" {
			t.Errorf("check %d: %+v, want %+v", i, c, w)
		}
	}
}

func TestPolicyRulesInput(t *testing.T) {
	got, err := policyRules([]drivers.PolicyRule{{Mark: 0x101, Table: 101, Priority: 101}, {Mark: 0x102, Table: 254, Priority: 1, Family: 6}})
	want := []wantRule{{4, 0x101, 101, 101, "-4"}, {6, 0x101, 101, 101, "-6"}, {6, 0x102, 254, 1, "-6"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v %v", got, err)
	}
	if w := got[0]; w.args() != "fwmark 0x101 lookup 101 pref 101" {
		t.Errorf("args %q", w.args())
	}
	for name, c := range map[string]struct {
		r    []drivers.PolicyRule
		want string
	}{
		"mark 0":     {[]drivers.PolicyRule{{Table: 1, Priority: 1}}, "rule fwmark 0x0: fwmark 0 would match every unmarked packet"},
		"table 0":    {[]drivers.PolicyRule{{Mark: 1, Priority: 1}}, "rule fwmark 0x1: table 0"},
		"prio 0":     {[]drivers.PolicyRule{{Mark: 1, Table: 1}}, "rule fwmark 0x1: priority 0: want 1 to 32765"},
		"prio 32766": {[]drivers.PolicyRule{{Mark: 1, Table: 1, Priority: 32766}}, "priority 32766"},
		"family":     {[]drivers.PolicyRule{{Mark: 1, Table: 1, Priority: 1, Family: 5}}, "family 5: want 4, 6 or 0"},
		"twice":      {[]drivers.PolicyRule{{Mark: 1, Table: 1, Priority: 1}, {Mark: 1, Table: 2, Priority: 2, Family: 6}}, "rule fwmark 0x1: listed twice for IPv6"},
	} {
		if _, err := policyRules(c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestSeg6DX(t *testing.T) {
	fromJSON := seg6Routes(t, readTestdata(t, "routes6-dx.json"))
	fromText, lines, err := parseSeg6Text(readTestdata(t, "routes6-dx.txt"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromJSON) != 5 || !reflect.DeepEqual(fromJSON, fromText) {
		t.Fatalf("JSON and text disagree:\n%+v\n%+v", fromJSON, fromText)
	}
	dx4 := seg6Route{Prefix: pfx("fd00:bbbb:2:e001::/64"), Encap: "seg6local", Action: "End.DX4", NH4: ip("198.18.0.3"), Dev: "eth1"}
	dx6 := seg6Route{Prefix: pfx("fd00:bbbb:2:e101::/64"), Encap: "seg6local", Action: "End.DX6", NH6: ip("fd00:fb:1::3"), Dev: "eth1"}
	if fromJSON[0] != dx4 || fromJSON[3] != dx6 || fromJSON[1].NH4 != netip.IPv4Unspecified() {
		t.Errorf("DX routes %+v", fromJSON)
	}
	for _, r := range fromJSON {
		if line := lines[r.Prefix]; !strings.HasPrefix(line, r.Prefix.String()+"  "+r.args()+" ") {
			t.Errorf("args %q do not render the device's line %q", r.args(), line)
		}
	}
	if got := dx4.args(); got != "encap seg6local action End.DX4 nh4 198.18.0.3 dev eth1" {
		t.Errorf("args %q", got)
	}

	// Steered routes in table 101 (IPv4 host routes print without /32).
	for _, c := range []struct {
		file string
		v6   bool
		want seg6Route
	}{
		{"routes4-table101", false, seg6Route{Prefix: pfx("198.18.0.3/32"), Encap: "seg6", Mode: "encap", Segs: "fd00:bbbb:3:2:e001::", Dev: "eth1"}},
		{"routes6-table101", true, seg6Route{Prefix: pfx("fd00:fb:1::3/128"), Encap: "seg6", Mode: "encap", Segs: "fd00:bbbb:3:2:e101::", Dev: "eth1"}},
	} {
		rs, err := parseRoutes(readTestdata(t, c.file+".json"))
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v", c.file, err)
		}
		s, ok, full, err := seg6FromJSON(rs[0], c.v6)
		text, _, terr := parseSeg6Text(readTestdata(t, c.file+".txt"), c.v6)
		if !ok || !full || err != nil || terr != nil || s != c.want || len(text) != 1 || text[0] != c.want {
			t.Errorf("%s: %+v %v %v; text %+v", c.file, s, err, terr, text)
		}
	}

	// Bad next hops.
	for _, in := range []string{
		`[{"dst":"fd00::/64","encap":"seg6local","action":"End.DX4","nh4":"fd00::1","dev":"eth1"}]`,
		`[{"dst":"fd00::/64","encap":"seg6local","action":"End.DX6","nh6":"10.0.0.1","dev":"eth1"}]`,
		`[{"dst":"fd00::/64","encap":"seg6local","action":"End.DX4","nh4":"x","dev":"eth1"}]`,
	} {
		rs, err := parseRoutes(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := seg6FromJSON(rs[0], true); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	for _, in := range []string{"fd00::/64 encap seg6local action End.DX4 nh4 fd00::1 dev eth1", "fd00::/64 encap seg6local action End.DX6 nh6 10.0.0.1 dev eth1"} {
		if _, _, err := parseSeg6Text(in, true); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestSRv6PolicyRoutes(t *testing.T) {
	srv6 := &drivers.SRv6{
		SIDs: []drivers.SID{
			{Addr: pfx("fd00:bbbb:2:e001::/64"), Behavior: "uDX4", Nexthop: ip("198.18.0.3"), Dev: "eth1"},
			{Addr: pfx("fd00:bbbb:2:e101::/64"), Behavior: "uDX6", Nexthop: ip("fd00:fb:1::3"), Dev: "eth1"},
			{Addr: pfx("fd00:bbbb:2:e002::/64"), Behavior: "End.DX4", Nexthop: netip.IPv4Unspecified(), Dev: "eth1"},
		},
		Steer: []drivers.Steer{
			{Prefix: pfx("198.18.0.3/32"), Segments: []netip.Addr{ip("fd00:bbbb:3:2:e001::")}, Dev: "eth1", Table: 101},
			{Prefix: pfx("198.18.0.3/32"), Segments: []netip.Addr{ip("fd00:bbbb:4:2:e001::")}, Dev: "eth1", Table: 102},
			{Prefix: pfx("fd00:fb:1::3/128"), Segments: []netip.Addr{ip("fd00:bbbb:3:2:e101::")}, Dev: "eth1", Table: 101},
			{Prefix: pfx("198.19.0.0/24"), Segments: []netip.Addr{ip("fd00:bbbb:3::")}, Dev: "eth1", Table: 254}, // main
		},
	}
	rs, err := srv6Routes(srv6, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmtWant(r))
	}
	want := []string{
		"6/0 sid fd00:bbbb:2:e001::/64 uDX4: fd00:bbbb:2:e001::/64 encap seg6local action End.DX4 nh4 198.18.0.3 dev eth1",
		"6/0 sid fd00:bbbb:2:e101::/64 uDX6: fd00:bbbb:2:e101::/64 encap seg6local action End.DX6 nh6 fd00:fb:1::3 dev eth1",
		"6/0 sid fd00:bbbb:2:e002::/64 End.DX4: fd00:bbbb:2:e002::/64 encap seg6local action End.DX4 nh4 0.0.0.0 dev eth1",
		"4/101 steer 198.18.0.3/32 table 101: 198.18.0.3/32 encap seg6 mode encap segs fd00:bbbb:3:2:e001:: dev eth1",
		"4/102 steer 198.18.0.3/32 table 102: 198.18.0.3/32 encap seg6 mode encap segs fd00:bbbb:4:2:e001:: dev eth1",
		"6/101 steer fd00:fb:1::3/128 table 101: fd00:fb:1::3/128 encap seg6 mode encap segs fd00:bbbb:3:2:e101:: dev eth1",
		"4/0 steer 198.19.0.0/24: 198.19.0.0/24 encap seg6 mode encap segs fd00:bbbb:3:: dev eth1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	seg := []netip.Addr{ip("fd00:bbbb:3::")}
	for name, c := range map[string]struct {
		s    drivers.SRv6
		want string
	}{
		"dx4 no nh":    {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX4", Dev: "eth1"}}}, "SID fd00::/64 uDX4: needs the IPv4 next hop to forward the decapsulated packet to (Nexthop), got none"},
		"dx4 v6 nh":    {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX4", Nexthop: ip("fd00::1"), Dev: "eth1"}}}, "got fd00::1"},
		"dx4 no dev":   {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "End.DX4", Nexthop: ip("10.0.0.1")}}}, "SID fd00::/64 End.DX4: needs the interface towards next hop 10.0.0.1 (Dev)"},
		"dx6 v4 nh":    {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX6", Nexthop: ip("10.0.0.1"), Dev: "eth1"}}}, "needs the IPv6 next hop"},
		"dx6 mapped":   {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX6", Nexthop: ip("::ffff:10.0.0.1"), Dev: "eth1"}}}, "needs the IPv6 next hop"},
		"dx6 no dev":   {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX6", Nexthop: ip("fd00::1")}}}, "(Dev)"},
		"vrf table":    {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: seg, Dev: "eth1", VRF: "red", Table: 7}}}, "steer 10.0.0.0/8: VRF red and table 7 are mutually exclusive"},
		"neg table":    {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: seg, Dev: "eth1", Table: -1}}}, "steer 10.0.0.0/8: table -1"},
		"local table":  {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: seg, Dev: "eth1", Table: 255}}}, "local table"},
		"twice in 101": {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: seg, Dev: "eth1", Table: 101}, {Prefix: pfx("10.0.0.0/8"), Segments: seg, Dev: "eth2", Table: 101}}}, "steer 10.0.0.0/8 listed twice in table 101"},
		"mapped":       {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("::ffff:10.0.0.0/104"), Segments: seg, Dev: "eth1"}}}, "IPv4-mapped"},
		"behavior":     {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX2"}}}, "uDX4, uDX6"},
	} {
		if _, err := srv6Routes(&c.s, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func fmtWant(w wantRoute) string {
	return strings.Join([]string{strconv.Itoa(w.family) + "/" + strconv.Itoa(w.table), w.what + ":", w.route.String()}, " ")
}

func TestCheckSRv6Kernel(t *testing.T) {
	d := &Driver{name: "leaf1"}
	kernel := "Error: seg6local: unsupported action."
	pr := &probes{dx4: "the kernel refused a seg6local End.DX4 route: " + kernel, rules6: "the kernel has no IPv6 policy routing rules (`ip -6 rule show`: RTNETLINK answers: Address family not supported by protocol)"}
	for name, c := range map[string]struct {
		s    drivers.SRv6
		want string
	}{
		"dx4":   {drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00:bbbb:2:e001::/64"), Behavior: "uDX4"}}}, "SID fd00:bbbb:2:e001::/64 uDX4: the kernel refused a seg6local End.DX4 route: " + kernel},
		"rule6": {drivers.SRv6{Rules: []drivers.PolicyRule{{Mark: 0x101, Table: 101, Priority: 101}}}, "rule fwmark 0x101: the kernel has no IPv6 policy routing rules (`ip -6 rule show`: RTNETLINK answers: Address family not supported by protocol)"},
		"steer": {drivers.SRv6{Steer: []drivers.Steer{{Prefix: pfx("fd00:fb:1::3/128"), Table: 101}}}, "steer fd00:fb:1::3/128 in table 101 needs policy routing"},
	} {
		err := d.checkSRv6Kernel(pr, &drivers.DeviceFeatures{SRv6: &c.s})
		var ce *drivers.CapabilityError
		if !errors.As(err, &ce) || ce.Platform != Platform || ce.Device != "leaf1" || ce.Feature != drivers.FeatSRv6 || !strings.Contains(ce.Reason, c.want) {
			t.Errorf("%s: %v, want a CapabilityError with %q", name, err, c.want)
		}
	}
	// What the kernel can do passes: DX6, IPv4 rules and IPv4 steering.
	ok := &drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00::/64"), Behavior: "uDX6"}}, Rules: []drivers.PolicyRule{{Mark: 1, Table: 1, Priority: 1, Family: 4}},
		Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Table: 101}}}
	if err := d.checkSRv6Kernel(pr, &drivers.DeviceFeatures{SRv6: ok}); err != nil {
		t.Errorf("supported requests: %v", err)
	}
}

func TestPolicyTables(t *testing.T) {
	var rules []drivers.RuleState
	for _, f := range []string{"rules4.json", "rules6.json"} {
		fam := 4
		if strings.Contains(f, "6") {
			fam = 6
		}
		rs, err := parseRules(readTestdata(t, f), fam)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			rules = append(rules, r.st)
		}
	}
	if got := policyTables(rules, map[int]bool{112: true}); !reflect.DeepEqual(got, []int{101, 102, 106, 111, 202}) {
		t.Errorf("tables %v", got)
	}
}

// TestTableRead runs the wrapper of table reads with sh: a table that
// does not exist reads as empty; other failures stay failures.
func TestTableRead(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	missing := readTestdata(t, "table-missing.out") // what ip printed (stderr, then stdout)
	run := func(cmd string) (string, error) {
		out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		return string(out), err
	}
	fake := func(out string, rc int) string {
		return "sh -c " + shellQuote("printf '%s' "+shellQuote(out)+"; exit "+strconv.Itoa(rc))
	}
	if out, err := run(tableRead(fake(missing, 2), "[]")); err != nil || out != "[]\n" {
		t.Errorf("missing table: %q %v", out, err)
	}
	if out, err := run(tableRead(fake(missing, 2), "")); err != nil || out != "\n" {
		t.Errorf("missing table, text: %q %v", out, err)
	}
	if out, err := run(tableRead(fake(`[{"dst":"10.0.0.0/8"}]`, 0), "[]")); err != nil || out != `[{"dst":"10.0.0.0/8"}]`+"\n" {
		t.Errorf("table: %q %v", out, err)
	}
	if out, err := run(tableRead(fake("Error: something else.", 1), "[]")); err == nil || !strings.Contains(out, "something else") {
		t.Errorf("other error: %q %v", out, err)
	}
	if got := routesJSONCmd(4, 101); !strings.Contains(got, "ip -j -4 route show table 101 2>&1") {
		t.Errorf("routesJSONCmd: %s", got)
	}
}

func FuzzRules(f *testing.F) {
	f.Add(`[{"priority":0,"src":"all","table":"255"},{"priority":101,"src":"all","fwmark":"0x101","table":"101"}]`)
	f.Add(`[{"priority":106,"not":null,"src":"all","fwmark":"0x104","goto":32766},{"priority":103,"src":"all","fwmark":"0x103","action":"6"}]`)
	f.Add(`[{"priority":109,"src":"all","fwmark":"0x106","uid_start":1000,"uid_end":2000,"ipproto":"ipproto-17","dport":4791,"table":"106"}]`)
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			rs, err := parseRules(in, 4)
			if err != nil {
				return
			}
			for _, r := range rs {
				if !strings.HasPrefix(r.st.Rule, strconv.Itoa(r.st.Priority)+":") {
					t.Errorf("rule %+v: text without its priority", r)
				}
				_ = r.delArgs()
			}
		})
	})
}

func TestSRv6Dev(t *testing.T) {
	srv6 := &drivers.SRv6{SIDs: []drivers.SID{
		{Addr: pfx("fd00:bbbb:1::/48"), Behavior: "uN"},
		{Addr: pfx("fd00:bbbb:9::/48"), Behavior: "uN", Dev: "eth1"},
		{Addr: pfx("fd00:bbbb:1:ff::/64"), Behavior: "End"},
	}}
	rs, err := srv6Routes(srv6, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].route.Dev != "sr0" || rs[0].dev != "sr0" || rs[1].route.Dev != "eth1" || rs[2].route.String() != "fd00:bbbb:1:ff::/64 encap seg6local action End dev sr0" {
		t.Errorf("SID devices: %+v", rs)
	}
	for _, b := range []string{"uN", "End"} {
		_, err := srv6Routes(&drivers.SRv6{SIDs: []drivers.SID{{Addr: pfx("fd00:bbbb:1::/48"), Behavior: b, Dev: "lo"}}}, nil)
		if err == nil || !strings.Contains(err.Error(), "SID fd00:bbbb:1::/48 "+b+": not on lo: the kernel turns IPv6 routes through the loopback into reject routes") {
			t.Errorf("%s on lo: %v", b, err)
		}
	}

	// The device: made (dummy or veth), brought up, or left alone.
	for _, c := range []struct {
		links string
		dummy bool
		cmd   string
		ok    bool
	}{
		{`[{"ifname":"lo","flags":["LOOPBACK","UP"]},{"ifname":"eth1","flags":["UP"]}]`, true, "ip link add sr0 type dummy && ip link set sr0 up", false},
		{`[{"ifname":"lo","flags":["LOOPBACK","UP"]}]`, false, "ip link add sr0 type veth peer name sr0p && ip link set sr0p up && ip link set sr0 up", false},
		{`[{"ifname":"sr0","flags":["BROADCAST","NOARP"]}]`, true, "ip link set sr0 up", false},
		{`[{"ifname":"sr0","flags":["BROADCAST","NOARP","UP","LOWER_UP"]}]`, true, "", true},
	} {
		links, err := parseLinks(c.links)
		if err != nil {
			t.Fatal(err)
		}
		p := &plan{}
		srv6DevPlan(p, links, c.dummy)
		cmd := ""
		if len(p.items) == 1 {
			cmd = p.items[0].cmd
		}
		if cmd != c.cmd || len(p.checks) != 1 || p.checks[0].ok != c.ok || p.checks[0].name != "srv6 device sr0" {
			t.Errorf("links %s dummy=%v: items %+v checks %+v", c.links, c.dummy, p.items, p.checks)
		}
	}
}
