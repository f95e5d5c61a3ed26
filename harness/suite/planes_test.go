package suite

import (
	"strings"
	"testing"
)

// transport.planes: plb by default, global and entropy accepted, anything
// else refused at the field's position.
func TestTransportPlanes(t *testing.T) {
	if s := mustParse(t, "p.yaml", base); s.Transport.Planes != "plb" {
		t.Errorf("default %q", s.Transport.Planes)
	}
	for _, v := range []string{"global", "entropy", "PLB"} {
		s := mustParse(t, "p.yaml", base+"transport: {planes: "+v+"}\n")
		if want := strings.ToLower(v); string(s.Transport.Planes) != want {
			t.Errorf("%s: %q", v, s.Transport.Planes)
		}
	}
	_, err := Parse("bad.yaml", []byte(base+"transport:\n  planes: spray\n"))
	if err == nil || !strings.Contains(err.Error(), `transport.planes: unknown plane load balancing "spray" (want plb, global or entropy)`) ||
		!strings.Contains(err.Error(), "bad.yaml:") {
		t.Errorf("error %v", err)
	}
}
