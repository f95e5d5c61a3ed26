package hwbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/fabricbench/fabricbench/harness/runspec"
)

// Faults on hardware act through the devices' shells (the drivers' Exec):
//
//   - down/up: `ip link set dev X down|up` on Linux and FRR devices,
//     `sudo config interface shutdown|startup X` on SONiC;
//   - degrade: the transmit side's root qdisc becomes a tbf at the
//     fraction of the link's rate (Linux and FRR devices only: a switch
//     ASIC's port is not shaped by tc).
//
// Before a port is first changed its state is read (the link's admin
// state, the root qdisc as `tc -j` shows it) and Down puts it back, then
// reads it again and compares: a port that is not as before is reported
// as NOT RESTORED.

// portRef is one transmit side of a link.
type portRef struct {
	dev, iface string
	rateBps    int64
	platform   string
}

// faultPorts are the ports a fault acts on.
func (b *Backend) faultPorts(ft runspec.Fault) []portRef {
	l := b.f.Links[ft.Link]
	var out []portRef
	for k, p := range []int{l.A, l.B} {
		if ft.Direction != 0 && ft.Direction != k+1 && ft.Up && ft.Fraction > 0 {
			continue
		}
		node := b.f.Nodes[b.f.Ports[p].Node].Name
		d := b.devs[node]
		out = append(out, portRef{dev: node, iface: d.inv.Interface(b.f.Ports[p].Name), rateBps: b.f.PortRate(p), platform: d.inv.Platform})
	}
	return out
}

// applyFault changes the ports of one fault event.
func (b *Backend) applyFault(ctx context.Context, ft runspec.Fault) error {
	for _, p := range b.faultPorts(ft) {
		if err := b.portFault(ctx, p, ft); err != nil {
			return fmt.Errorf("fault %s on %s:%s: %w", ft.Description, p.dev, p.iface, err)
		}
	}
	return nil
}

func (b *Backend) exec(ctx context.Context, dev, cmd string) (string, error) {
	drv, err := b.driver(dev)
	if err != nil {
		return "", err
	}
	out, err := drv.Exec(ctx, cmd)
	if err != nil {
		return out, fmt.Errorf("%s: %q: %w: %s", dev, cmd, err, strings.TrimSpace(out))
	}
	return out, nil
}

func (b *Backend) portFault(ctx context.Context, p portRef, ft runspec.Fault) error {
	sonic := p.platform == "sonic"
	switch {
	case !ft.Up: // down
		if err := b.saveLink(ctx, p); err != nil {
			return err
		}
		cmd := "ip link set dev " + shq(p.iface) + " down"
		if sonic {
			cmd = "sudo config interface shutdown " + shq(p.iface)
		}
		_, err := b.exec(ctx, p.dev, cmd)
		return err
	case ft.Fraction > 0: // degrade
		if sonic {
			return fmt.Errorf("degrading a SONiC switch port is not supported (its ASIC is not shaped by tc); degrade the host's side or use a Linux/FRR device")
		}
		if err := b.saveQdisc(ctx, p); err != nil {
			return err
		}
		_, err := b.exec(ctx, p.dev, tbfCommand(p.iface, "fb:", int64(float64(p.rateBps)*ft.Fraction)))
		return err
	default: // up or restore
		cmd := "ip link set dev " + shq(p.iface) + " up"
		if sonic {
			cmd = "sudo config interface startup " + shq(p.iface)
		}
		if _, err := b.exec(ctx, p.dev, cmd); err != nil {
			return err
		}
		if q := b.savedQdisc(p); q != nil {
			_, err := b.exec(ctx, p.dev, q.restore)
			return err
		}
		return nil
	}
}

// tbfCommand shapes dev to rateBps: a 1 ms burst (at least four 9000-byte
// frames) and 5 ms of queue.
func tbfCommand(dev, handle string, rateBps int64) string {
	rate := rateBps / 8
	burst := max(rate/1000, 4*(LinkMTU+14))
	limit := rate*5/1000 + burst
	return fmt.Sprintf("tc qdisc replace dev %s root handle %s tbf rate %dbit burst %d limit %d", shq(dev), handle, rateBps, burst, limit)
}

// saved is a port's state before the run changed it.
type saved struct {
	key     string // dev/iface/what
	restore string // the command that puts it back
	read    string // the command that reads it
	before  string // what read gave before (normalised)
	q       *qdisc // the root qdisc before
}

func (b *Backend) savedQdisc(p portRef) *saved {
	b.undoM.Lock()
	defer b.undoM.Unlock()
	for i := range b.saves {
		if b.saves[i].key == p.dev+"/"+p.iface+"/qdisc" {
			return &b.saves[i]
		}
	}
	return nil
}

// remember records a port's earlier state once (the first change wins)
// and the undo step that restores it at Down.
func (b *Backend) remember(p portRef, s saved, what string) {
	b.undoM.Lock()
	defer b.undoM.Unlock()
	for _, x := range b.saves {
		if x.key == s.key {
			return
		}
	}
	b.saves = append(b.saves, s)
	b.undo = append(b.undo, undoStep{dev: p.dev, what: what, cmd: s.restore, read: s.read, before: s.before, q: s.q})
}

func (b *Backend) isSaved(key string) bool {
	b.undoM.Lock()
	defer b.undoM.Unlock()
	for _, x := range b.saves {
		if x.key == key {
			return true
		}
	}
	return false
}

// saveLink remembers whether the port was administratively up.
func (b *Backend) saveLink(ctx context.Context, p portRef) error {
	key := p.dev + "/" + p.iface + "/link"
	if b.isSaved(key) {
		return nil
	}
	read := "ip -j link show dev " + shq(p.iface)
	out, err := b.exec(ctx, p.dev, read)
	if err != nil {
		return err
	}
	up, err := adminUp(out)
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", p.dev, p.iface, err)
	}
	state := "down"
	if up {
		state = "up"
	}
	restore := "ip link set dev " + shq(p.iface) + " " + state
	if p.platform == "sonic" {
		restore = "sudo config interface startup " + shq(p.iface)
		if !up {
			restore = "sudo config interface shutdown " + shq(p.iface)
		}
	}
	b.remember(p, saved{key: key, restore: restore, read: read, before: "admin " + state}, fmt.Sprintf("link %s admin %s", p.iface, state))
	return nil
}

func adminUp(out string) (bool, error) {
	var links []struct {
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		return false, fmt.Errorf("unexpected ip -j link output %q", strings.TrimSpace(out))
	}
	for _, f := range links[0].Flags {
		if f == "UP" {
			return true, nil
		}
	}
	return false, nil
}

// qdisc is a root qdisc as tc -j shows it.
type qdisc struct {
	Kind    string         `json:"kind"`
	Handle  string         `json:"handle"`
	Root    bool           `json:"root"`
	Options map[string]any `json:"options"`
}

// readQdisc parses `tc -j qdisc show dev X root`.
func readQdisc(out string) (qdisc, error) {
	var qs []qdisc
	if err := json.Unmarshal([]byte(out), &qs); err != nil {
		return qdisc{}, fmt.Errorf("unexpected tc -j output %q", strings.TrimSpace(out))
	}
	for _, q := range qs {
		if q.Root {
			return q, nil
		}
	}
	return qdisc{}, fmt.Errorf("no root qdisc in %q", strings.TrimSpace(out))
}

// normQdisc is what is compared before and after: kind, handle and
// options.
func normQdisc(q qdisc) string {
	b, _ := json.Marshal(struct {
		Kind, Handle string
		Options      map[string]any
	}{q.Kind, q.Handle, q.Options})
	return string(b)
}

// defaultRoots are the qdiscs the kernel attaches by itself (handle 0:):
// deleting the run's root qdisc gives one of them back.
var defaultRoots = map[string]bool{"noqueue": true, "mq": true, "pfifo_fast": true, "fq_codel": true, "fq": true}

// saveQdisc remembers the port's root qdisc and how to put it back: a
// kernel default comes back by deleting the run's; a tbf is set again
// with its rate, burst and latency.
func (b *Backend) saveQdisc(ctx context.Context, p portRef) error {
	key := p.dev + "/" + p.iface + "/qdisc"
	if b.isSaved(key) {
		return nil
	}
	read := "tc -j qdisc show dev " + shq(p.iface) + " root"
	out, err := b.exec(ctx, p.dev, read)
	if err != nil {
		return err
	}
	q, err := readQdisc(out)
	if err != nil {
		return fmt.Errorf("%s: %w", p.dev, err)
	}
	var restore string
	switch {
	case defaultRoots[q.Kind] && (q.Handle == "0:" || q.Handle == ""):
		restore = "tc qdisc del dev " + shq(p.iface) + " root"
	case q.Kind == "tbf" && onlyKeys(q.Options, "rate", "burst", "lat"):
		rate, _ := q.Options["rate"].(float64)
		burst, _ := q.Options["burst"].(float64)
		lat, _ := q.Options["lat"].(float64)
		restore = fmt.Sprintf("tc qdisc replace dev %s root handle %s tbf rate %.0fbit burst %d latency %.0fus", shq(p.iface), q.Handle, rate*8, tcBurst(burst, rate), lat)
	default:
		return fmt.Errorf("%s: %s has root qdisc %s %s, which the run could not put back after degrading the port; degrade refused", p.dev, p.iface, q.Kind, q.Handle)
	}
	b.remember(p, saved{key: key, restore: restore, read: read, before: normQdisc(q), q: &q}, fmt.Sprintf("%s root qdisc %s %s", p.iface, q.Kind, q.Handle))
	return nil
}

func onlyKeys(m map[string]any, keys ...string) bool {
	for k := range m {
		found := false
		for _, x := range keys {
			found = found || k == x
		}
		if !found {
			return false
		}
	}
	return true
}

// check reads a port's state after its undo step and compares it with
// the state before.
func (u undoStep) check(ctx context.Context, b *Backend) error {
	out, err := b.exec(ctx, u.dev, u.read)
	if err != nil {
		return err
	}
	var now string
	if strings.HasPrefix(u.before, "admin ") {
		up, err := adminUp(out)
		if err != nil {
			return err
		}
		now = "admin down"
		if up {
			now = "admin up"
		}
	} else {
		q, err := readQdisc(out)
		if err != nil {
			return err
		}
		if u.q != nil && sameQdisc(*u.q, q) {
			return nil
		}
		now = normQdisc(q)
	}
	if now != u.before {
		return fmt.Errorf("read back %s, was %s", now, u.before)
	}
	return nil
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tcBurst is the burst to give tc for a tbf that shows burst (bytes) at
// rate (bytes/s). The kernel keeps the burst as time; tc sets it in whole
// microseconds (the bytes given, truncated) and shows time x rate
// truncated. A shaper set through netlink can hold a fraction of a
// microsecond that tc cannot give back: this picks the whole microseconds
// nearest to it, so the burst comes back within one microsecond of the
// rate (restoredOK), and exactly when the original was tc's own.
func tcBurst(burst, rate float64) int64 {
	if rate <= 0 {
		return int64(burst)
	}
	r := rate / 1e6 // bytes per microsecond
	us := math.Round(burst / r)
	return int64(math.Ceil(us * r))
}

// sameQdisc compares a root qdisc with the one read before the run: kind,
// handle and options equal, but a tbf's burst within one microsecond at
// its rate and its latency within one microsecond (tc's resolution, see
// tcBurst: the latency follows the burst).
func sameQdisc(before, now qdisc) bool {
	if before.Kind != now.Kind || before.Handle != now.Handle || len(before.Options) != len(now.Options) {
		return false
	}
	for k, v := range before.Options {
		w, ok := now.Options[k]
		if !ok {
			return false
		}
		if k == "burst" && before.Kind == "tbf" {
			b, _ := v.(float64)
			n, _ := w.(float64)
			rate, _ := before.Options["rate"].(float64)
			if math.Abs(b-n) > math.Max(1, rate/1e6) {
				return false
			}
			continue
		}
		if k == "lat" && before.Kind == "tbf" {
			b, _ := v.(float64)
			n, _ := w.(float64)
			if math.Abs(b-n) > 1 {
				return false
			}
			continue
		}
		if fmt.Sprint(v) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}
