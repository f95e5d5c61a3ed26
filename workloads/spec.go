package workloads

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/units"
)

// maxSpecFlows bounds the matrices ParseSpec generates (an all-to-all on
// 5,793 hosts), so that a spec cannot exhaust memory.
const maxSpecFlows = 1 << 25

// specKind describes one workload kind of the spec grammar.
type specKind struct {
	name     string
	keys     []string // valid keys, in the order error messages list them
	required []string
}

var specKinds = []specKind{
	{name: "permutation", keys: []string{"size", "start"}, required: []string{"size"}},
	{name: "incast", keys: []string{"senders", "size", "dst", "start"}, required: []string{"senders", "size"}},
	{name: "alltoall", keys: []string{"size", "k", "start"}, required: []string{"size"}},
	{name: "groupshift", keys: []string{"size", "shift", "start"}, required: []string{"size"}},
	{name: "unf", keys: []string{"size", "flows", "start"}, required: []string{"size"}},
	{name: "adv1", keys: []string{"size", "flows", "src_group", "dst_group", "start"}, required: []string{"size"}},
	{name: "adv2", keys: []string{"size", "flows", "dst_group", "start"}, required: []string{"size"}},
	{name: "monitored", keys: []string{"size", "flow", "src", "dst", "free", "into", "flows", "bg", "start"}, required: []string{"size"}},
}

func specKindNames() string {
	names := make([]string, len(specKinds))
	for i, k := range specKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// Load returns the workload named by specOrPath on fabric f: an htsim
// connection matrix when specOrPath ends in ".cm" (any case), which must
// have as many nodes as f has hosts (f may be nil to skip the check), and a
// spec otherwise (see ParseSpec and the package documentation).
func Load(specOrPath string, f *inventory.Fabric, seed uint64) (*Matrix, error) {
	s := strings.TrimSpace(specOrPath)
	if !strings.HasSuffix(strings.ToLower(s), ".cm") {
		return ParseSpec(specOrPath, f, seed)
	}
	m, err := LoadCM(s)
	if err != nil {
		return nil, err
	}
	if f != nil && m.Hosts != f.NumHosts() {
		return nil, fmt.Errorf("%s: the matrix is for Nodes %d but the fabric has %d hosts", s, m.Hosts, f.NumHosts())
	}
	return m, nil
}

// ParseSpec generates the workload described by spec on fabric f, e.g.
// "permutation:size=2MiB", "incast:senders=32,size=2MB,dst=5" or
// "alltoall:size=1MiB,k=4"; the grammar is in the package documentation.
// seed drives the random choices. The matrix is named spec (trimmed) and
// passes Validate.
func ParseSpec(spec string, f *inventory.Fabric, seed uint64) (*Matrix, error) {
	s := strings.TrimSpace(spec)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("workload %q: %s", s, fmt.Sprintf(format, args...))
	}
	kindName, rest, _ := strings.Cut(s, ":")
	kindName = strings.TrimSpace(kindName)
	var kind *specKind
	for i := range specKinds {
		if specKinds[i].name == kindName {
			kind = &specKinds[i]
		}
	}
	if kind == nil {
		if kindName == "" {
			return nil, fail("missing workload kind (valid kinds: %s; or the path of a .cm file)", specKindNames())
		}
		return nil, fail("unknown workload kind %q (valid kinds: %s; or the path of a .cm file)", kindName, specKindNames())
	}
	validKeys := strings.Join(kind.keys, ", ")

	params := make(map[string]string)
	if strings.TrimSpace(rest) != "" {
		for _, p := range strings.Split(rest, ",") {
			k, v, hasEq := strings.Cut(p, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !hasEq {
				if k == "" {
					return nil, fail("empty parameter (expected key=value; valid keys: %s)", validKeys)
				}
				return nil, fail("parameter %q is not key=value (valid keys: %s)", k, validKeys)
			}
			valid := false
			for _, vk := range kind.keys {
				valid = valid || vk == k
			}
			if !valid {
				return nil, fail("unknown key %q for %s (valid keys: %s)", k, kind.name, validKeys)
			}
			if _, dup := params[k]; dup {
				return nil, fail("key %q given twice", k)
			}
			if v == "" {
				return nil, fail("key %q has no value", k)
			}
			params[k] = v
		}
	}
	for _, rk := range kind.required {
		if _, ok := params[rk]; !ok {
			return nil, fail("%s needs key %q (valid keys: %s)", kind.name, rk, validKeys)
		}
	}

	if f == nil {
		return nil, fail("no fabric to generate the workload on")
	}
	hosts := f.NumHosts()
	if hosts < 2 {
		noun := "hosts"
		if hosts == 1 {
			noun = "host"
		}
		return nil, fail("the fabric has %d %s; %s needs at least 2", hosts, noun, kind.name)
	}

	size, err := units.ParseBytes(params["size"])
	if err != nil {
		return nil, fail("key \"size\": %v", err)
	}
	if size <= 0 {
		return nil, fail("key \"size\" must be positive, got %q", params["size"])
	}
	var start int64
	if v, ok := params["start"]; ok {
		if start, err = units.ParsePs(v); err != nil {
			return nil, fail("key \"start\": %v", err)
		}
	}
	// intKey parses an optional integer key in [lo, hi].
	intKey := func(key string, def, lo, hi int) (int, error) {
		v, ok := params[key]
		if !ok {
			return def, nil
		}
		x, err := strconv.Atoi(v)
		if err != nil || x < lo || x > hi {
			return 0, fail("key %q expects an integer in [%d, %d], got %q", key, lo, hi, v)
		}
		return x, nil
	}

	var m *Matrix
	switch kind.name {
	case "permutation":
		m = Permutation(f, size, seed)
	case "incast":
		senders, err := intKey("senders", 0, 1, hosts-1)
		if err != nil {
			return nil, err
		}
		dst, err := hostKey(f, params, "dst", fail)
		if err != nil {
			return nil, err
		}
		if m, err = Incast(f, senders, dst, size, seed); err != nil {
			return nil, fail("%v", err)
		}
	case "alltoall":
		k, err := intKey("k", 0, 0, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		if flows := int64(hosts) * int64(hosts-1); flows > maxSpecFlows {
			return nil, fail("an all-to-all on %d hosts has %d flows, more than the limit of %d", hosts, flows, maxSpecFlows)
		}
		m = AllToAll(f, size, k, seed)
	case "groupshift":
		shift, err := intKey("shift", 1, -hosts, hosts)
		if err != nil {
			return nil, err
		}
		if m, err = GroupShift(f, size, shift); err != nil {
			return nil, fail("%v", err)
		}
	case "monitored":
		mb := Monitored{Src: 0, Dst: hosts - 1, Size: 4 << 20, BackgroundSize: size}
		if v, ok := params["flow"]; ok {
			if mb.Size, err = units.ParseBytes(v); err != nil || mb.Size <= 0 {
				return nil, fail("key \"flow\" expects a positive size, got %q", v)
			}
		}
		if x, err := hostKey(f, params, "src", fail); err != nil {
			return nil, err
		} else if x >= 0 {
			mb.Src = x
		}
		if x, err := hostKey(f, params, "dst", fail); err != nil {
			return nil, err
		} else if x >= 0 {
			mb.Dst = x
		}
		switch v := params["into"]; v {
		case "", "exit":
		case "dst":
			mb.Into = IntoDst
		case "peer":
			mb.Into = IntoPeer
		default:
			return nil, fail("key \"into\" expects exit (the paper's pattern), dst or peer, got %q", v)
		}
		switch v := params["bg"]; v {
		case "", "scheme":
		case "minimal":
			mb.BackgroundMinimal = true
		default:
			return nil, fail("key \"bg\" expects scheme (the background uses the run's load balancer and routing) or minimal, got %q", v)
		}
		if mb.Flows, err = intKey("flows", 0, 0, hosts); err != nil {
			return nil, err
		}
		nFree, err := intKey("free", 1, 0, hosts)
		if err != nil {
			return nil, err
		}
		gs, err := hostGroupsOf(f)
		if err != nil {
			return nil, fail("%v", err)
		}
		pod := func(h int) int { return f.Nodes[f.HostLeaf(h)].Pod }
		mb.Free = FreeBefore(len(gs), pod(mb.Src), pod(mb.Dst), nFree)
		if m, err = mb.Matrix(f); err != nil {
			return nil, fail("%v", err)
		}
	case "unf", "adv1", "adv2":
		p := map[string]Pairing{"unf": UNF, "adv1": ADV1, "adv2": ADV2}[kind.name]
		def := p.Pairs(f)
		if p == UNF {
			def = hosts
		}
		flows, err := intKey("flows", def, 1, maxSpecFlows)
		if err != nil {
			return nil, err
		}
		src, err := intKey("src_group", -1, 0, hosts)
		if err != nil {
			return nil, err
		}
		dst, err := intKey("dst_group", -1, 0, hosts)
		if err != nil {
			return nil, err
		}
		if m, err = GroupPairs(f, p, size, flows, src, dst, seed); err != nil {
			return nil, fail("%v", err)
		}
	}
	if start != 0 {
		for i := range m.Flows {
			if m.Flows[i].After < 0 {
				m.Flows[i].Start += start
			}
		}
	}
	m.Name = s
	if err := m.Validate(); err != nil {
		return nil, fail("%v", err)
	}
	return m, nil
}

// hostKey parses an optional host key: a host number in [0, hosts-1] or,
// as suites name them, a host's name in the fabric ("host5"). Absent, -1.
func hostKey(f *inventory.Fabric, params map[string]string, key string, fail func(string, ...any) error) (int, error) {
	v, ok := params[key]
	if !ok {
		return -1, nil
	}
	hosts := f.NumHosts()
	want := fmt.Sprintf("a host number in [0, %d] or a host name (%s..%s)", hosts-1, f.Host(0).Name, f.Host(hosts-1).Name)
	if x, err := strconv.Atoi(v); err == nil {
		if x < 0 || x >= hosts {
			return 0, fail("key %q expects %s, got %q", key, want, v)
		}
		return x, nil
	}
	for h := 0; h < hosts; h++ {
		if f.Host(h).Name == v {
			return h, nil
		}
	}
	if id, found := f.NodeByName(v); found {
		return 0, fail("key %q: %s is a %s, not a host (want %s)", key, v, f.Nodes[id].Role, want)
	}
	return 0, fail("key %q expects %s, got %q", key, want, v)
}
