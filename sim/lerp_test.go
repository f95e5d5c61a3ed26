package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestLERPvsGoBackN: the same lossy run with selective repeat (LERP: the
// receiver keeps out-of-order packets, the sender resends only what was
// lost) and with go-back-N (the receiver accepts only the next PSN; a gap
// makes the sender resend everything from it). A 15-to-1 incast of 1 MiB
// flows overflows the receiver's port (trimmed packets are the losses).
// Both complete; LERP resends fewer bytes.
func TestLERPvsGoBackN(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=2,hosts_per_leaf=8,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Incast(f, 15, 0, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	run := func(gbn bool) (retxBytes float64, fct float64) {
		tp := transport.DefaultParams()
		tp.CC, tp.LB, tp.GoBackN = transport.DCTCP, transport.ECMP, gbn
		s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run()
		for _, fr := range r.Flows {
			if fr.FCT < 0 {
				t.Fatalf("go-back-n %v: flow %d did not finish", gbn, fr.ID)
			}
			retxBytes += float64(fr.Retx) * float64(tp.MTU+tp.HeaderBytes)
			fct = max(fct, float64(fr.FCT)/1e6)
		}
		t.Logf("go-back-n %v: %d trims, %.1f MiB retransmitted, last FCT %.0f us", gbn, r.Packets.Trimmed, retxBytes/(1<<20), fct)
		return retxBytes, fct
	}
	lerp, lfct := run(false)
	gbn, gfct := run(true)
	if lerp <= 0 || gbn <= lerp {
		t.Fatalf("retransmitted bytes: LERP %.0f, go-back-N %.0f; want LERP fewer (and some loss)", lerp, gbn)
	}
	t.Logf("go-back-N resends %.1fx LERP's bytes; last FCT %.0f vs %.0f us", gbn/lerp, gfct, lfct)
}
