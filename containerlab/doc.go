// Package containerlab reads, resolves and generates containerlab topology
// files (*.clab.yml).
//
// Parse and ParseBytes decode a file into a Topology (every containerlab
// property is accepted; the ones fabricbench does not interpret are kept
// in Other maps). Topology.Lab resolves it into the deployer-facing Lab
// (lab.go), merging defaults, kinds, groups and nodes as containerlab does,
// decoding the fabricbench.* labels and rejecting by name every property
// the native deployer does not honour. Generate builds a lab for an
// inventory.Fabric: topology, addresses, ASNs and per-switch FRR or SONiC
// configuration, following the addressing plan in docs/containerlab.md.
// Errors name the file, line, column and field path.
package containerlab
