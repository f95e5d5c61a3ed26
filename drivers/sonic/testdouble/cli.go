// Package testdouble is a SONiC-shaped test device for the sonic driver.
// It is a TEST DOUBLE, NOT SONiC: no orchagent, syncd, ASIC or SAI
// consumes what is written, nothing is forwarded and no configuration
// takes effect beyond the databases.
//
// What it has of SONiC is what the driver talks to:
//
//   - a real redis-server (Debian's) holding CONFIG_DB, STATE_DB,
//     COUNTERS_DB and APPL_DB in SONiC's numbered databases and key layout
//     (TABLE|key in CONFIG_DB and STATE_DB, TABLE:key in COUNTERS_DB and
//     APPL_DB), described by a database_config.json in SONiC's format;
//   - sonic-db-cli, a command of fabricbench's own written in Go
//     (this package's Main; drivers/sonic/testdouble/sonic-db-cli builds
//     it alone), compatible with SONiC's for the commands the driver sends:
//     it sends any redis command to the named database and prints the
//     reply as SONiC's Python tool does (a dict's Python repr for HGETALL,
//     one line per list element, integers as numbers);
//   - config (vrf add/del, interface vrf bind/unbind) and show (version,
//     interfaces status) commands shaped like SONiC's click CLI for the
//     parts the driver uses, writing and reading the same databases, and a
//     sudo that runs its arguments;
//   - an OpenSSH server (Debian's) on loopback whose sessions are a bash
//     with those commands on PATH and a SONiC-style prompt, with a host key
//     and known_hosts made for the device: the driver logs in exactly as
//     to a switch.
//
// Every write the commands make (HSET, HDEL, DEL and the config CLI's) is
// appended to a log (Device.Writes) so that tests can check each CONFIG_DB
// write against SONiC's YANG model names.
package testdouble

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
)

// Environment variables the commands read.
const (
	// EnvDBConfig is the database_config.json (SONiC's
	// SONIC_DB_CONFIG_FILE); default /var/run/redis/sonic-db/database_config.json.
	EnvDBConfig = "SONIC_DB_CONFIG_FILE"
	// EnvWriteLog is the file every write is appended to (JSON lines);
	// unset: not logged.
	EnvWriteLog = "FABRICBENCH_SONIC_DOUBLE_LOG"
	// EnvVersion is what show version reports as the software version.
	EnvVersion = "FABRICBENCH_SONIC_DOUBLE_VERSION"
)

// Tools are the command names Main answers to (by its argv[0]).
var Tools = []string{"sonic-db-cli", "config", "show", "sudo"}

// IsTool reports whether argv0 names one of Tools: a binary (a test
// binary in TestMain, say) linked under that name should run Main.
func IsTool(argv0 string) bool {
	b := filepath.Base(argv0)
	for _, t := range Tools {
		if b == t {
			return true
		}
	}
	return false
}

// DBConfig is SONiC's database_config.json.
type DBConfig struct {
	Instances map[string]Instance `json:"INSTANCES"`
	Databases map[string]Database `json:"DATABASES"`
	Version   string              `json:"VERSION"`
}

// Instance is one redis server.
type Instance struct {
	Hostname   string `json:"hostname"`
	Port       int    `json:"port"`
	UnixSocket string `json:"unix_socket_path"`
}

// Database is one numbered redis database of an instance.
type Database struct {
	ID        int    `json:"id"`
	Separator string `json:"separator"`
	Instance  string `json:"instance"`
}

// SONiC's databases (its default database_config.json numbering).
var sonicDatabases = map[string]Database{
	"APPL_DB":         {ID: 0, Separator: ":", Instance: "redis"},
	"ASIC_DB":         {ID: 1, Separator: ":", Instance: "redis"},
	"COUNTERS_DB":     {ID: 2, Separator: ":", Instance: "redis"},
	"LOGLEVEL_DB":     {ID: 3, Separator: ":", Instance: "redis"},
	"CONFIG_DB":       {ID: 4, Separator: "|", Instance: "redis"},
	"PFC_WD_DB":       {ID: 5, Separator: ":", Instance: "redis"},
	"FLEX_COUNTER_DB": {ID: 5, Separator: ":", Instance: "redis"},
	"STATE_DB":        {ID: 6, Separator: "|", Instance: "redis"},
}

// NewDBConfig is SONiC's database layout on one redis server at socket.
func NewDBConfig(socket string) DBConfig {
	dbs := map[string]Database{}
	for k, v := range sonicDatabases {
		dbs[k] = v
	}
	return DBConfig{Instances: map[string]Instance{"redis": {Hostname: "127.0.0.1", UnixSocket: socket}}, Databases: dbs, Version: "1.0"}
}

// LoadDBConfig reads a database_config.json.
func LoadDBConfig(path string) (*DBConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c DBConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Client connects to one named database.
func (c *DBConfig) Client(db string) (*redis.Client, error) {
	d, ok := c.Databases[db]
	if !ok {
		names := make([]string, 0, len(c.Databases))
		for n := range c.Databases {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown database %q (have %s)", db, strings.Join(names, ", "))
	}
	in, ok := c.Instances[d.Instance]
	if !ok {
		return nil, fmt.Errorf("database %s: unknown instance %q", db, d.Instance)
	}
	o := &redis.Options{DB: d.ID, DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, MaxRetries: 1, Protocol: 2}
	if in.UnixSocket != "" {
		o.Network, o.Addr = "unix", in.UnixSocket
	} else {
		o.Addr = fmt.Sprintf("%s:%d", in.Hostname, in.Port)
	}
	return redis.NewClient(o), nil
}

// Write is one logged write.
type Write struct {
	DB string `json:"db"`
	// Op is HSET, HDEL, DEL (a redis command sent with sonic-db-cli) or
	// the config CLI's verb ("config vrf add", ...), which logs the redis
	// writes it makes as their own entries after its own.
	Op  string `json:"op"`
	Key string `json:"key"`
	// Fields are the fields written (HSET: name then value, pairwise;
	// HDEL: names).
	Fields []string `json:"fields,omitempty"`
	Tool   string   `json:"tool"`
}

type env struct {
	cfg    *DBConfig
	stdout io.Writer
	stderr io.Writer
	tool   string
}

func (e *env) log(w Write) {
	path := os.Getenv(EnvWriteLog)
	if path == "" {
		return
	}
	w.Tool = e.tool
	b, _ := json.Marshal(w)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

// Main runs the tool named by args[0] (sonic-db-cli, config, show, sudo)
// and returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return 2
	}
	tool := filepath.Base(args[0])
	if tool == "sudo" {
		return sudo(args[1:], stdout, stderr)
	}
	path := os.Getenv(EnvDBConfig)
	if path == "" {
		path = "/var/run/redis/sonic-db/database_config.json"
	}
	cfg, err := LoadDBConfig(path)
	if err != nil {
		fmt.Fprintf(stderr, "Error: database config: %v\n", err)
		return 1
	}
	e := &env{cfg: cfg, stdout: stdout, stderr: stderr, tool: tool}
	switch tool {
	case "sonic-db-cli":
		return e.dbCLI(args[1:])
	case "config":
		return e.config(args[1:])
	case "show":
		return e.show(args[1:])
	}
	fmt.Fprintf(stderr, "%s: not a tool of the SONiC test double (have %s)\n", tool, strings.Join(Tools, ", "))
	return 2
}

// sudo runs its arguments (the test double has one user): a tool of
// this binary in-process, anything else with exec.
func sudo(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: sudo COMMAND [ARGS]")
		return 1
	}
	if IsTool(args[0]) {
		return Main(args, stdout, stderr)
	}
	p, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %s: command not found\n", args[0])
		return 1
	}
	if err := syscall.Exec(p, args, os.Environ()); err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n", err)
	}
	return 1
}

// dbCLI is sonic-db-cli [-s] [-n NAMESPACE] DB COMMAND [ARGS...].
func (e *env) dbCLI(args []string) int {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-s", "--unixsocket":
			args = args[1:]
		case "-n", "--namespace":
			if len(args) < 2 {
				return e.usage()
			}
			if args[1] != "" && args[1] != "''" {
				fmt.Fprintf(e.stderr, "Error: namespace %q: the test double has the default namespace only\n", args[1])
				return 1
			}
			args = args[2:]
		case "-h", "--help":
			return e.usage()
		default:
			fmt.Fprintf(e.stderr, "Error: unknown option %s\n", args[0])
			return 1
		}
	}
	if len(args) < 1 {
		return e.usage()
	}
	db := args[0]
	c, err := e.cfg.Client(db)
	if err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	defer c.Close()
	ctx := context.Background()
	if len(args) == 1 {
		// SONiC's tool pings the database when given no command.
		if err := c.Ping(ctx).Err(); err != nil {
			fmt.Fprintf(e.stderr, "Error: %v\n", err)
			return 1
		}
		fmt.Fprintln(e.stdout, "True")
		return 0
	}
	cmd := strings.ToUpper(args[1])
	rest := args[2:]
	ia := make([]any, 0, len(args)-1)
	ia = append(ia, cmd)
	for _, a := range rest {
		ia = append(ia, a)
	}
	res, err := c.Do(ctx, ia...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	switch cmd {
	case "HSET", "HMSET", "HDEL", "DEL", "HSETNX":
		if len(rest) > 0 {
			w := Write{DB: db, Op: cmd, Key: rest[0], Fields: rest[1:]}
			if cmd == "DEL" {
				w.Fields = nil
				for _, k := range rest[1:] {
					e.log(Write{DB: db, Op: cmd, Key: k})
				}
			}
			e.log(w)
		}
	}
	if cmd == "HGETALL" {
		fmt.Fprintln(e.stdout, PyDict(pairs(res)))
		return 0
	}
	printReply(e.stdout, res)
	return 0
}

func (e *env) usage() int {
	fmt.Fprintln(e.stderr, "Usage: sonic-db-cli [-s] [-n NAMESPACE] DB_NAME [CMD [ARGS ...]]")
	return 1
}

// pairs turns an HGETALL reply (RESP2: a flat list) into a map.
func pairs(res any) map[string]string {
	m := map[string]string{}
	switch v := res.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			m[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
		}
	case map[any]any:
		for k, x := range v {
			m[fmt.Sprint(k)] = fmt.Sprint(x)
		}
	}
	return m
}

// printReply prints a reply as SONiC's tool does: nothing for nil, one
// line per list element, the value otherwise.
func printReply(w io.Writer, res any) {
	switch v := res.(type) {
	case nil:
		fmt.Fprintln(w, "None")
	case []any:
		for _, x := range v {
			fmt.Fprintln(w, fmt.Sprint(x))
		}
	case string:
		fmt.Fprintln(w, v)
	case int64:
		fmt.Fprintln(w, strconv.FormatInt(v, 10))
	default:
		fmt.Fprintln(w, fmt.Sprint(v))
	}
}

// PyDict is the Python repr of a dict of str to str, keys in insertion
// order as redis returns them — here sorted, for stable output.
func PyDict(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = PyStr(k) + ": " + PyStr(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// PyStr is the Python repr of a str: single quotes unless the text has a
// single quote and no double quote; backslashes, control characters and
// other characters Python does not print escaped (\xNN, \uNNNN,
// \UNNNNNNNN).
func PyStr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r != ' ':
			switch {
			case r < 0x100:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
