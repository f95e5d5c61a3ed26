package workloads

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// Limits on .cm files, so that a hostile file cannot exhaust memory.
const (
	maxCMNodes       = 1 << 20 // "Nodes"
	maxCMConnections = 1 << 24 // "Connections"
	maxCMTriggers    = 1 << 24 // "Triggers"
	maxCMID          = 1<<31 - 1
	maxCMLine        = 64 << 10 // bytes per line
)

// cmIDBase is the .cm id of the flow with Flow.ID 0: htsim's ids start at 1.
const cmIDBase = 1

// LoadCM reads the htsim connection matrix at path; the matrix is named
// after path. See the package documentation for the format.
func LoadCM(path string) (*Matrix, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return ParseCM(path, fh)
}

// ParseCM reads an htsim connection matrix (.cm) from r. name names the
// matrix and prefixes error messages, which also give the line number, e.g.
// "perm.cm:7: destination host 130 out of range [0, 128)". The result has
// Hosts = the "Nodes" header and one flow per connection line, in file
// order, and passes Validate. Flow IDs are the file's 1-based connection
// ids minus one (so htsim's "id 1" is Flow.ID 0), and triggers become
// After links. See the package documentation for the format.
func ParseCM(name string, r io.Reader) (*Matrix, error) {
	if name == "" {
		name = "connection matrix"
	}
	p := &cmParser{name: name, nodes: -1, conns: -1, trigs: -1}
	if err := p.read(r); err != nil {
		return nil, err
	}
	return p.finish()
}

// cmTrigger is a "trigger id T ..." declaration.
type cmTrigger struct {
	id    int
	line  int
	kind  string // oneshot, multishot or barrier
	count int64  // barrier count; -1 if not given
	firer int32  // index of the flow that fires it, or -1
}

// cmConn is what a connection line says beyond its Flow.
type cmConn struct {
	line int
	wait int // trigger waited for, or 0
	fire int // trigger fired on completion (send_done_trigger), or 0
}

type cmParser struct {
	name   string
	line   int
	fields []string // reused by each line

	// Header values (-1: not given) and the lines they were given on.
	nodes, conns, trigs             int
	nodesLine, connsLine, trigsLine int
	body                            bool // a connection or trigger line was seen

	flows     []Flow
	conn      []cmConn // parallel to flows
	byID      intIndex // file id -> index in flows
	connLines int      // connection lines seen (may exceed len(flows))

	decls     []cmTrigger
	byTrigger intIndex // trigger id -> index in decls
	trigLines int      // trigger lines seen (may exceed len(decls))
}

func (p *cmParser) errf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, p.line, fmt.Sprintf(format, args...))
}

func (p *cmParser) fileErrf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", p.name, fmt.Sprintf(format, args...))
}

// appendFields appends the space-separated fields of s to dst.
func appendFields(dst []string, s string) []string {
	for {
		i := 0
		for i < len(s) && asciiSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return dst
		}
		s = s[i:]
		j := 0
		for j < len(s) && !asciiSpace(s[j]) {
			j++
		}
		dst = append(dst, s[:j])
		s = s[j:]
	}
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func (p *cmParser) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxCMLine)
	for sc.Scan() {
		p.line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		p.fields = appendFields(p.fields[:0], text)
		fields := p.fields
		if len(fields) == 0 {
			continue
		}
		var err error
		switch kw := fields[0]; {
		case kw == "Nodes" || kw == "Connections" || kw == "Triggers":
			err = p.header(fields)
		case strings.Contains(kw, "->"):
			err = p.connection(fields)
		case kw == "trigger":
			err = p.trigger(fields)
		case kw == "Failures" || kw == "failure":
			err = p.errf("link failures (%q) are not supported", kw)
		default:
			err = p.errf("unrecognized line starting with %q (expected Nodes, Connections, Triggers, a connection \"src->dst ...\" or \"trigger id ...\")", kw)
		}
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			p.line++
			return p.errf("line longer than %d bytes", maxCMLine)
		}
		return p.fileErrf("%v", err)
	}
	return nil
}

func (p *cmParser) header(fields []string) error {
	kw := fields[0]
	var val, line *int
	var lo, hi int
	switch kw {
	case "Nodes":
		val, line, lo, hi = &p.nodes, &p.nodesLine, 1, maxCMNodes
	case "Connections":
		val, line, lo, hi = &p.conns, &p.connsLine, 0, maxCMConnections
	default:
		val, line, lo, hi = &p.trigs, &p.trigsLine, 0, maxCMTriggers
	}
	if p.body {
		return p.errf("%q header after the first connection or trigger line", kw)
	}
	if *val >= 0 {
		return p.errf("%q given twice (first on line %d)", kw, *line)
	}
	if len(fields) < 2 {
		return p.errf("%q expects an integer, got nothing", kw)
	}
	if len(fields) > 2 {
		return p.errf("unexpected %q after %q", fields[2], kw+" "+fields[1])
	}
	v, err := strconv.Atoi(fields[1])
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			v = hi + 1
		} else {
			return p.errf("%q expects an integer, got %q", kw, fields[1])
		}
	}
	if v < lo || v > hi {
		return p.errf("%q must be in [%d, %d], got %s", kw, lo, hi, fields[1])
	}
	*val, *line = v, p.line
	return nil
}

// hostNum parses one side of "src->dst".
func (p *cmParser) hostNum(role, s string) (int, error) {
	h, err := strconv.Atoi(s)
	if err != nil {
		return 0, p.errf("%s host %q is not an integer", role, s)
	}
	if h < 0 || h >= p.nodes {
		return 0, p.errf("%s host %d out of range [0, %d)", role, h, p.nodes)
	}
	return h, nil
}

// Connection attributes, as bits of a set.
const (
	attrID = 1 << iota
	attrSize
	attrStart
	attrTrigger
	attrSendDone
	attrPrio
)

// cmKeywords lists the connection attributes ParseCM accepts.
const cmKeywords = "id, size, start, trigger, send_done_trigger or prio"

func (p *cmParser) connection(fields []string) error {
	p.body = true
	p.connLines++
	// The headers come first, so that storage is bounded by "Connections".
	if p.nodes < 0 {
		return p.errf("connection before the \"Nodes\" header")
	}
	if p.conns < 0 {
		return p.errf("connection before the \"Connections\" header")
	}
	srcS, dstS, _ := strings.Cut(fields[0], "->")
	if srcS == "" || dstS == "" {
		return p.errf("malformed connection %q (expected \"src->dst\" without spaces)", fields[0])
	}
	src, err := p.hostNum("source", srcS)
	if err != nil {
		return err
	}
	dst, err := p.hostNum("destination", dstS)
	if err != nil {
		return err
	}
	if src == dst {
		return p.errf("source and destination are both host %d", src)
	}

	fl := Flow{Src: src, Dst: dst, After: -1}
	c := cmConn{line: p.line}
	id := -1
	seen := 0
	for i := 1; i < len(fields); i += 2 {
		kw := fields[i]
		var attr int
		switch kw {
		case "id":
			attr = attrID
		case "size":
			attr = attrSize
		case "start":
			attr = attrStart
		case "trigger":
			attr = attrTrigger
		case "send_done_trigger":
			attr = attrSendDone
		case "prio":
			attr = attrPrio
		case "recv_done_trigger":
			return p.errf("recv_done_trigger is not supported: a fabricbench flow starts when its predecessor completes at the sender (use send_done_trigger)")
		default:
			return p.errf("unknown connection attribute %q (expected %s)", kw, cmKeywords)
		}
		if seen&attr != 0 {
			return p.errf("%q given twice", kw)
		}
		seen |= attr
		if i+1 >= len(fields) {
			return p.errf("%q expects a value", kw)
		}
		val := fields[i+1]
		switch attr {
		case attrID:
			if id, err = p.cmID("id", val); err != nil {
				return err
			}
		case attrSize:
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || v <= 0 || val[0] == '+' {
				return p.errf("\"size\" expects a positive integer (bytes), got %q", val)
			}
			if err != nil || v > units.MaxBytes {
				return p.errf("size %s bytes is too large (at most %d)", val, units.MaxBytes)
			}
			fl.Size = v
		case attrStart:
			v, err := units.ParsePs(val + "us")
			switch units.KindOf(err) {
			case 0:
			case units.NotWhole:
				return p.errf("start time %s µs is not a whole number of picoseconds", val)
			case units.TooLarge:
				return p.errf("start time %s µs is too large (at most %d µs)", val, units.MaxPs/units.Microsecond)
			default:
				return p.errf("\"start\" expects a non-negative decimal time in microseconds, got %q", val)
			}
			fl.Start = v
		case attrTrigger:
			if c.wait, err = p.cmID("trigger", val); err != nil {
				return err
			}
		case attrSendDone:
			if c.fire, err = p.cmID("send_done_trigger", val); err != nil {
				return err
			}
		case attrPrio:
			if _, err := strconv.Atoi(val); err != nil {
				return p.errf("\"prio\" expects an integer, got %q", val)
			}
		}
	}
	if seen&attrSize == 0 {
		return p.errf("connection has no \"size\"")
	}
	if id < 0 {
		id = p.connLines
	}
	if prev, dup := p.byID.get(id); dup {
		return p.errf("connection id %d already used on line %d", id, p.conn[prev].line)
	}
	if len(p.flows) >= p.conns {
		// More connection lines than the header announced: keep checking
		// the syntax, and report the count at the end, but store nothing.
		return nil
	}
	p.byID.set(id, int32(len(p.flows)))
	fl.ID = id - cmIDBase
	p.flows = append(p.flows, fl)
	p.conn = append(p.conn, c)
	return nil
}

// cmID parses a connection or trigger id, which htsim requires to be positive.
func (p *cmParser) cmID(kw, s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > maxCMID || s[0] == '+' {
		return 0, p.errf("%q expects an integer in [1, %d], got %q", kw, maxCMID, s)
	}
	return v, nil
}

func (p *cmParser) trigger(fields []string) error {
	p.body = true
	p.trigLines++
	t := cmTrigger{line: p.line, count: -1, firer: -1}
	for i := 1; i < len(fields); i++ {
		switch kw := fields[i]; kw {
		case "id", "count":
			if i+1 >= len(fields) {
				return p.errf("trigger %q expects a value", kw)
			}
			i++
			if kw == "id" {
				if t.id != 0 {
					return p.errf("trigger \"id\" given twice")
				}
				v, err := p.cmID("id", fields[i])
				if err != nil {
					return err
				}
				t.id = v
			} else {
				if t.count >= 0 {
					return p.errf("trigger \"count\" given twice")
				}
				v, err := strconv.ParseInt(fields[i], 10, 64)
				if err != nil || v < 0 || fields[i][0] == '+' {
					return p.errf("trigger \"count\" expects a non-negative integer, got %q", fields[i])
				}
				t.count = v
			}
		case "oneshot", "multishot", "barrier":
			if t.kind != "" {
				return p.errf("trigger has two types, %q and %q", t.kind, kw)
			}
			t.kind = kw
		default:
			return p.errf("unknown trigger attribute %q (expected id, oneshot, multishot, barrier or count)", kw)
		}
	}
	if t.id == 0 {
		return p.errf("trigger has no \"id\"")
	}
	if t.kind == "" {
		return p.errf("trigger %d has no type (oneshot, multishot or barrier)", t.id)
	}
	if prev, dup := p.byTrigger.get(t.id); dup {
		return p.errf("trigger %d declared twice (first on line %d)", t.id, p.decls[prev].line)
	}
	if len(p.decls) >= p.trigs {
		// No "Triggers" header or too many trigger lines: reported at the
		// end; store nothing.
		return nil
	}
	p.byTrigger.set(t.id, int32(len(p.decls)))
	p.decls = append(p.decls, t)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (p *cmParser) finish() (*Matrix, error) {
	if p.nodes < 0 {
		if p.line == 0 {
			return nil, p.fileErrf("empty file")
		}
		return nil, p.fileErrf("missing \"Nodes\" header")
	}
	if p.conns < 0 {
		return nil, p.fileErrf("missing \"Connections\" header")
	}
	if p.connLines != p.conns {
		return nil, p.fileErrf("header says Connections %d but %s", p.conns,
			plural(p.connLines, "connection line follows", "connection lines follow"))
	}
	if p.conns == 0 {
		return nil, p.fileErrf("no connections")
	}
	if p.trigs < 0 && p.trigLines > 0 {
		return nil, p.fileErrf("%s but no \"Triggers\" header", plural(p.trigLines, "trigger line", "trigger lines"))
	}
	if p.trigs >= 0 && p.trigLines != p.trigs {
		return nil, p.fileErrf("header says Triggers %d but %s", p.trigs,
			plural(p.trigLines, "trigger line follows", "trigger lines follow"))
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	if i, ok := p.findCycle(); ok {
		p.line = p.conn[i].line
		return nil, p.errf("connection id %d is part of a dependency cycle", p.flows[i].ID+cmIDBase)
	}
	m := &Matrix{Name: p.name, Hosts: p.nodes, Flows: p.flows}
	if err := m.Validate(); err != nil {
		return nil, err // not expected: the checks above cover Validate
	}
	return m, nil
}

// resolve turns the triggers connections fire and wait for into After
// links, reporting problems in file order.
func (p *cmParser) resolve() error {
	// Firers first: every fired trigger must be declared (htsim looks it up
	// when it creates the flow), and fired by one connection only (a
	// fabricbench flow has at most one predecessor; htsim aborts when a
	// oneshot trigger fires twice).
	for i, c := range p.conn {
		if c.fire == 0 {
			continue
		}
		p.line = c.line
		d, ok := p.byTrigger.get(c.fire)
		if !ok {
			return p.errf("trigger %d is not declared (add a line \"trigger id %d oneshot\")", c.fire, c.fire)
		}
		if prev := p.decls[d].firer; prev >= 0 {
			return p.errf("trigger %d is also fired by the connection on line %d; a fabricbench flow can wait for one predecessor only",
				c.fire, p.conn[prev].line)
		}
		p.decls[d].firer = int32(i)
	}
	var multishotWaiters map[int]int
	for i, c := range p.conn {
		if c.wait == 0 {
			continue
		}
		p.line = c.line
		d, ok := p.byTrigger.get(c.wait)
		if !ok {
			return p.errf("trigger %d is not declared (add a line \"trigger id %d oneshot\")", c.wait, c.wait)
		}
		t := &p.decls[d]
		if t.firer < 0 {
			return p.errf("trigger %d is never fired: no connection has send_done_trigger %d", t.id, t.id)
		}
		switch t.kind {
		case "multishot":
			// htsim starts one waiting connection per firing.
			if multishotWaiters == nil {
				multishotWaiters = make(map[int]int)
			}
			if multishotWaiters[t.id]++; multishotWaiters[t.id] > 1 {
				return p.errf("multishot trigger %d has several waiting connections; fabricbench supports one (or use oneshot)", t.id)
			}
		case "barrier":
			if t.count != 1 {
				return p.errf("barrier trigger %d needs count 1 (one predecessor), got %d", t.id, t.count)
			}
		}
		p.flows[i].After = p.flows[t.firer].ID
	}
	return nil
}

// findCycle reports a flow on a dependency cycle, in linear time.
func (p *cmParser) findCycle() (int, bool) {
	return dependencyCycle(p.flows, func(id int) (int, bool) {
		k, ok := p.byID.get(id + cmIDBase)
		return int(k), ok
	})
}

// WriteCM writes m as an htsim connection matrix that ParseCM reads back
// into an equal matrix (given the same name). m must pass Validate, flow
// IDs must be in [0, 2^31-2] (the file holds ID+1: htsim ids start at 1),
// and m may have at most 2^20 hosts and 2^24 flows.
//
// Every flow is a connection line "src->dst id ID+1 ... size S". A flow
// with After == -1 gets "start T" (its start time in microseconds, with up
// to six decimals). A flow with After >= 0 gets "trigger P+1", where P is
// After, plus "start D" if it has a non-zero delay D (a fabricbench
// extension that htsim rejects); its predecessor gets
// "send_done_trigger P+1", and a line "trigger id P+1 oneshot" declares
// the trigger after the connections. The matrix name is written as a
// leading comment.
func WriteCM(w io.Writer, m *Matrix) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("write .cm: %w", err)
	}
	if m.Hosts > maxCMNodes {
		return fmt.Errorf("write .cm: %s: %d hosts, more than the .cm limit of %d", m.name(), m.Hosts, maxCMNodes)
	}
	if len(m.Flows) > maxCMConnections {
		return fmt.Errorf("write .cm: %s: %d flows, more than the .cm limit of %d", m.name(), len(m.Flows), maxCMConnections)
	}
	var preds intIndex // IDs of flows that others wait for
	nPreds := 0
	for _, f := range m.Flows {
		if f.ID < 0 || f.ID > maxCMID-cmIDBase {
			return fmt.Errorf("write .cm: %s: flow ID %d out of range [0, %d]", m.name(), f.ID, maxCMID-cmIDBase)
		}
	}
	for _, f := range m.Flows {
		if _, ok := preds.get(f.After); f.After >= 0 && !ok {
			preds.set(f.After, 0)
			nPreds++
		}
	}
	isPred := func(id int) bool { _, ok := preds.get(id); return ok }

	bw := bufio.NewWriterSize(w, 64<<10)
	if m.Name != "" {
		bw.WriteString("# fabricbench traffic matrix " + commentSafe(m.Name) + "\n")
	}
	fmt.Fprintf(bw, "Nodes %d\nConnections %d\n", m.Hosts, len(m.Flows))
	if nPreds > 0 {
		fmt.Fprintf(bw, "Triggers %d\n", nPreds)
	}
	var buf []byte
	for _, f := range m.Flows {
		buf = buf[:0]
		buf = strconv.AppendInt(buf, int64(f.Src), 10)
		buf = append(buf, "->"...)
		buf = strconv.AppendInt(buf, int64(f.Dst), 10)
		buf = append(buf, " id "...)
		buf = strconv.AppendInt(buf, int64(f.ID+cmIDBase), 10)
		if f.After >= 0 {
			buf = append(buf, " trigger "...)
			buf = strconv.AppendInt(buf, int64(f.After+cmIDBase), 10)
		}
		if f.After < 0 || f.Start != 0 {
			buf = append(buf, " start "...)
			buf = appendMicros(buf, f.Start)
		}
		buf = append(buf, " size "...)
		buf = strconv.AppendInt(buf, f.Size, 10)
		if isPred(f.ID) {
			buf = append(buf, " send_done_trigger "...)
			buf = strconv.AppendInt(buf, int64(f.ID+cmIDBase), 10)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	for _, f := range m.Flows {
		if isPred(f.ID) {
			buf = append(buf[:0], "trigger id "...)
			buf = strconv.AppendInt(buf, int64(f.ID+cmIDBase), 10)
			buf = append(buf, " oneshot\n"...)
			bw.Write(buf)
		}
	}
	return bw.Flush()
}

// appendMicros appends ps picoseconds (>= 0) as decimal microseconds with
// no trailing zeros: 0, 12, 12.5, 0.000001.
func appendMicros(buf []byte, ps int64) []byte {
	buf = strconv.AppendInt(buf, ps/1e6, 10)
	if frac := ps % 1e6; frac != 0 {
		s := strconv.FormatInt(1e6+frac, 10)[1:] // six digits, zero padded
		buf = append(buf, '.')
		buf = append(buf, strings.TrimRight(s, "0")...)
	}
	return buf
}

// commentSafe makes s fit on one comment line.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' || r == 0x85 {
			return ' '
		}
		return r
	}, s)
}
