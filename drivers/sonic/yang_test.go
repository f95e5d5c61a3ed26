package sonic_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
)

// yangNames is testdata/yang-names.json: the CONFIG_DB tables and fields
// of SONiC's YANG models the driver may write.
type yangNames struct {
	Tables map[string]yangTable `json:"tables"`
	Enums  map[string][]string  `json:"enums"`
}

type yangTable struct {
	Module      string               `json:"module"`
	FixedKey    string               `json:"fixed_key"`
	KeyParts    int                  `json:"key_parts"`
	KeyPartsAlt int                  `json:"key_parts_alt"`
	KeyPattern  string               `json:"key_pattern"`
	Fields      map[string]yangField `json:"fields"`
}

type yangField struct {
	List    bool            `json:"list"`
	Enum    json.RawMessage `json:"enum"`
	Pattern string          `json:"pattern"`
	Range   []json.Number   `json:"range"`
	IPv6    bool            `json:"ipv6"`
}

func loadYANGNames(t *testing.T) *yangNames {
	t.Helper()
	b, err := os.ReadFile("testdata/yang-names.json")
	if err != nil {
		t.Fatal(err)
	}
	var y yangNames
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("testdata/yang-names.json: %v", err)
	}
	return &y
}

// enum returns a field's allowed values (nil: any).
func (y *yangNames) enum(f yangField) []string {
	if len(f.Enum) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(f.Enum, &list) == nil {
		return list
	}
	var name string
	if json.Unmarshal(f.Enum, &name) == nil {
		return y.Enums[name]
	}
	return nil
}

// check says what is wrong with one CONFIG_DB write by SONiC's YANG
// model names ("" when nothing).
func (y *yangNames) check(w testdouble.Write) string {
	if w.DB != "CONFIG_DB" || strings.HasPrefix(w.Op, "config ") {
		return ""
	}
	table, rest, _ := strings.Cut(w.Key, "|")
	tb, ok := y.Tables[table]
	if !ok {
		return fmt.Sprintf("%s %s: table %s is not one the YANG fixture lists (testdata/yang-names.json)", w.Op, w.Key, table)
	}
	parts := 0
	if rest != "" {
		parts = strings.Count(rest, "|") + 1
	}
	switch {
	case tb.FixedKey != "" && rest != tb.FixedKey:
		return fmt.Sprintf("%s %s: %s (%s) has the single key %s", w.Op, w.Key, table, tb.Module, tb.FixedKey)
	case tb.FixedKey == "" && parts != tb.KeyParts && (tb.KeyPartsAlt == 0 || parts != tb.KeyPartsAlt):
		return fmt.Sprintf("%s %s: %s (%s) keys have %d parts, not %d", w.Op, w.Key, table, tb.Module, tb.KeyParts, parts)
	case tb.KeyPattern != "" && !regexp.MustCompile(tb.KeyPattern).MatchString(rest):
		return fmt.Sprintf("%s %s: key %q does not match %s's %s", w.Op, w.Key, rest, tb.Module, tb.KeyPattern)
	}
	if w.Op == "DEL" {
		return ""
	}
	step := 2
	if w.Op == "HDEL" {
		step = 1
	}
	for i := 0; i < len(w.Fields); i += step {
		name := w.Fields[i]
		if name == "NULL" {
			continue
		}
		list := strings.HasSuffix(name, "@")
		f, ok := tb.Fields[strings.TrimSuffix(name, "@")]
		if !ok {
			return fmt.Sprintf("%s %s: %s has no field %s in %s", w.Op, w.Key, table, name, tb.Module)
		}
		if list != f.List {
			return fmt.Sprintf("%s %s: field %s: a leaf-list is written as %s@, a leaf without @", w.Op, w.Key, name, strings.TrimSuffix(name, "@"))
		}
		if step == 1 {
			continue
		}
		if i+1 >= len(w.Fields) {
			return fmt.Sprintf("%s %s: field %s has no value", w.Op, w.Key, name)
		}
		vals := []string{w.Fields[i+1]}
		if list {
			vals = strings.Split(w.Fields[i+1], ",")
		}
		for _, v := range vals {
			if msg := y.value(f, v); msg != "" {
				return fmt.Sprintf("%s %s: field %s value %q: %s (%s)", w.Op, w.Key, name, v, msg, tb.Module)
			}
		}
	}
	return ""
}

func (y *yangNames) value(f yangField, v string) string {
	if e := y.enum(f); e != nil {
		for _, x := range e {
			if x == v {
				return ""
			}
		}
		return "not one of " + strings.Join(e, ", ")
	}
	if f.Pattern != "" && !regexp.MustCompile(f.Pattern).MatchString(v) {
		return "does not match " + f.Pattern
	}
	if len(f.Range) == 2 {
		n, err := strconv.ParseUint(v, 10, 64)
		lo, _ := strconv.ParseUint(f.Range[0].String(), 10, 64)
		hi, _ := strconv.ParseUint(f.Range[1].String(), 10, 64)
		if err != nil || n < lo || n > hi {
			return fmt.Sprintf("not an integer in %s..%s", f.Range[0], f.Range[1])
		}
	}
	if f.IPv6 {
		if a, err := netip.ParseAddr(v); err != nil || !a.Is6() {
			return "not an IPv6 address"
		}
	}
	return ""
}

// checkWrites fails t for every write that breaks the YANG names.
func checkWrites(t *testing.T, y *yangNames, ws []testdouble.Write) {
	t.Helper()
	n := 0
	for _, w := range ws {
		if w.DB == "CONFIG_DB" {
			n++
		}
		if msg := y.check(w); msg != "" {
			t.Errorf("CONFIG_DB write against SONiC's YANG models: %s", msg)
		}
	}
	t.Logf("%d CONFIG_DB writes checked against the YANG names", n)
}

// The checker fails what SONiC's models do not have: a test that cannot
// fail would prove nothing.
func TestYANGNamesRejects(t *testing.T) {
	y := loadYANGNames(t)
	good := []testdouble.Write{
		{DB: "CONFIG_DB", Op: "HSET", Key: "SWITCH_HASH|GLOBAL", Fields: []string{"ecmp_hash@", "SRC_IP,DST_IP,L4_SRC_PORT"}},
		{DB: "CONFIG_DB", Op: "HSET", Key: "SRV6_MY_SIDS|loc1|fd00:bbbb:1::/48", Fields: []string{"action", "uN"}},
		{DB: "CONFIG_DB", Op: "HSET", Key: "QUEUE|Ethernet0|3-4", Fields: []string{"wred_profile", "AZURE_LOSSLESS"}},
		{DB: "CONFIG_DB", Op: "HDEL", Key: "PORT_QOS_MAP|Ethernet0", Fields: []string{"pfc_enable"}},
		{DB: "CONFIG_DB", Op: "HSET", Key: "VRF|Vrf-red", Fields: []string{"NULL", "NULL"}},
	}
	for _, w := range good {
		if msg := y.check(w); msg != "" {
			t.Errorf("%+v refused: %s", w, msg)
		}
	}
	bad := map[string]testdouble.Write{
		"unknown table":       {DB: "CONFIG_DB", Op: "HSET", Key: "SRV6_LOCATOR|loc1", Fields: []string{"prefix", "fd00::"}},
		"unknown field":       {DB: "CONFIG_DB", Op: "HSET", Key: "SWITCH_TRIMMING|GLOBAL", Fields: []string{"dscp", "10"}},
		"leaf-list without @": {DB: "CONFIG_DB", Op: "HSET", Key: "SWITCH_HASH|GLOBAL", Fields: []string{"ecmp_hash", "SRC_IP"}},
		"bad enum":            {DB: "CONFIG_DB", Op: "HSET", Key: "WRED_PROFILE|AZURE_LOSSLESS", Fields: []string{"ecn", "ecn_on"}},
		"bad list member":     {DB: "CONFIG_DB", Op: "HSET", Key: "SWITCH_HASH|GLOBAL", Fields: []string{"lag_hash@", "SRC_IP,L4_PORT"}},
		"bad key shape":       {DB: "CONFIG_DB", Op: "HSET", Key: "SRV6_MY_SIDS|fd00::/48", Fields: []string{"action", "uN"}},
		"bad VRF name":        {DB: "CONFIG_DB", Op: "HSET", Key: "VRF|red", Fields: []string{"NULL", "NULL"}},
		"out of range":        {DB: "CONFIG_DB", Op: "HSET", Key: "WRED_PROFILE|AZURE_LOSSLESS", Fields: []string{"green_drop_probability", "101"}},
		"bad pfc list":        {DB: "CONFIG_DB", Op: "HSET", Key: "PORT_QOS_MAP|Ethernet0", Fields: []string{"pfc_enable", "3;4"}},
		"not IPv6":            {DB: "CONFIG_DB", Op: "HSET", Key: "SRV6_MY_LOCATORS|loc1", Fields: []string{"prefix", "10.0.0.1"}},
	}
	for what, w := range bad {
		if msg := y.check(w); msg == "" {
			t.Errorf("%s: %+v accepted", what, w)
		}
	}
}
