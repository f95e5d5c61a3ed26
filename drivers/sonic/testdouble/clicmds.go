package testdouble

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/redis/go-redis/v9"
)

// vrfNameRe is what SONiC's config CLI accepts as a VRF name: "Vrf"
// first, at most 15 characters (a Linux interface name).
var vrfNameRe = regexp.MustCompile(`^Vrf[A-Za-z0-9_-]{1,12}$`)

// config is the part of SONiC's `config` CLI the driver uses:
//
//	config vrf add NAME | config vrf del NAME
//	config interface vrf bind IFNAME VRF | config interface vrf unbind IFNAME
//
// Errors are printed as "Error: ..." (click's) with exit status 2.
func (e *env) config(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "Error: "+format+"\n", a...)
		return 2
	}
	db, err := e.cfg.Client("CONFIG_DB")
	if err != nil {
		return fail("%v", err)
	}
	defer db.Close()
	ctx := context.Background()
	switch {
	case len(args) == 3 && args[0] == "vrf" && args[1] == "add":
		name := args[2]
		if !vrfNameRe.MatchString(name) {
			return fail("'vrf_name' must begin with 'Vrf' and be at most 15 characters, not %q", name)
		}
		if n, _ := db.Exists(ctx, "VRF|"+name).Result(); n > 0 {
			return fail("VRF %s already exists", name)
		}
		e.log(Write{DB: "CONFIG_DB", Op: "config vrf add", Key: "VRF|" + name})
		return e.hset(ctx, db, "VRF|"+name, "NULL", "NULL")
	case len(args) == 3 && args[0] == "vrf" && args[1] == "del":
		name := args[2]
		if n, _ := db.Exists(ctx, "VRF|"+name).Result(); n == 0 {
			return fail("VRF %s does not exist", name)
		}
		e.log(Write{DB: "CONFIG_DB", Op: "config vrf del", Key: "VRF|" + name})
		// Its interfaces are unbound first, as SONiC's CLI does.
		for _, t := range ifTables {
			keys, _ := db.Keys(ctx, t+"|*").Result()
			for _, k := range keys {
				if strings.Count(k, "|") != 1 {
					continue
				}
				if v, _ := db.HGet(ctx, k, "vrf_name").Result(); v == name {
					if rc := e.unbind(ctx, db, t, strings.TrimPrefix(k, t+"|")); rc != 0 {
						return rc
					}
				}
			}
		}
		return e.del(ctx, db, "VRF|"+name)
	case len(args) == 5 && args[0] == "interface" && args[1] == "vrf" && args[2] == "bind":
		ifname, vrf := args[3], args[4]
		table, err := ifTable(ifname)
		if err != nil {
			return fail("%v", err)
		}
		if n, _ := db.Exists(ctx, "VRF|"+vrf).Result(); n == 0 {
			return fail("VRF %s does not exist", vrf)
		}
		if err := e.portExists(ctx, db, ifname); err != nil {
			return fail("%v", err)
		}
		if v, _ := db.HGet(ctx, table+"|"+ifname, "vrf_name").Result(); v == vrf {
			return 0
		}
		e.log(Write{DB: "CONFIG_DB", Op: "config interface vrf bind", Key: table + "|" + ifname, Fields: []string{"vrf_name", vrf}})
		// Binding removes the interface's addresses (SONiC's CLI does
		// too), then the entry is replaced.
		if rc := e.dropAddrs(ctx, db, table, ifname); rc != 0 {
			return rc
		}
		if rc := e.del(ctx, db, table+"|"+ifname); rc != 0 {
			return rc
		}
		return e.hset(ctx, db, table+"|"+ifname, "vrf_name", vrf)
	case len(args) == 4 && args[0] == "interface" && args[1] == "vrf" && args[2] == "unbind":
		ifname := args[3]
		table, err := ifTable(ifname)
		if err != nil {
			return fail("%v", err)
		}
		if err := e.portExists(ctx, db, ifname); err != nil {
			return fail("%v", err)
		}
		if v, _ := db.HGet(ctx, table+"|"+ifname, "vrf_name").Result(); v == "" {
			return 0
		}
		e.log(Write{DB: "CONFIG_DB", Op: "config interface vrf unbind", Key: table + "|" + ifname})
		return e.unbind(ctx, db, table, ifname)
	}
	fmt.Fprintf(e.stderr, "Usage: config vrf add|del VRF_NAME | config interface vrf bind IFNAME VRF_NAME | config interface vrf unbind IFNAME\n(the SONiC test double's config has these commands only)\n")
	return 2
}

var ifTables = []string{"INTERFACE", "PORTCHANNEL_INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE", "VLAN_SUB_INTERFACE"}

func ifTable(name string) (string, error) {
	switch {
	case strings.Contains(name, "."):
		return "VLAN_SUB_INTERFACE", nil
	case strings.HasPrefix(name, "Ethernet"):
		return "INTERFACE", nil
	case strings.HasPrefix(name, "PortChannel"):
		return "PORTCHANNEL_INTERFACE", nil
	case strings.HasPrefix(name, "Vlan"):
		return "VLAN_INTERFACE", nil
	case strings.HasPrefix(name, "Loopback"):
		return "LOOPBACK_INTERFACE", nil
	}
	return "", fmt.Errorf("interface name %s is invalid", name)
}

func (e *env) portExists(ctx context.Context, db *redis.Client, ifname string) error {
	if !strings.HasPrefix(ifname, "Ethernet") || strings.Contains(ifname, ".") {
		return nil
	}
	if n, _ := db.Exists(ctx, "PORT|"+ifname).Result(); n == 0 {
		return fmt.Errorf("interface %s does not exist", ifname)
	}
	return nil
}

func (e *env) unbind(ctx context.Context, db *redis.Client, table, ifname string) int {
	if rc := e.dropAddrs(ctx, db, table, ifname); rc != 0 {
		return rc
	}
	if rc := e.del(ctx, db, table+"|"+ifname); rc != 0 {
		return rc
	}
	return e.hset(ctx, db, table+"|"+ifname, "NULL", "NULL")
}

func (e *env) dropAddrs(ctx context.Context, db *redis.Client, table, ifname string) int {
	keys, err := db.Keys(ctx, table+"|"+ifname+"|*").Result()
	if err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	sort.Strings(keys)
	for _, k := range keys {
		if rc := e.del(ctx, db, k); rc != 0 {
			return rc
		}
	}
	return 0
}

func (e *env) hset(ctx context.Context, db *redis.Client, key string, fv ...string) int {
	a := make([]any, len(fv))
	for i, s := range fv {
		a[i] = s
	}
	if err := db.HSet(ctx, key, a...).Err(); err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	e.log(Write{DB: "CONFIG_DB", Op: "HSET", Key: key, Fields: fv})
	return 0
}

func (e *env) del(ctx context.Context, db *redis.Client, key string) int {
	if err := db.Del(ctx, key).Err(); err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	e.log(Write{DB: "CONFIG_DB", Op: "DEL", Key: key})
	return 0
}

// show is `show version` and `show interfaces status`.
func (e *env) show(args []string) int {
	ctx := context.Background()
	switch strings.Join(args, " ") {
	case "version":
		v := os.Getenv(EnvVersion)
		if v == "" {
			v = "SONiC.fabricbench-testdouble"
		}
		host, _ := os.Hostname()
		fmt.Fprintf(e.stdout, "\nSONiC Software Version: %s\nSONiC OS Version: 12\nDistribution: Debian 12\nPlatform: x86_64-fabricbench_testdouble-r0\nHwSKU: fabricbench-testdouble\nASIC: testdouble\nASIC Count: 1\nSerial Number: N/A\nHostname: %s\n(a fabricbench test double, not SONiC)\n", v, host)
		return 0
	case "interfaces status":
		cfg, err := e.cfg.Client("CONFIG_DB")
		if err != nil {
			fmt.Fprintf(e.stderr, "Error: %v\n", err)
			return 1
		}
		defer cfg.Close()
		st, err := e.cfg.Client("STATE_DB")
		if err != nil {
			fmt.Fprintf(e.stderr, "Error: %v\n", err)
			return 1
		}
		defer st.Close()
		keys, err := cfg.Keys(ctx, "PORT|*").Result()
		if err != nil {
			fmt.Fprintf(e.stderr, "Error: %v\n", err)
			return 1
		}
		ports := make([]string, 0, len(keys))
		for _, k := range keys {
			ports = append(ports, strings.TrimPrefix(k, "PORT|"))
		}
		sort.Slice(ports, func(i, j int) bool { return portNum(ports[i]) < portNum(ports[j]) })
		rows := [][]string{{"Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"}}
		for _, p := range ports {
			c, _ := cfg.HGetAll(ctx, "PORT|"+p).Result()
			s, _ := st.HGetAll(ctx, "PORT_TABLE|"+p).Result()
			speed := or(c["speed"], "N/A")
			if n, err := strconv.Atoi(speed); err == nil && n%1000 == 0 {
				speed = strconv.Itoa(n/1000) + "G"
			}
			rows = append(rows, []string{p, or(c["lanes"], "N/A"), speed, or(c["mtu"], "9100"), or(c["fec"], "N/A"), or(c["alias"], "N/A"),
				"routed", or(s["oper_status"], "down"), or(c["admin_status"], "down"), "N/A", "off"})
		}
		printTable(e, rows)
		return 0
	}
	fmt.Fprintf(e.stderr, "Usage: show version | show interfaces status\n(the SONiC test double's show has these commands only)\n")
	return 2
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func portNum(p string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(p, "Ethernet"))
	if err != nil {
		return 1 << 30
	}
	return n
}

// printTable prints rows right-aligned with a dash line under the header,
// as SONiC's tabulate tables are.
func printTable(e *env, rows [][]string) {
	w := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 0, ' ', 0)
	line := func(r []string) {
		for i, c := range r {
			if i > 0 {
				fmt.Fprint(tw, "  ")
			}
			fmt.Fprintf(tw, "%*s", w[i], c)
		}
		fmt.Fprintln(tw)
	}
	line(rows[0])
	dash := make([]string, len(w))
	for i := range w {
		dash[i] = strings.Repeat("-", w[i])
	}
	line(dash)
	for _, r := range rows[1:] {
		line(r)
	}
	tw.Flush()
}
