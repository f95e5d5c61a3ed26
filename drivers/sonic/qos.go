package sonic

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
)

// The buffer profiles the driver creates (and, on Revert, removes field
// by field, which removes them).
const (
	losslessProfile = "fabricbench_lossless_profile"
	queueProfile    = "fabricbench_queue_profile"
)

// SONiC's PFC watchdog limits (sonic-pfcwd: detection_time 100..5000 ms,
// restoration_time 100..60000 ms, whole milliseconds).
const (
	pfcwdMinDetect  = 100 * time.Millisecond
	pfcwdMaxDetect  = 5 * time.Second
	pfcwdMinRestore = 100 * time.Millisecond
	pfcwdMaxRestore = 60 * time.Second
)

// reasonAdaptive is why the driver refuses adaptive routing.
const reasonAdaptive = "the sonic driver does not write SONiC's adaptive routing tables (sonic-ars: ARS_PROFILE, ARS_OBJECT assign_mode per_packet_quality or per_flowlet_quality, ARS_INTERFACE; SONiC 202511 and later, on ASICs whose SAI has ARS)"

// validateQoS checks the PFC watchdog and queue size requests without
// talking to the device.
func (d *Driver) validateQoS(want *drivers.DeviceFeatures) (errs []error, capErr error) {
	if p := want.PFC; p != nil {
		for _, ds := range p.DSCPs {
			if ds < 0 || ds > 63 {
				errs = append(errs, fmt.Errorf("pfc: DSCP %d is not in 0..63", ds))
			}
		}
		if h := p.Headroom; h != nil && (h.Xoff <= 0 || h.Xon <= 0 || h.Size < h.Xon+h.Xoff) {
			errs = append(errs, fmt.Errorf("pfc: headroom xoff %d, xon %d, size %d bytes: want xoff, xon > 0 and size >= xon + xoff", h.Xoff, h.Xon, h.Size))
		}
		if w := p.Watchdog; w != nil {
			switch {
			case w.Detect < pfcwdMinDetect || w.Detect > pfcwdMaxDetect || w.Detect%time.Millisecond != 0:
				capErr = &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatPFCWatchdog,
					Reason: fmt.Sprintf("SONiC's PFC watchdog detects a storm after 100 ms to 5 s in whole milliseconds (sonic-pfcwd detection_time), not %v", w.Detect)}
			case w.Restore < pfcwdMinRestore || w.Restore > pfcwdMaxRestore || w.Restore%time.Millisecond != 0:
				capErr = &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatPFCWatchdog,
					Reason: fmt.Sprintf("SONiC's PFC watchdog restores after 100 ms to 60 s in whole milliseconds (sonic-pfcwd restoration_time), not %v", w.Restore)}
			}
		}
	}
	if q := want.QueueSize; q != nil {
		if q.Bytes <= 0 {
			errs = append(errs, fmt.Errorf("queue-size: %d bytes must be positive", q.Bytes))
		}
		for _, n := range q.Queues {
			if n < 0 || n > 15 {
				errs = append(errs, fmt.Errorf("queue-size: queue %d is not in 0..15", n))
			}
		}
		for _, ds := range q.DSCPs {
			if ds < 0 || ds > 63 {
				errs = append(errs, fmt.Errorf("queue-size: DSCP %d is not in 0..63", ds))
			}
		}
	}
	if want.Adaptive != nil && capErr == nil {
		capErr = &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatAdaptive, Reason: reasonAdaptive}
	}
	return errs, capErr
}

// dscpTCs are the traffic classes (PFC priorities) a port puts packets
// with the DSCPs in: its PORT_QOS_MAP dscp_to_tc_map.
func (r *reader) dscpTCs(port string, dscps []int) ([]int, error) {
	qm, err := r.hgetall("CONFIG_DB", "PORT_QOS_MAP|"+port)
	if err != nil {
		return nil, err
	}
	dtc := derefName(qm["dscp_to_tc_map"])
	if dtc == "" {
		return nil, fmt.Errorf("port %s has no dscp_to_tc_map (PORT_QOS_MAP|%s): the priority of DSCP %v is unknown", port, port, dscps)
	}
	dm, err := r.hgetall("CONFIG_DB", "DSCP_TO_TC_MAP|"+dtc)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, ds := range dscps {
		tc, ok := dm[strconv.Itoa(ds)]
		n, err := strconv.Atoi(strings.TrimSpace(tc))
		switch {
		case !ok:
			return nil, fmt.Errorf("DSCP_TO_TC_MAP|%s (port %s) does not map DSCP %d", dtc, port, ds)
		case err != nil || n < 0 || n > 7:
			return nil, fmt.Errorf("DSCP_TO_TC_MAP|%s (port %s) maps DSCP %d to %q, not a traffic class 0..7", dtc, port, ds, tc)
		}
		out = append(out, n)
	}
	return uniqSorted(out), nil
}

// tcPGs are the ingress priority groups of traffic classes on a port: its
// PORT_QOS_MAP tc_to_pg_map (TC_TO_PRIORITY_GROUP_MAP), the class itself
// without one.
func (r *reader) tcPGs(port string, tcs []int) ([]int, error) {
	qm, err := r.hgetall("CONFIG_DB", "PORT_QOS_MAP|"+port)
	if err != nil {
		return nil, err
	}
	name := derefName(qm["tc_to_pg_map"])
	if name == "" {
		return uniqSorted(tcs), nil
	}
	m, err := r.hgetall("CONFIG_DB", "TC_TO_PRIORITY_GROUP_MAP|"+name)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("port %s: tc_to_pg_map %s names no TC_TO_PRIORITY_GROUP_MAP entry", port, name)
	}
	var out []int
	for _, tc := range tcs {
		pg, ok := m[strconv.Itoa(tc)]
		n, err := strconv.Atoi(strings.TrimSpace(pg))
		switch {
		case !ok:
			return nil, fmt.Errorf("TC_TO_PRIORITY_GROUP_MAP|%s (port %s) does not map traffic class %d", name, port, tc)
		case err != nil || n < 0 || n > 7:
			return nil, fmt.Errorf("TC_TO_PRIORITY_GROUP_MAP|%s (port %s) maps traffic class %d to %q, not a priority group 0..7", name, port, tc, pg)
		}
		out = append(out, n)
	}
	return uniqSorted(out), nil
}

// pool finds the buffer pool of a type (ingress, egress) whose name says
// lossless or lossy, with its size.
func (r *reader) pool(typ string, lossless bool) (string, int64, error) {
	names, err := r.keys("CONFIG_DB", "BUFFER_POOL|")
	if err != nil {
		return "", 0, err
	}
	for _, n := range names {
		l := strings.ToLower(n)
		if strings.Contains(l, "lossless") != lossless || (!lossless && !strings.Contains(l, "lossy")) {
			continue
		}
		m, err := r.hgetall("CONFIG_DB", "BUFFER_POOL|"+n)
		if err != nil {
			return "", 0, err
		}
		if strings.EqualFold(m["type"], typ) {
			size, _ := strconv.ParseInt(strings.TrimSpace(m["size"]), 10, 64)
			return n, size, nil
		}
	}
	kind := "lossy"
	if lossless {
		kind = "lossless"
	}
	return "", 0, fmt.Errorf("no %s %s buffer pool (BUFFER_POOL has %s)", typ, kind, strings.Join(names, ", "))
}

// pfcPlan adds PFC's entries: per port, pfc_enable on the priorities
// (PFC.Priorities and the classes of PFC.DSCPs); with Headroom, the
// lossless profile and BUFFER_PG of those priorities' groups, and the
// device's egress lossless profile on the BUFFER_QUEUE entries of their
// queues (but those in taken: the queue size's); with Watchdog, PFC_WD
// per port.
func (d *Driver) pfcPlan(r *reader, ports []string, pfc *drivers.PFC, taken map[string]bool, add func(*entry) error) error {
	var egress string
	if pfc.Headroom != nil {
		var err error
		if egress, err = r.egressLosslessProfile(); err != nil {
			return fmt.Errorf("sonic %s: pfc: %w", d.device, err)
		}
	}
	if h := pfc.Headroom; h != nil {
		pool, _, err := r.pool("ingress", true)
		if err != nil {
			return fmt.Errorf("sonic %s: pfc headroom: %w", d.device, err)
		}
		// The shared-buffer threshold of the device's own lossless
		// profile, whose scale is the ASIC's.
		th := "0"
		if m, err := r.hgetall("CONFIG_DB", "BUFFER_PROFILE|ingress_lossless_profile"); err != nil {
			return err
		} else if v := strings.TrimSpace(m["dynamic_th"]); v != "" {
			th = v
		}
		if err := add(&entry{feature: drivers.FeatPFC, key: "BUFFER_PROFILE|" + losslessProfile, fields: []field{
			{name: "pool", db: []string{"pool"}, want: pool, cmp: cmpRef},
			{name: "xon", db: []string{"xon"}, want: strconv.FormatInt(h.Xon, 10), cmp: cmpNum},
			{name: "xoff", db: []string{"xoff"}, want: strconv.FormatInt(h.Xoff, 10), cmp: cmpNum},
			{name: "size", db: []string{"size"}, want: strconv.FormatInt(h.Size, 10), cmp: cmpNum},
			{name: "dynamic_th", db: []string{"dynamic_th"}, want: th, cmp: cmpNum},
		}}); err != nil {
			return err
		}
	}
	if w := pfc.Watchdog; w != nil {
		g, err := r.hgetall("CONFIG_DB", "PFC_WD|GLOBAL")
		if err != nil {
			return err
		}
		if v := strings.TrimSpace(g["POLL_INTERVAL"]); v != "" {
			if poll, err := strconv.ParseInt(v, 10, 64); err == nil && time.Duration(poll)*time.Millisecond > min(w.Detect, w.Restore) {
				return &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatPFCWatchdog,
					Reason: fmt.Sprintf("PFC_WD|GLOBAL POLL_INTERVAL is %s ms, longer than the %v detection or %v restoration time asked for", v, w.Detect, w.Restore)}
			}
		}
	}
	for _, p := range ports {
		prios := append([]int(nil), pfc.Priorities...)
		if len(pfc.DSCPs) > 0 {
			tcs, err := r.dscpTCs(p, pfc.DSCPs)
			if err != nil {
				return fmt.Errorf("sonic %s: pfc: %w", d.device, err)
			}
			prios = append(prios, tcs...)
		}
		prios = uniqSorted(prios)
		var l []string
		for _, pr := range prios {
			l = append(l, strconv.Itoa(pr))
		}
		if err := add(&entry{feature: drivers.FeatPFC, key: "PORT_QOS_MAP|" + p, fields: []field{
			{name: "pfc_enable", db: []string{"pfc_enable"}, want: strings.Join(l, ","), cmp: cmpSet},
		}}); err != nil {
			return err
		}
		if pfc.Headroom != nil && len(prios) > 0 {
			pgs, err := r.tcPGs(p, prios)
			if err != nil {
				return fmt.Errorf("sonic %s: pfc headroom: %w", d.device, err)
			}
			keys, err := r.rangeKeys("BUFFER_PG", p, pgs)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if err := add(&entry{feature: drivers.FeatPFC, key: k, fields: []field{
					{name: "profile", db: []string{"profile"}, want: losslessProfile, cmp: cmpRef},
				}}); err != nil {
					return err
				}
			}
		}
		if egress != "" && len(prios) > 0 {
			qs, err := r.tcQueues(p, prios)
			if err != nil {
				return fmt.Errorf("sonic %s: pfc: %w", d.device, err)
			}
			keys, err := r.rangeKeys("BUFFER_QUEUE", p, qs)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if taken[k] {
					continue
				}
				if err := add(&entry{feature: drivers.FeatPFC, key: k, fields: []field{
					{name: "profile", db: []string{"profile"}, want: egress, cmp: cmpRef},
				}}); err != nil {
					return err
				}
			}
		}
		if w := pfc.Watchdog; w != nil && len(prios) > 0 {
			if err := add(&entry{feature: drivers.FeatPFCWatchdog, key: "PFC_WD|" + p, fields: []field{
				{name: "action", db: []string{"action"}, want: "drop", cmp: cmpFold},
				{name: "detection_time", db: []string{"detection_time"}, want: strconv.FormatInt(w.Detect.Milliseconds(), 10), cmp: cmpNum},
				{name: "restoration_time", db: []string{"restoration_time"}, want: strconv.FormatInt(w.Restore.Milliseconds(), 10), cmp: cmpNum},
			}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// queuePlan adds the queue size's entries: a profile capping a queue at
// QueueSize.Bytes (static_th, in the egress lossless pool when the run
// has PFC, else the lossy one, then trimming what it would drop when the
// run trims, as the other lossy profiles do) and BUFFER_QUEUE of the
// queues on every port.
func (d *Driver) queuePlan(r *reader, ports []string, q *drivers.QueueSize, lossless, trim bool, add func(*entry) error) error {
	pool, size, err := r.pool("egress", lossless)
	if err != nil {
		return fmt.Errorf("sonic %s: queue-size: %w", d.device, err)
	}
	if size > 0 && q.Bytes > size {
		return &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatQueueSize,
			Reason: fmt.Sprintf("a %d-byte queue does not fit BUFFER_POOL|%s (size %d bytes)", q.Bytes, pool, size)}
	}
	fields := []field{
		{name: "pool", db: []string{"pool"}, want: pool, cmp: cmpRef},
		{name: "size", db: []string{"size"}, want: "0", cmp: cmpNum},
		{name: "static_th", db: []string{"static_th"}, want: strconv.FormatInt(q.Bytes, 10), cmp: cmpNum},
	}
	if trim && !lossless {
		fields = append(fields, field{name: "packet_discard_action", db: []string{"packet_discard_action"}, want: "trim", cmp: cmpFold})
	}
	if err := add(&entry{feature: drivers.FeatQueueSize, key: "BUFFER_PROFILE|" + queueProfile, fields: fields}); err != nil {
		return err
	}
	keys, err := d.queueKeys(r, ports, q)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := add(&entry{feature: drivers.FeatQueueSize, key: k, fields: []field{
			{name: "profile", db: []string{"profile"}, want: queueProfile, cmp: cmpRef},
		}}); err != nil {
			return err
		}
	}
	return nil
}

// queueKeys are the BUFFER_QUEUE keys of the queue size's queues on every
// port (rangeKeys).
func (d *Driver) queueKeys(r *reader, ports []string, q *drivers.QueueSize) ([]string, error) {
	var out []string
	queues := uniqSorted(q.Queues)
	for _, p := range ports {
		if len(q.DSCPs) > 0 {
			qs, err := r.dscpQueues(p, q.DSCPs)
			if err != nil {
				return nil, fmt.Errorf("sonic %s: queue-size: %w", d.device, err)
			}
			queues = qs
		}
		keys, err := r.rangeKeys("BUFFER_QUEUE", p, queues)
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
	}
	return out, nil
}

// tcQueues are the egress queues of traffic classes on a port: its
// PORT_QOS_MAP tc_to_queue_map (TC_TO_QUEUE_MAP), the class itself
// without one.
func (r *reader) tcQueues(port string, tcs []int) ([]int, error) {
	qm, err := r.hgetall("CONFIG_DB", "PORT_QOS_MAP|"+port)
	if err != nil {
		return nil, err
	}
	name := derefName(qm["tc_to_queue_map"])
	if name == "" {
		return uniqSorted(tcs), nil
	}
	m, err := r.hgetall("CONFIG_DB", "TC_TO_QUEUE_MAP|"+name)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, tc := range tcs {
		q, ok := m[strconv.Itoa(tc)]
		n, err := strconv.Atoi(strings.TrimSpace(q))
		switch {
		case !ok:
			return nil, fmt.Errorf("TC_TO_QUEUE_MAP|%s (port %s) does not map traffic class %d", name, port, tc)
		case err != nil || n < 0 || n > 15:
			return nil, fmt.Errorf("TC_TO_QUEUE_MAP|%s (port %s) maps traffic class %d to %q, not a queue 0..15", name, port, tc, q)
		}
		out = append(out, n)
	}
	return uniqSorted(out), nil
}

// egressLosslessProfile is the device's buffer profile in its egress
// lossless pool (egress_lossless_profile where it has one): what a
// lossless class's egress queue uses, so that it never drops what its
// ingress priority group pauses for.
func (r *reader) egressLosslessProfile() (string, error) {
	pool, _, err := r.pool("egress", true)
	if err != nil {
		return "", err
	}
	names, err := r.keys("CONFIG_DB", "BUFFER_PROFILE|")
	if err != nil {
		return "", err
	}
	var found []string
	for _, n := range names {
		if n == losslessProfile || n == queueProfile {
			continue
		}
		m, err := r.hgetall("CONFIG_DB", "BUFFER_PROFILE|"+n)
		if err != nil {
			return "", err
		}
		if derefName(m["pool"]) == pool {
			found = append(found, n)
		}
	}
	switch {
	case slices.Contains(found, "egress_lossless_profile"):
		return "egress_lossless_profile", nil
	case len(found) > 0:
		return found[0], nil
	}
	return "", fmt.Errorf("no buffer profile in the egress lossless pool %s (BUFFER_PROFILE has %s)", pool, strings.Join(names, ", "))
}

// rangeKeys returns the keys of table for port that cover nums (queue or
// priority group numbers): a number in an existing entry's range (e.g.
// BUFFER_QUEUE|Ethernet0|0-2) is that entry's key, so that the driver
// never writes an entry overlapping one the device has; the others are
// grouped into ranges of their own.
func (r *reader) rangeKeys(table, port string, nums []int) ([]string, error) {
	prefix := table + "|" + port + "|"
	have, err := r.keys("CONFIG_DB", prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	var rest []int
	seen := map[string]bool{}
	for _, n := range uniqSorted(nums) {
		found := ""
		for _, k := range have {
			lo, hi, ok := parseRange(k)
			if ok && lo <= n && n <= hi {
				found = k
				break
			}
		}
		if found == "" {
			rest = append(rest, n)
			continue
		}
		if !seen[found] {
			seen[found] = true
			out = append(out, prefix+found)
		}
	}
	for _, k := range queueRanges(rest) {
		out = append(out, prefix+k)
	}
	return out, nil
}

// parseRange parses "3" or "3-4".
func parseRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	return lo, hi, err1 == nil && err2 == nil && lo <= hi
}
