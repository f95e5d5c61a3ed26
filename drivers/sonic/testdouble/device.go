package testdouble

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fabricbench/fabricbench/drivers"
)

// Options shape a device.
type Options struct {
	// Name is the device's name: the prompt's host part (default
	// sonic-td).
	Name string
	// Binary is the executable that runs Main when invoked as one of
	// Tools (default: this process's own executable, for a test binary
	// whose TestMain calls Main; or a build of
	// drivers/sonic/testdouble/sonic-db-cli).
	Binary string
	// Ports is the number of front-panel ports, Ethernet0, Ethernet4, ...
	// (default 8).
	Ports int
	// TrimmingCapable is STATE_DB's SWITCH_TRIMMING_CAPABLE.
	TrimmingCapable bool
	// Dir holds the device's files (default a new temporary directory,
	// removed by Stop).
	Dir string
	// Logf receives progress lines.
	Logf func(format string, args ...any)
}

// Device is a running SONiC-shaped test device.
type Device struct {
	opts       Options
	dir        string
	ownDir     bool
	redis      *exec.Cmd
	sshd       *exec.Cmd
	socket     string
	addr       string // sshd's HOST:PORT
	knownHosts string
	clientKey  []byte
	user       string
	cfg        DBConfig
	cfgFile    string
	writeLog   string
}

// Requirements are the programs a device needs; Missing says which are
// not installed.
var Requirements = []string{"redis-server", "sshd", "bash"}

// Missing lists the required programs not found (sshd is looked for in
// /usr/sbin too).
func Missing() []string {
	var out []string
	for _, p := range Requirements {
		if _, err := lookPath(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

func lookPath(p string) (string, error) {
	if path, err := exec.LookPath(p); err == nil {
		return path, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		if st, err := os.Stat(filepath.Join(d, p)); err == nil && !st.IsDir() {
			return filepath.Join(d, p), nil
		}
	}
	return "", fmt.Errorf("%s not found", p)
}

// Start starts redis-server and sshd, writes SONiC's database layout and
// seeds the databases (Seed). Stop ends both and removes the files.
func Start(ctx context.Context, o Options) (d *Device, err error) {
	if m := Missing(); len(m) > 0 {
		return nil, fmt.Errorf("the SONiC test double needs %s (apt-get install redis-server openssh-server)", strings.Join(m, ", "))
	}
	if o.Name == "" {
		o.Name = "sonic-td"
	}
	if o.Ports <= 0 {
		o.Ports = 8
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Binary == "" {
		if o.Binary, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	d = &Device{opts: o, dir: o.Dir}
	if d.dir == "" {
		if d.dir, err = os.MkdirTemp("", "fb-sonic-td-"); err != nil {
			return nil, err
		}
		d.ownDir = true
	}
	defer func() {
		if err != nil {
			d.Stop()
			d = nil
		}
	}()
	// Unix socket paths are at most 107 bytes.
	d.socket = filepath.Join(d.dir, "redis.sock")
	if len(d.socket) > 100 {
		return nil, fmt.Errorf("%s: directory path too long for a unix socket", d.dir)
	}
	if err := d.startRedis(ctx); err != nil {
		return nil, err
	}
	d.cfg = NewDBConfig(d.socket)
	d.cfgFile = filepath.Join(d.dir, "database_config.json")
	b, _ := json.MarshalIndent(d.cfg, "", "  ")
	if err := os.WriteFile(d.cfgFile, b, 0o644); err != nil {
		return nil, err
	}
	d.writeLog = filepath.Join(d.dir, "writes.log")
	if err := d.Seed(ctx); err != nil {
		return nil, fmt.Errorf("seed the databases: %w", err)
	}
	if err := d.startSSHD(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Device) startRedis(ctx context.Context) error {
	bin, _ := lookPath("redis-server")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", d.socket, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--databases", "16", "--dir", d.dir, "--daemonize", "no", "--loglevel", "warning")
	out, _ := os.Create(filepath.Join(d.dir, "redis.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	d.redis = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", d.socket); err == nil {
			c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(d.dir, "redis.log"))
	return fmt.Errorf("redis-server did not listen on %s in 10 s: %s", d.socket, strings.TrimSpace(string(log)))
}

// writeKey writes an ed25519 private key in OpenSSH format and returns
// its public key.
func writeKey(path string) (ssh.PublicKey, []byte, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, "fabricbench sonic test double")
	if err != nil {
		return nil, nil, err
	}
	pemb := pem.EncodeToMemory(blk)
	if err := os.WriteFile(path, pemb, 0o600); err != nil {
		return nil, nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	return sp, pemb, err
}

func (d *Device) startSSHD(ctx context.Context) error {
	bin, _ := lookPath("sshd")
	bash, _ := lookPath("bash")
	hostPub, _, err := writeKey(filepath.Join(d.dir, "ssh_host_ed25519_key"))
	if err != nil {
		return err
	}
	clientPub, clientKey, err := writeKey(filepath.Join(d.dir, "client_key"))
	if err != nil {
		return err
	}
	d.clientKey = clientKey
	if err := os.WriteFile(filepath.Join(d.dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub), 0o600); err != nil {
		return err
	}
	binDir := filepath.Join(d.dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	for _, t := range Tools {
		if err := os.Symlink(d.opts.Binary, filepath.Join(binDir, t)); err != nil {
			return err
		}
	}
	rc := fmt.Sprintf(`# The SONiC test double's shell (a fabricbench test double, not SONiC).
export PATH=%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export %s=%s
export %s=%s
unset HISTFILE
PS1='admin@%s:~$ '
`, binDir, EnvDBConfig, d.cfgFile, EnvWriteLog, d.writeLog, d.opts.Name)
	rcFile := filepath.Join(d.dir, "bashrc")
	if err := os.WriteFile(rcFile, []byte(rc), 0o644); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	u := os.Getenv("USER")
	if os.Geteuid() == 0 {
		u = "root"
	}
	if u == "" {
		u = strconv.Itoa(os.Geteuid())
	}
	d.user = u
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		d.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		conf := fmt.Sprintf(`# sshd of the fabricbench SONiC test double
ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PrintMotd no
PrintLastLog no
ForceCommand %s --noprofile --rcfile %s -i
`, d.addr, filepath.Join(d.dir, "ssh_host_ed25519_key"), filepath.Join(d.dir, "sshd.pid"), filepath.Join(d.dir, "authorized_keys"), bash, rcFile)
		cf := filepath.Join(d.dir, "sshd_config")
		if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
			return err
		}
		cmd := exec.Command(bin, "-D", "-e", "-f", cf)
		logf, _ := os.Create(filepath.Join(d.dir, "sshd.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start sshd: %w", err)
		}
		d.sshd = cmd
		if err := waitTCP(ctx, d.addr, cmd, 5*time.Second); err != nil {
			log, _ := os.ReadFile(filepath.Join(d.dir, "sshd.log"))
			lastErr = fmt.Errorf("sshd on %s: %v: %s", d.addr, err, strings.TrimSpace(string(log)))
			d.stopSSHD()
			continue
		}
		d.knownHosts = filepath.Join(d.dir, "known_hosts")
		line := fmt.Sprintf("[127.0.0.1]:%d %s", port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostPub))))
		return os.WriteFile(d.knownHosts, []byte(line+"\n"), 0o644)
	}
	return lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitTCP(ctx context.Context, addr string, cmd *exec.Cmd, timeout time.Duration) error {
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("exited")
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("not listening")
}

func (d *Device) stopSSHD() {
	if d.sshd != nil && d.sshd.Process != nil {
		d.sshd.Process.Kill()
		d.sshd.Wait()
	}
	d.sshd = nil
}

// Stop ends sshd and redis-server and removes the device's files (when
// Start made the directory).
func (d *Device) Stop() {
	d.stopSSHD()
	if d.redis != nil && d.redis.Process != nil {
		d.redis.Process.Kill()
		d.redis.Wait()
		d.redis = nil
	}
	if d.ownDir && d.dir != "" {
		os.RemoveAll(d.dir)
	}
}

// Config is the sonic driver's configuration for the device: SSH to its
// sshd with the device's client key, host key checked against its
// known_hosts.
func (d *Device) Config() drivers.Config {
	host, port, _ := net.SplitHostPort(d.addr)
	p, _ := strconv.Atoi(port)
	return drivers.Config{Device: d.opts.Name, Address: host, Port: p, KnownHosts: d.knownHosts, Timeout: 20 * time.Second,
		Auth: drivers.Auth{User: d.user, PrivateKey: d.clientKey}}
}

// Addr is sshd's HOST:PORT; KnownHosts its known_hosts file; ClientKey
// the private key it accepts (PEM); User the login.
func (d *Device) Addr() string       { return d.addr }
func (d *Device) KnownHosts() string { return d.knownHosts }
func (d *Device) ClientKey() []byte  { return d.clientKey }
func (d *Device) User() string       { return d.user }

// DBConfigFile is the device's database_config.json.
func (d *Device) DBConfigFile() string { return d.cfgFile }

// Dump reads every key of a database: key -> hash (other types are
// stored under the key with the single field "").
func (d *Device) Dump(ctx context.Context, db string) (map[string]map[string]string, error) {
	c, err := d.cfg.Client(db)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, k := range keys {
		t, err := c.Type(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		if t != "hash" {
			v, _ := c.Dump(ctx, k).Result()
			out[k] = map[string]string{"": t + ":" + v}
			continue
		}
		m, err := c.HGetAll(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		out[k] = m
	}
	return out, nil
}

// HGetAll reads one hash.
func (d *Device) HGetAll(ctx context.Context, db, key string) (map[string]string, error) {
	c, err := d.cfg.Client(db)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.HGetAll(ctx, key).Result()
}

// HSet writes fields of a hash (name, value pairs), as a test changing the
// device behind the driver's back.
func (d *Device) HSet(ctx context.Context, db, key string, fv ...string) error {
	c, err := d.cfg.Client(db)
	if err != nil {
		return err
	}
	defer c.Close()
	a := make([]any, len(fv))
	for i, s := range fv {
		a[i] = s
	}
	return c.HSet(ctx, key, a...).Err()
}

// Writes are the writes logged since the device started (or since
// ResetWrites).
func (d *Device) Writes() ([]Write, error) {
	f, err := os.Open(d.writeLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Write
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var w Write
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			return nil, fmt.Errorf("%s: %w", d.writeLog, err)
		}
		out = append(out, w)
	}
	return out, sc.Err()
}

// ResetWrites empties the write log.
func (d *Device) ResetWrites() error {
	err := os.Remove(d.writeLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Seed fills the databases as a SONiC leaf's look after boot (the
// T1-style defaults of SONiC's QoS and buffer templates, in miniature):
//
//   - CONFIG_DB: DEVICE_METADATA|localhost; PORT|EthernetN (N = 0, 4, ...)
//     with lanes, speed, mtu, alias, admin_status; INTERFACE entries with
//     an IPv4 /31 on each port; LOOPBACK_INTERFACE Loopback0;
//     WRED_PROFILE|AZURE_LOSSLESS (ECN off); QUEUE|PORT|0, 1, 2 and 3-4
//     with schedulers; PORT_QOS_MAP|PORT with the AZURE maps and
//     pfc_enable 3,4; DSCP_TO_TC_MAP|AZURE, TC_TO_QUEUE_MAP|AZURE and
//     TC_TO_PRIORITY_GROUP_MAP|AZURE; BUFFER_POOL and BUFFER_PROFILE
//     (ingress/egress lossless and lossy); BUFFER_PG|PORT|0 (lossy) and
//     3-4 (lossless); BUFFER_QUEUE|PORT|0-2, 3-4 (lossless) and 5-6;
//     PFC_WD|PORT (drop, 200 ms) and PFC_WD|GLOBAL POLL_INTERVAL 200;
//     SCHEDULER; SWITCH_HASH|GLOBAL with the ECMP and LAG hash of
//     the destination IP alone;
//   - STATE_DB: SWITCH_CAPABILITY|switch (SWITCH_TRIMMING_CAPABLE as the
//     options say), PORT_TABLE|PORT oper_status up;
//   - COUNTERS_DB: COUNTERS_PORT_NAME_MAP and COUNTERS:oid:... per port.
func (d *Device) Seed(ctx context.Context) error {
	type kv = map[string]string
	cfg := map[string]kv{
		"DEVICE_METADATA|localhost":                {"hostname": d.opts.Name, "hwsku": "fabricbench-testdouble", "platform": "x86_64-fabricbench_testdouble-r0", "type": "LeafRouter", "bgp_asn": "65100", "mac": "52:54:00:12:34:56"},
		"LOOPBACK_INTERFACE|Loopback0":             {"NULL": "NULL"},
		"LOOPBACK_INTERFACE|Loopback0|10.1.0.1/32": {"NULL": "NULL"},
		"WRED_PROFILE|AZURE_LOSSLESS": {"ecn": "ecn_none", "wred_green_enable": "false", "green_min_threshold": "250000", "green_max_threshold": "2097152",
			"green_drop_probability": "5", "wred_yellow_enable": "true", "yellow_min_threshold": "1048576", "yellow_max_threshold": "2097152",
			"yellow_drop_probability": "5", "wred_red_enable": "true", "red_min_threshold": "1048576", "red_max_threshold": "2097152", "red_drop_probability": "5"},
		"SCHEDULER|scheduler.0":                   {"type": "DWRR", "weight": "14"},
		"SCHEDULER|scheduler.1":                   {"type": "DWRR", "weight": "15"},
		"BUFFER_POOL|ingress_lossless_pool":       {"size": "12766208", "type": "ingress", "mode": "dynamic"},
		"BUFFER_POOL|egress_lossless_pool":        {"size": "12766208", "type": "egress", "mode": "static"},
		"BUFFER_POOL|egress_lossy_pool":           {"size": "7326924", "type": "egress", "mode": "dynamic"},
		"BUFFER_PROFILE|ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
		"BUFFER_PROFILE|ingress_lossy_profile":    {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
		"BUFFER_PROFILE|egress_lossless_profile":  {"pool": "egress_lossless_pool", "size": "0", "static_th": "12766208"},
		"BUFFER_PROFILE|egress_lossy_profile":     {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "3"},
		"SWITCH_HASH|GLOBAL":                      {"ecmp_hash@": "DST_IP", "lag_hash@": "DST_IP"},
		"TC_TO_QUEUE_MAP|AZURE":                   {"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7"},
		"TC_TO_PRIORITY_GROUP_MAP|AZURE":          {"0": "0", "1": "0", "2": "0", "3": "3", "4": "4", "5": "0", "6": "0", "7": "7"},
		"PFC_WD|GLOBAL":                           {"POLL_INTERVAL": "200"},
	}
	// SONiC's AZURE DSCP map: most DSCPs to traffic class 1, the RoCE
	// DSCPs 3 and 4 to 3 and 4, 8 to 0, 46 to 5, 48 to 6.
	dscp := kv{}
	for i := 0; i < 64; i++ {
		dscp[strconv.Itoa(i)] = "1"
	}
	dscp["3"], dscp["4"], dscp["8"], dscp["46"], dscp["48"] = "3", "4", "0", "5", "6"
	cfg["DSCP_TO_TC_MAP|AZURE"] = dscp
	state := map[string]kv{
		"SWITCH_CAPABILITY|switch": {"ECMP_HASH_CAPABLE": "true", "LAG_HASH_CAPABLE": "true", "MAX_NEXTHOP_GROUP_COUNT": "512",
			"SWITCH_TRIMMING_CAPABLE": strconv.FormatBool(d.opts.TrimmingCapable)},
	}
	counters := map[string]kv{"COUNTERS_PORT_NAME_MAP": {}}
	for i := 0; i < d.opts.Ports; i++ {
		p := "Ethernet" + strconv.Itoa(4*i)
		cfg["PORT|"+p] = kv{"lanes": fmt.Sprintf("%d,%d,%d,%d", 4*i, 4*i+1, 4*i+2, 4*i+3), "speed": "400000", "mtu": "9100",
			"alias": "etp" + strconv.Itoa(i+1), "admin_status": "up", "fec": "rs", "index": strconv.Itoa(i + 1)}
		cfg["INTERFACE|"+p] = kv{"NULL": "NULL"}
		cfg[fmt.Sprintf("INTERFACE|%s|10.0.%d.%d/31", p, i/128, 2*(i%128))] = kv{"NULL": "NULL"}
		cfg["QUEUE|"+p+"|3-4"] = kv{"scheduler": "scheduler.1"}
		for q := 0; q < 3; q++ {
			cfg[fmt.Sprintf("QUEUE|%s|%d", p, q)] = kv{"scheduler": "scheduler.0"}
		}
		cfg["BUFFER_PG|"+p+"|0"] = kv{"profile": "ingress_lossy_profile"}
		cfg["BUFFER_PG|"+p+"|3-4"] = kv{"profile": "ingress_lossless_profile"}
		cfg["BUFFER_QUEUE|"+p+"|0-2"] = kv{"profile": "egress_lossy_profile"}
		cfg["BUFFER_QUEUE|"+p+"|3-4"] = kv{"profile": "egress_lossless_profile"}
		cfg["BUFFER_QUEUE|"+p+"|5-6"] = kv{"profile": "egress_lossy_profile"}
		cfg["PFC_WD|"+p] = kv{"action": "drop", "detection_time": "200", "restoration_time": "200"}
		cfg["PORT_QOS_MAP|"+p] = kv{"dscp_to_tc_map": "AZURE", "tc_to_queue_map": "AZURE", "tc_to_pg_map": "AZURE", "pfc_to_queue_map": "AZURE", "pfc_enable": "3,4"}
		state["PORT_TABLE|"+p] = kv{"oper_status": "up", "admin_status": "up", "speed": "400000", "mtu": "9100"}
		oid := fmt.Sprintf("oid:0x1000000000%03x", i+2)
		counters["COUNTERS_PORT_NAME_MAP"][p] = oid
		counters["COUNTERS:"+oid] = kv{"SAI_PORT_STAT_IF_IN_OCTETS": "0", "SAI_PORT_STAT_IF_OUT_OCTETS": "0",
			"SAI_PORT_STAT_IF_IN_UCAST_PKTS": "0", "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": "0", "SAI_PORT_STAT_IF_IN_DISCARDS": "0", "SAI_PORT_STAT_IF_OUT_DISCARDS": "0"}
	}
	for db, m := range map[string]map[string]kv{"CONFIG_DB": cfg, "STATE_DB": state, "COUNTERS_DB": counters} {
		c, err := d.cfg.Client(db)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			a := make([]any, 0, 2*len(m[k]))
			for f, v := range m[k] {
				a = append(a, f, v)
			}
			if err := c.HSet(ctx, k, a...).Err(); err != nil {
				c.Close()
				return fmt.Errorf("%s %s: %w", db, k, err)
			}
		}
		c.Close()
	}
	return nil
}
