package inventory

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/internal/fileerr"
)

// Hardware inventories: the YAML files lab engineers write to describe
// real devices, how to reach them and how they are cabled (the format is
// documented in docs/inventory.md). This file holds their types and
// accessors; hardware_decode.go reads and checks the file
// (LoadHardware, ParseHardware) and hardware_fabric.go builds the fabric
// model from it (Hardware.Fabric).

// DefaultPlatforms are the platforms a device may name when LoadHardware or
// ParseHardware is given no list (the drivers package registers these).
var DefaultPlatforms = []string{"frr", "linux", "sonic"}

// Inventory files are read within yamlx's limits (size, depth, alias
// expansion), shared with suites and topologies.
const (
	// MaxSpeedBps is the largest link speed accepted (100T).
	MaxSpeedBps = 100_000_000_000_000
)

// DeviceRole is the function of a device, as written in the inventory.
type DeviceRole string

const (
	DeviceLeaf       DeviceRole = "leaf"
	DeviceSpine      DeviceRole = "spine"
	DeviceSuperSpine DeviceRole = "super-spine"
	DeviceHost       DeviceRole = "host"
)

var deviceRoles = []string{string(DeviceLeaf), string(DeviceSpine), string(DeviceSuperSpine), string(DeviceHost)}

// Role returns the fabric role: leaf -> RoleLeaf, spine -> RoleSpine,
// super-spine -> RoleCore, host -> RoleHost.
func (r DeviceRole) Role() Role {
	switch r {
	case DeviceLeaf:
		return RoleLeaf
	case DeviceSpine:
		return RoleSpine
	case DeviceSuperSpine:
		return RoleCore
	}
	return RoleHost
}

// Tier returns the switching tier (0 leaf, 1 spine, 2 super-spine), -1 for
// hosts.
func (r DeviceRole) Tier() int {
	switch r {
	case DeviceLeaf:
		return 0
	case DeviceSpine:
		return 1
	case DeviceSuperSpine:
		return 2
	}
	return -1
}

// IsSwitch reports whether the role is a switch role.
func (r DeviceRole) IsSwitch() bool {
	return r == DeviceLeaf || r == DeviceSpine || r == DeviceSuperSpine
}

// Hardware is a parsed and validated inventory file.
type Hardware struct {
	Name string
	// File is the name the inventory was loaded from (used in errors);
	// Dir is the absolute directory relative paths are resolved against.
	File string
	Dir  string
	// KnownHosts is the absolute path of the known_hosts file (relative
	// paths and ~/ resolved). Load does not require it to exist.
	KnownHosts string
	// DefaultSpeed (as written, "" if not set) and its rate apply to
	// links whose speed is given neither on the link nor on its ports.
	DefaultSpeed   string
	DefaultRateBps int64
	// Timeout is the per-operation timeout for every device (0: not set).
	Timeout time.Duration
	// Credentials maps a credential set's name to it.
	Credentials map[string]*Credential
	// Devices are in file order.
	Devices []Device
	// Links are in file order.
	Links []Cable
	// Planes and Rails are in file order (rails sorted by index).
	Planes []Plane
	Rails  []Rail

	index map[string]int // device name -> index in Devices
}

// Credential is a named credential set. Password, Key and Passphrase are
// secret references (env:NAME or file:PATH, see internal/secret), never the
// secrets themselves; file: paths may start with ~/ or be relative to the
// inventory file (resolve them with Hardware.Path).
type Credential struct {
	Name       string
	User       string
	Password   string
	Key        string // private key (the file or variable holds the PEM text)
	Passphrase string // of Key
	SSHAgent   bool   // use the keys of the ssh-agent at $SSH_AUTH_SOCK
}

// Device is a switch or host.
type Device struct {
	Name     string
	Platform string
	Role     DeviceRole
	// Mgmt is the management address as written; MgmtHost is its host
	// part (an IP address without brackets, or a DNS name) and MgmtPort
	// its port, 0 when the address has none.
	Mgmt        string
	MgmtHost    string
	MgmtPort    int
	Credentials string       // name of a credential set
	ASN         uint32       // 0: not set
	Loopback    netip.Prefix // invalid (zero) when not set
	// SRv6Locator is a switch's SRv6 micro-SID locator: its uN prefix in
	// the F3216 format (a /48 whose first 32 bits are the uSID block,
	// e.g. fd00:bbbb:1::/48); invalid when not set.
	SRv6Locator netip.Prefix
	Pod         int           // -1 when not set
	Timeout     time.Duration // 0: not set (the inventory's timeout applies)
	// Ports are a switch's declared ports. When DeclaresPorts is set,
	// links may only use these ports.
	Ports         []DevicePort
	DeclaresPorts bool
	// NICs are a host's declared NICs. When DeclaresNICs is set, links may
	// only use these NICs and every NIC must be on a link.
	NICs         []NIC
	DeclaresNICs bool
	// SlurmNode is the host's Slurm node name for agents started with
	// srun ("": its name).
	SlurmNode string
	// GNMI is the device's own gNMI server (nil: none; a run deploys the
	// kernel exporter to Linux and FRR devices instead).
	GNMI *GNMI
	// Container, when set, is the device's container on this machine:
	// its shell is reached with docker exec instead of SSH (a containerlab
	// node whose image has no sshd); Mgmt stays its management address.
	Container string
}

// GNMI telemetry profiles (GNMI.Profile): which paths a run subscribes
// to and how it reads the replies.
const (
	// ProfileOpenConfig: /interfaces/interface/state/counters and
	// /qos/interfaces/interface/output/queues/queue/state.
	ProfileOpenConfig = "openconfig"
	// ProfileSONiC: SONiC's native COUNTERS_DB (target COUNTERS_DB,
	// paths COUNTERS/<port> and COUNTERS/<port>:<queue>, the server
	// mapping port names to SAI object IDs through COUNTERS_PORT_NAME_MAP),
	// where its OpenConfig support is incomplete. SONiC's gNMI server
	// samples every 1 s at the fastest.
	ProfileSONiC = "sonic"
)

// GNMIProfiles lists the profiles.
var GNMIProfiles = []string{ProfileOpenConfig, ProfileSONiC}

// GNMI is how to reach a device's gNMI server. Exactly one of TLS
// (CA set, or SkipVerify) and Insecure (plain-text gRPC, which the
// inventory must say explicitly) is set.
type GNMI struct {
	Address string // host:port
	Profile string // ProfileOpenConfig (default) or ProfileSONiC
	// Credentials names the credential set whose user and password the
	// server checks ("": the device's set; a set without a password
	// sends none).
	Credentials string
	// CA is the absolute path of the PEM file of the CA the server's
	// certificate is checked against; ServerName the name checked
	// ("": the address's host).
	CA, ServerName string
	// SkipVerify uses TLS without checking the server's certificate.
	SkipVerify bool
	// Insecure is plain-text gRPC (no TLS).
	Insecure bool
}

// DevicePort is a declared switch port.
type DevicePort struct {
	Name string
	// Interface is the device's own interface name when it differs from
	// Name (e.g. a lab router's eth5 behind the fabric's Ethernet4);
	// "" means Name. Drivers, faults and the kernel exporter use it.
	Interface string
	Speed     string // as written, "" if not set
	RateBps   int64  // 0 if not set
}

// NIC is a declared host NIC.
type NIC struct {
	Name    string
	Rail    int          // the NIC's index across the cluster; -1 when not set
	Address netip.Prefix // invalid (zero) when not set
	Speed   string
	RateBps int64
}

// Endpoint is one end of a link: a device and one of its ports or NICs.
type Endpoint struct {
	Device, Port string
}

func (e Endpoint) String() string { return e.Device + ":" + e.Port }

// Cable is a link between two devices (named Cable to keep it apart from
// the fabric model's Link).
type Cable struct {
	A, B Endpoint
	// Speed is the speed written on the link ("" if none); RateBps is the
	// resolved rate: the link's speed, else its ports' declared speed,
	// else the inventory's default_speed.
	Speed   string
	RateBps int64
}

// Plane is a named group of switches that should carry equal load.
type Plane struct {
	Name     string
	Switches []string
}

// Rail lists the leaves serving one rail (host NIC index).
type Rail struct {
	Index  int
	Leaves []string
}

// Device returns the device with the given name, or nil.
func (h *Hardware) Device(name string) *Device {
	if h.index != nil {
		if i, ok := h.index[name]; ok && i < len(h.Devices) && h.Devices[i].Name == name {
			return &h.Devices[i]
		}
	}
	for i := range h.Devices {
		if h.Devices[i].Name == name {
			return &h.Devices[i]
		}
	}
	return nil
}

// Path resolves a path written in the inventory: "~/" is the user's home
// directory and a relative path is relative to the inventory's directory.
func (h *Hardware) Path(p string) (string, error) {
	return resolveHWPath(h.Dir, p)
}

func resolveHWPath(dir, p string) (string, error) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %v", err)
		}
		p = filepath.Join(home, p[1:])
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%s: ~user paths are not supported (use ~/ or an absolute path)", p)
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// HardwareError is one problem in an inventory file:
// FILE:LINE:COLUMN: PATH: MESSAGE, e.g. `lab.yaml:14:15:
// devices[2].platform: unknown platform "eos" (want frr, linux or sonic)`.
type HardwareError = fileerr.Error

// HardwareErrors is every problem found in an inventory file, sorted by
// position (at most 20, then an entry saying how many more there are), one
// per line; use errors.As to get at the entries.
type HardwareErrors = fileerr.List

// Interface returns the device's own name of its port or NIC name (the
// port's interface when it declares one).
func (d *Device) Interface(port string) string {
	for _, p := range d.Ports {
		if p.Name == port && p.Interface != "" {
			return p.Interface
		}
	}
	return port
}
