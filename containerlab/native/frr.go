package native

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
)

// frrDaemons are the FRR daemons the native deployer can start, in start
// order (zebra first, as frrinit does).
var frrDaemons = []string{"zebra", "mgmtd", "staticd", "bgpd", "ospfd", "ospf6d", "isisd", "bfdd", "pbrd", "fabricd"}

// daemonsFile is the part of FRR's daemons file the deployer honours.
type daemonsFile struct {
	enabled  map[string]bool
	options  map[string]string
	profile  string
	netnsVRF bool // zebra -n: VRFs backed by network namespaces
}

func defaultDaemons() *daemonsFile {
	return &daemonsFile{
		enabled: map[string]bool{"zebra": true, "staticd": true, "bgpd": true},
		options: map[string]string{},
		profile: "datacenter",
	}
}

// parseDaemons reads an FRR daemons file (shell variable assignments).
func parseDaemons(path string) (*daemonsFile, error) {
	d := defaultDaemons()
	d.enabled = map[string]bool{"zebra": true, "staticd": true}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	known := map[string]bool{}
	for _, n := range frrDaemons {
		known[n] = true
	}
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		v = unquote(strings.TrimSpace(v))
		switch {
		case known[k]:
			d.enabled[k] = v == "yes"
		case strings.HasSuffix(k, "_options") && known[strings.TrimSuffix(k, "_options")]:
			d.options[strings.TrimSuffix(k, "_options")] = v
		case k == "frr_profile":
			d.profile = v
		case isDaemonName(k) && v == "yes":
			return nil, fmt.Errorf("%s:%d: daemon %s is not supported by the native deployer (supported: %s)", path, line, k, strings.Join(frrDaemons, ", "))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if o := d.options["zebra"]; strings.Contains(" "+o+" ", " -n ") || strings.Contains(o, "--vrfwnetns") {
		d.netnsVRF = true
	}
	return d, nil
}

func isDaemonName(k string) bool {
	return strings.HasSuffix(k, "d") && !strings.Contains(k, "_") && k != "vtysh_enable"
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// startFRR prepares a node's FRR directories and starts its daemons, then
// loads frr.conf with vtysh -b.
func (d *Deployer) startFRR(ctx context.Context, lab *containerlab.Lab, n *containerlab.Node, ns NodeState) error {
	etc, run := filepath.Join(ns.Dir, "etc"), filepath.Join(ns.Dir, "run")
	for _, dir := range []string{etc, run} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if n.FRRDir != "" {
		// A directory bound onto /etc/frr: its files are the node's.
		ents, err := os.ReadDir(n.FRRDir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				if err := copyFile(filepath.Join(n.FRRDir, e.Name()), filepath.Join(etc, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	daemons := defaultDaemons()
	if n.FRRDaemons != "" {
		var err error
		if daemons, err = parseDaemons(n.FRRDaemons); err != nil {
			return err
		}
		if err := copyFile(n.FRRDaemons, filepath.Join(etc, "daemons")); err != nil {
			return err
		}
	}
	// zebra -n (VRFs backed by network namespaces) is safe here: a node's
	// /run/netns is private to it, so zebra sees only the node's own VRF
	// namespaces, not the other nodes of the lab.
	conf := filepath.Join(etc, "frr.conf")
	if n.FRRConfig != "" {
		if err := copyFile(n.FRRConfig, conf); err != nil {
			return err
		}
	} else if err := os.WriteFile(conf, []byte("frr defaults datacenter\nhostname "+n.Name+"\n"), 0o640); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(etc, "vtysh.conf"), []byte("service integrated-vtysh-config\n"), 0o640); err != nil {
		return err
	}
	if err := chownFRR(etc, run); err != nil {
		return err
	}
	var script strings.Builder
	for _, name := range frrDaemons {
		if !daemons.enabled[name] {
			continue
		}
		bin := filepath.Join(d.frrDir, name)
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("daemon %s enabled but %s is missing", name, bin)
		}
		opts := daemons.options[name]
		if opts == "" {
			opts = "-A 127.0.0.1"
			if name == "zebra" {
				// -n: VRFs are network namespaces (this kernel has no VRF
				// device); see startFRR.
				opts += " -s 90000000 -n"
			}
		}
		fmt.Fprintf(&script, "%s -d -F %s %s -i /run/frr/%s.pid --log file:/run/frr/frr.log && ",
			bin, shellQuote(daemons.profile), opts, name)
	}
	script.WriteString("true")
	if out, err := d.nodeExec(ctx, ns, script.String()); err != nil {
		return fmt.Errorf("start daemons: %v: %s", err, strings.TrimSpace(out))
	}
	// Load the integrated configuration. The daemons have just forked; give
	// their vty sockets a moment (bounded retries, not a fixed sleep).
	var out string
	var err error
	// Up to initTimeout: a loaded 2-core machine starting every node's
	// daemons at once is slow to open their sockets.
	for deadline := time.Now().Add(initTimeout); time.Now().Before(deadline); {
		out, err = d.nodeExec(ctx, ns, "vtysh -b")
		if err == nil && !strings.Contains(out, "is not running") {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil || strings.Contains(out, "is not running") {
		return fmt.Errorf("vtysh -b (load %s): %v: %s", n.FRRConfig, err, strings.TrimSpace(out))
	}
	if bad := configErrors(out); bad != "" {
		return fmt.Errorf("%s was not accepted by FRR: %s", n.FRRConfig, bad)
	}
	return nil
}

// configErrors picks the error lines vtysh -b prints for a config it could
// not apply (vtysh exits 0 for some of them).
func configErrors(out string) string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "% Unknown command") || strings.Contains(l, "line ") && strings.Contains(l, "Error") ||
			strings.HasPrefix(l, "% ") {
			bad = append(bad, l)
		}
	}
	return strings.Join(bad, "; ")
}

func chownFRR(dirs ...string) error {
	u, err := user.Lookup("frr")
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, dir := range dirs {
		err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o640)
}
