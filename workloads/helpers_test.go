package workloads

import (
	"fmt"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

// buildFabric builds a 2-tier leaf-spine fabric with two spines connected
// to every leaf. pods[p][l] is the number of hosts on leaf l of pod p. With
// podded false the hosts and leaves get Pod -1 (a flat fabric) however the
// leaves are grouped. Hosts are numbered in order: pod by pod, leaf by leaf.
func buildFabric(t testing.TB, podded bool, pods ...[]int) *inventory.Fabric {
	t.Helper()
	const rate, lat = 100e9, 1e6
	b := inventory.NewBuilder("test")
	spines := []int{
		b.AddNode("spine0", inventory.RoleSpine, 1, -1, 0),
		b.AddNode("spine1", inventory.RoleSpine, 1, -1, 0),
	}
	h, hostsPerPod := 0, 0
	for p, leaves := range pods {
		pod := p
		if !podded {
			pod = -1
		}
		n := 0
		for l, hosts := range leaves {
			leaf := b.AddNode(fmt.Sprintf("leaf%d-%d", p, l), inventory.RoleLeaf, 0, pod, 0)
			for _, s := range spines {
				b.Connect(leaf, s, rate, lat)
			}
			for range hosts {
				host := b.AddNode(fmt.Sprintf("host%d", h), inventory.RoleHost, -1, pod, 0)
				b.Connect(host, leaf, rate, lat)
				h++
				n++
			}
		}
		hostsPerPod = max(hostsPerPod, n)
	}
	if !podded {
		hostsPerPod = 0
	}
	f, err := b.Fabric(2, hostsPerPod)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// leafSpine builds a regular fabric: pods pods (0 for a flat fabric with
// one group of leaves) of leaves leaves with hosts hosts each.
func leafSpine(t testing.TB, pods, leaves, hosts int) *inventory.Fabric {
	t.Helper()
	podded := pods > 0
	pods = max(pods, 1)
	spec := make([][]int, pods)
	for p := range spec {
		for range leaves {
			spec[p] = append(spec[p], hosts)
		}
	}
	return buildFabric(t, podded, spec...)
}
