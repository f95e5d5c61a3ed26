package linux

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// Policy routing rules (ip rule): SRv6.Rules send marked traffic to the
// table of its steered routes. The driver reads them from
// `ip -N -j -4|-6 rule show` (-N: tables as numbers, whatever
// /etc/iproute2/rt_tables names them).

// rulesCmd reads the rules of one family.
func rulesCmd(family int) string { return fmt.Sprintf("ip -N -j -%d rule show", family) }

// Well-known tables.
const (
	tableDefault = 253
	tableMain    = 254
	tableLocal   = 255
)

// ruleAction names a rule's route-type action; with -N iproute2 prints
// the number (FR_ACT_BLACKHOLE 6, FR_ACT_UNREACHABLE 7, FR_ACT_PROHIBIT 8).
func ruleAction(a string) string {
	switch a {
	case "6":
		return "blackhole"
	case "7":
		return "unreachable"
	case "8":
		return "prohibit"
	}
	return a
}

// ipRule is one parsed rule.
type ipRule struct {
	st drivers.RuleState
	// plain: the rule selects on the fwmark alone (from all, an exact
	// mark, nothing else), the kind of rule PolicyRule makes.
	plain bool
	// modified: the action has modifiers (suppress_prefixlength,
	// suppress_ifgroup, realms).
	modified bool
	gotoPrio int // goto target
}

// ruleKeyOrder is the order iproute2 prints a rule's parts in; other
// keys follow, sorted.
var ruleKeyOrder = []string{"not", "src", "dst", "tos", "dscp", "fwmark", "iif", "oif", "l3mdev", "uid_start", "ipproto", "sport", "dport", "tun_id",
	"table", "goto", "nop", "action", "suppress_prefixlen", "suppress_ifgroup", "flow_from", "protocol"}

// Keys that neither select packets nor name the action: they follow
// another key or are shown as they are.
var ruleSkipKeys = map[string]bool{"priority": true, "srclen": true, "dstlen": true, "fwmask": true, "uid_end": true, "flow_to": true, "iif_detached": true, "oif_detached": true}

// Keys a plain rule may have besides fwmark (and src "all").
var rulePlainKeys = map[string]bool{"priority": true, "src": true, "fwmark": true, "fwmask": true, "table": true, "goto": true, "nop": true, "action": true,
	"protocol": true, "suppress_prefixlen": true, "suppress_ifgroup": true, "flow_from": true, "flow_to": true}

// parseRules parses `ip -N -j -F rule show` for family F (4 or 6), e.g.
//
//	[{"priority":0,"src":"all","table":"255"},{"priority":101,"src":"all","fwmark":"0x101","table":"101"}]
func parseRules(out string, family int) ([]ipRule, error) {
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		return nil, fmt.Errorf("not a JSON list of rules: %v", err)
	}
	rules := make([]ipRule, 0, len(objs))
	for i, o := range objs {
		r, err := parseRule(o, family)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %v", i, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseRule(o map[string]json.RawMessage, family int) (ipRule, error) {
	r := ipRule{st: drivers.RuleState{Family: family}, plain: true}
	str := func(k string) (string, bool, error) {
		v, ok := o[k]
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			var n json.Number
			if err := json.Unmarshal(v, &n); err != nil {
				return "", true, fmt.Errorf("%s: want a string, got %s", k, v)
			}
			s = n.String()
		}
		return s, true, nil
	}
	num := func(k string) (int64, bool, error) {
		s, ok, err := str(k)
		if !ok || err != nil {
			return 0, ok, err
		}
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, true, fmt.Errorf("%s %q: not a number", k, s)
		}
		return n, true, nil
	}
	prio, ok, err := num("priority")
	if err != nil {
		return r, err
	}
	if !ok || prio < 0 || prio > 1<<32-1 {
		return r, fmt.Errorf("no priority")
	}
	r.st.Priority = int(prio)

	if m, ok, err := str("fwmark"); err != nil {
		return r, err
	} else if ok {
		v, err := strconv.ParseUint(m, 0, 32)
		if err != nil {
			return r, fmt.Errorf("fwmark %q: not a 32-bit number", m)
		}
		r.st.Mark, r.st.Mask = uint32(v), 0xffffffff
		if k, ok, err := str("fwmask"); err != nil {
			return r, err
		} else if ok {
			v, err := strconv.ParseUint(k, 0, 32)
			if err != nil {
				return r, fmt.Errorf("fwmask %q: not a 32-bit number", k)
			}
			r.st.Mask = uint32(v)
		}
	}
	if r.st.Mask != 0xffffffff {
		r.plain = false // no mark or a partial one
	}
	if src, _, err := str("src"); err != nil {
		return r, err
	} else if src != "all" {
		r.plain = false
	}

	// The action: a table lookup, goto, nop or a route type.
	t, hasTable, err := str("table")
	if err != nil {
		return r, err
	}
	g, hasGoto, err := num("goto")
	if err != nil {
		return r, err
	}
	act, hasAct, err := str("action")
	if err != nil {
		return r, err
	}
	_, hasNop := o["nop"]
	_, hasL3 := o["l3mdev"]
	switch {
	case hasTable:
		r.st.Action = "lookup"
		n, err := strconv.Atoi(t)
		if err != nil {
			switch t {
			case "main":
				n = tableMain
			case "local":
				n = tableLocal
			case "default":
				n = tableDefault
			default:
				return r, fmt.Errorf("table %q: not a number (read rules with ip -N)", t)
			}
		}
		if n <= 0 {
			return r, fmt.Errorf("table %q: not a table", t)
		}
		r.st.Table = n
	case hasGoto:
		r.st.Action, r.gotoPrio = "goto", int(g)
	case hasNop:
		r.st.Action = "nop"
	case hasAct:
		r.st.Action = ruleAction(act)
	case hasL3:
		r.st.Action = "lookup" // the l3mdev (VRF) table
	default:
		return r, fmt.Errorf("no action (table, goto, nop or action)")
	}
	for k := range o {
		if !rulePlainKeys[k] {
			r.plain = false
		}
		switch k {
		case "suppress_prefixlen", "suppress_ifgroup", "flow_from":
			r.modified = true
		}
	}
	r.st.Rule = renderRule(o, r.st.Priority)
	return r, nil
}

// renderRule renders a rule object the way `ip rule show` prints it,
// e.g. "101: from all fwmark 0x101 lookup 101".
func renderRule(o map[string]json.RawMessage, prio int) string {
	val := func(k string) string { return rawString(o[k]) }
	parts := []string{fmt.Sprintf("%d:", prio)}
	add := func(ws ...string) { parts = append(parts, ws...) }
	done := map[string]bool{}
	keys := append([]string(nil), ruleKeyOrder...)
	var rest []string
	for k := range o {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	for _, k := range keys {
		if _, ok := o[k]; !ok || done[k] || ruleSkipKeys[k] {
			continue
		}
		done[k] = true
		switch k {
		case "not":
			add("not")
		case "src", "dst":
			w := map[string]string{"src": "from", "dst": "to"}[k]
			v := val(k)
			if l, ok := o[k+"len"]; ok {
				v += "/" + rawString(l)
			}
			add(w, v)
		case "fwmark":
			v := val(k)
			if m, ok := o["fwmask"]; ok {
				v += "/" + rawString(m)
			}
			add("fwmark", v)
		case "iif", "oif":
			add(k, val(k))
			if _, ok := o[k+"_detached"]; ok {
				add("[detached]")
			}
		case "l3mdev":
			add("lookup", "[l3mdev-table]")
		case "uid_start":
			add("uidrange", val("uid_start")+"-"+val("uid_end"))
		case "table":
			add("lookup", val(k))
		case "nop":
			add("nop")
		case "action":
			add(ruleAction(val(k)))
		case "suppress_prefixlen":
			add("suppress_prefixlength", val(k))
		case "flow_from":
			add("realms", val("flow_from")+"/"+val("flow_to"))
		case "protocol":
			add("proto", val(k))
		default:
			if v := string(o[k]); v == "null" {
				add(k)
			} else {
				add(k, val(k))
			}
		}
	}
	return strings.Join(parts, " ")
}

// wantRule is one rule of one family that SRv6.Rules asks for.
type wantRule struct {
	family     int
	mark       uint32
	table      int
	priority   int
	nameFamily string // "-4", "-6"
}

// args renders the rule as `ip rule add` arguments.
func (w wantRule) args() string {
	return fmt.Sprintf("fwmark %#x lookup %d pref %d", w.mark, w.table, w.priority)
}

// matches reports whether r is exactly the wanted rule.
func (w wantRule) matches(r ipRule) bool {
	return r.plain && !r.modified && r.st.Mark == w.mark && r.st.Action == "lookup" && r.st.Table == w.table && r.st.Priority == w.priority
}

// delArgs renders `ip rule del` arguments that select r.
func (r ipRule) delArgs() string {
	s := fmt.Sprintf("pref %d fwmark %#x", r.st.Priority, r.st.Mark)
	if r.st.Mask != 0xffffffff {
		s += fmt.Sprintf("/%#x", r.st.Mask)
	}
	switch r.st.Action {
	case "lookup":
		if r.st.Table != 0 {
			s += fmt.Sprintf(" lookup %d", r.st.Table)
		}
	case "goto":
		s += fmt.Sprintf(" goto %d", r.gotoPrio)
	case "nop", "blackhole", "unreachable", "prohibit":
		s += " " + r.st.Action
	}
	return s
}

// policyRules validates SRv6.Rules and expands them per family.
func policyRules(rules []drivers.PolicyRule) ([]wantRule, error) {
	var out []wantRule
	seen := map[string]bool{}
	for _, r := range rules {
		name := fmt.Sprintf("rule fwmark %#x", r.Mark)
		switch {
		case r.Mark == 0:
			return nil, fmt.Errorf("%s: fwmark 0 would match every unmarked packet; use a non-zero mark", name)
		case r.Table <= 0 || int64(r.Table) > 1<<32-1:
			return nil, fmt.Errorf("%s: table %d: want a table from 1 to 4294967295", name, r.Table)
		case r.Priority < 1 || r.Priority > 32765:
			return nil, fmt.Errorf("%s: priority %d: want 1 to 32765, so that the rule comes before the main table's (32766)", name, r.Priority)
		}
		var fams []int
		switch r.Family {
		case 0:
			fams = []int{4, 6}
		case 4, 6:
			fams = []int{r.Family}
		default:
			return nil, fmt.Errorf("%s: family %d: want 4, 6 or 0 (both)", name, r.Family)
		}
		for _, f := range fams {
			k := fmt.Sprintf("%d/%d", f, r.Mark)
			if seen[k] {
				return nil, fmt.Errorf("%s: listed twice for IPv%d (one rule per mark and family)", name, f)
			}
			seen[k] = true
			out = append(out, wantRule{family: f, mark: r.Mark, table: r.Table, priority: r.Priority, nameFamily: fmt.Sprintf("-%d", f)})
		}
	}
	return out, nil
}

// rulePlan compares the wanted rules with the device's. Plain rules of
// the same mark that differ are deleted, the wanted one is added.
func (d *Driver) rulePlan(ctx context.Context, p *plan, want []wantRule) error {
	have := map[int][]ipRule{}
	for _, w := range want {
		if _, ok := have[w.family]; ok {
			continue
		}
		fam := w.family
		rs, err := query(ctx, d, rulesCmd(fam), func(out string) ([]ipRule, error) { return parseRules(out, fam) })
		if err != nil {
			return err
		}
		have[fam] = rs
	}
	for _, w := range want {
		var same []ipRule
		found := false
		for _, r := range have[w.family] {
			if r.plain && r.st.Mark == w.mark {
				same = append(same, r)
				found = found || w.matches(r)
			}
		}
		ok := found && len(same) == 1
		var texts, old, cmds []string
		for _, r := range same {
			texts = append(texts, r.st.Rule)
			old = append(old, strings.TrimSpace(strings.SplitN(r.st.Rule, ":", 2)[1])+fmt.Sprintf(" pref %d", r.st.Priority))
			if !w.matches(r) {
				cmds = append(cmds, fmt.Sprintf("ip %s rule del %s", w.nameFamily, r.delArgs()))
			}
		}
		ev := strings.Join(texts, "; ")
		if ev == "" {
			ev = fmt.Sprintf("no IPv%d rule with fwmark %#x", w.family, w.mark)
		}
		p.checks = append(p.checks, check{drivers.FeatSRv6, fmt.Sprintf("rule %s %s", w.nameFamily, w.args()), ok, ev})
		if ok {
			continue
		}
		if !found {
			cmds = append(cmds, fmt.Sprintf("ip %s rule add %s", w.nameFamily, w.args()))
		}
		p.add(drivers.FeatSRv6, fmt.Sprintf("rule %s fwmark %#x", w.nameFamily, w.mark), strings.Join(old, "; "),
			"from all "+w.args(), strings.Join(cmds, " && "))
	}
	return nil
}

// Rules reads the policy routing rules, IPv4 then IPv6.
func (d *Driver) Rules(ctx context.Context) ([]drivers.RuleState, error) {
	var out []drivers.RuleState
	for _, fam := range []int{4, 6} {
		rs, err := query(ctx, d, rulesCmd(fam), func(s string) ([]ipRule, error) { return parseRules(s, fam) })
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, r.st)
		}
	}
	return out, nil
}

// policyTables lists the tables lookup rules name, other than the
// well-known ones and skip (VRF tables), sorted.
func policyTables(rules []drivers.RuleState, skip map[int]bool) []int {
	seen := map[int]bool{}
	var out []int
	for _, r := range rules {
		t := r.Table
		if r.Action != "lookup" || t == 0 || t == tableMain || t == tableLocal || t == tableDefault || skip[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Ints(out)
	return out
}

// isolationKey is the change key of an isolation rule; its value is
// "prohibit".
func isolationKey(fam int, r drivers.IsolationRule) string {
	return fmt.Sprintf("deny -%d iif %s to %s pref %d", fam, r.In, r.To, r.Priority)
}

// isolationPlan compares the wanted isolation rules with the device's:
// a rule of that priority, input interface and destination that
// prohibits is there, or is added.
func (d *Driver) isolationPlan(ctx context.Context, p *plan, want []drivers.IsolationRule) error {
	have := map[int][]ipRule{}
	seen := map[string]bool{}
	for _, w := range want {
		switch {
		case w.In == "" || strings.ContainsAny(w.In, " \t/"):
			return fmt.Errorf("linux %s: isolation rule: bad input interface %q", d.name, w.In)
		case !w.To.IsValid() || w.To.Addr().Is4In6():
			return fmt.Errorf("linux %s: isolation rule on %s: no destination prefix", d.name, w.In)
		case w.Priority < 1 || w.Priority > 32765:
			return fmt.Errorf("linux %s: isolation rule on %s: priority %d: want 1 to 32765", d.name, w.In, w.Priority)
		}
		fam := 4
		if w.To.Addr().Is6() {
			fam = 6
		}
		key := isolationKey(fam, w)
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, ok := have[fam]; !ok {
			rs, err := query(ctx, d, rulesCmd(fam), func(out string) ([]ipRule, error) { return parseRules(out, fam) })
			if err != nil {
				return err
			}
			have[fam] = rs
		}
		to := w.To.Masked()
		ok, ev := false, fmt.Sprintf("no IPv%d rule pref %d iif %s to %s prohibit", fam, w.Priority, w.In, to)
		for _, r := range have[fam] {
			f := strings.Fields(r.st.Rule)
			if r.st.Priority != w.Priority || r.st.Action != "prohibit" || !slices.Contains(f, w.In) {
				continue
			}
			i := slices.Index(f, "to")
			if i < 0 || i+1 >= len(f) {
				continue
			}
			if f[i+1] == to.String() || (to.IsSingleIP() && f[i+1] == to.Addr().String()) {
				ok, ev = true, r.st.Rule
				break
			}
		}
		p.checks = append(p.checks, check{drivers.FeatVRFRules, key + " prohibit", ok, ev})
		if !ok {
			p.add(drivers.FeatVRFRules, key, "", "prohibit",
				fmt.Sprintf("ip -%d rule add pref %d iif %s to %s prohibit", fam, w.Priority, shellQuote(w.In), to))
		}
	}
	return nil
}
