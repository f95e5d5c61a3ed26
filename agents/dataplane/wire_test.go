package dataplane

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

func sampleData() DataHeader {
	return DataHeader{RunID: 0xdeadbeef, Flow: 42, PSN: 7, NPkts: 9, Payload: 1000, Entropy: 0xabcd,
		ReplyPort: 40000, Mark: 3, SentAt: -5 + 1<<40, Retx: true, AckRoute: 0xbeef, AckRouteValid: true, Sender: 0xfeedf00d}
}

func sampleAck() AckHeader {
	return AckHeader{RunID: 0xdeadbeef, Flow: 42, PSN: 7, CumAck: 5, Entropy: 0xabcd, Route: 0x1234, Mark: 3, EchoTS: 1 << 50, HoldNs: 123456789, ECN: true}
}

func TestDataRoundTrip(t *testing.T) {
	for _, h := range []DataHeader{sampleData(), {NPkts: 1}, {NPkts: 1, AckRouteValid: true}, {Flow: ^uint32(0), PSN: ^uint32(0) - 1, NPkts: ^uint32(0), Payload: 1 << 16, SentAt: -1}} {
		buf := make([]byte, DataHeaderLen+int(h.Payload))
		for i := range buf {
			buf[i] = 0x5a // padding is left alone
		}
		n, err := EncodeData(buf, &h)
		if err != nil || n != len(buf) {
			t.Fatalf("EncodeData(%+v) = %d, %v", h, n, err)
		}
		if buf[n-1] != 0x5a && h.Payload > 0 {
			t.Error("EncodeData wrote the padding")
		}
		var p Packet
		if err := Decode(buf, &p); err != nil || p.Type != TypeData || p.Data != h {
			t.Errorf("Decode = %+v, %v; want %+v", p.Data, err, h)
		}
		var d DataHeader
		if err := DecodeData(buf, &d); err != nil || d != h {
			t.Errorf("DecodeData = %+v, %v", d, err)
		}
		if err := DecodeAck(buf, new(AckHeader)); !errors.Is(err, ErrType) {
			t.Errorf("DecodeAck of data: %v", err)
		}
		if run, err := PeekRunID(buf); err != nil || run != h.RunID {
			t.Errorf("PeekRunID = %d, %v", run, err)
		}
		if td := h.Transport(); td.Flow != h.Flow || td.PSN != h.PSN || td.Payload != h.Payload ||
			td.Entropy != h.Entropy || td.SentAt != h.SentAt || td.Retx != h.Retx ||
			td.AckRoute != h.AckRoute || td.AckRouteValid != h.AckRouteValid {
			t.Errorf("Transport() = %+v", td)
		}
	}
}

func TestAckRoundTrip(t *testing.T) {
	for _, h := range []AckHeader{sampleAck(), {}, {Nack: true, PSN: 3, EchoTS: -7}, {Nack: true, ECN: true}} {
		buf := make([]byte, AckHeaderLen)
		n, err := EncodeAck(buf, &h)
		if err != nil || n != AckHeaderLen {
			t.Fatalf("EncodeAck = %d, %v", n, err)
		}
		var p Packet
		want := TypeAck
		if h.Nack {
			want = TypeNack
		}
		if err := Decode(buf, &p); err != nil || p.Type != want || p.Ack != h {
			t.Errorf("Decode = %v %+v, %v; want %+v", p.Type, p.Ack, err, h)
		}
		ta := h.Transport()
		if ta.Flow != h.Flow || ta.PSN != h.PSN || ta.CumAck != h.CumAck || ta.ECN != h.ECN || ta.Nack != h.Nack || ta.EchoTS != h.EchoTS ||
			ta.Entropy != h.Entropy || ta.Route != h.Route {
			t.Errorf("Transport() = %+v", ta)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	h := sampleData()
	if _, err := EncodeData(make([]byte, DataHeaderLen+int(h.Payload)-1), &h); !errors.Is(err, ErrBuffer) {
		t.Errorf("short buffer: %v", err)
	}
	for _, bad := range []DataHeader{{NPkts: 0}, {NPkts: 2, PSN: 2}, {NPkts: 1, Payload: -1}} {
		if _, err := EncodeData(make([]byte, 100), &bad); !errors.Is(err, ErrGarbled) {
			t.Errorf("EncodeData(%+v): %v", bad, err)
		}
		if err := PutDataHeader(make([]byte, 100), &bad); !errors.Is(err, ErrGarbled) {
			t.Errorf("PutDataHeader(%+v): %v", bad, err)
		}
	}
	if err := PutDataHeader(make([]byte, DataHeaderLen-1), &h); !errors.Is(err, ErrBuffer) {
		t.Errorf("PutDataHeader short buffer: %v", err)
	}
	a := sampleAck()
	if _, err := EncodeAck(make([]byte, AckHeaderLen-1), &a); !errors.Is(err, ErrBuffer) {
		t.Errorf("short ack buffer: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	h := sampleData()
	data := make([]byte, DataHeaderLen+int(h.Payload))
	EncodeData(data, &h)
	ack := make([]byte, AckHeaderLen)
	a := sampleAck()
	EncodeAck(ack, &a)
	mod := func(b []byte, f func([]byte)) []byte {
		c := bytes.Clone(b)
		f(c)
		return c
	}
	for name, tc := range map[string]struct {
		b    []byte
		want error
	}{
		"empty":           {nil, ErrShort},
		"prefix only":     {data[:PrefixLen-1], ErrShort},
		"data header cut": {data[:DataHeaderLen-1], ErrShort},
		"ack cut":         {ack[:AckHeaderLen-1], ErrShort},
		"magic":           {mod(data, func(b []byte) { b[0] ^= 1 }), ErrMagic},
		"version":         {mod(ack, func(b []byte) { b[2] = 4 }), ErrVersion},
		// Versions 1 (no ACK routes) and 2 (no sender ID, no hold time)
		// against version 3: refused by version, whatever the length,
		// never read as the other layout.
		"v1 ack":           {mod(ack[:36], func(b []byte) { b[2] = 1 }), ErrVersion},
		"v1 data":          {mod(data, func(b []byte) { b[2] = 1 }), ErrVersion},
		"v2 ack":           {mod(ack[:40], func(b []byte) { b[2] = 2 }), ErrVersion},
		"v2 data":          {mod(data[:len(data)-4], func(b []byte) { b[2] = 2 }), ErrVersion},
		"v1-length ack":    {ack[:36], ErrShort},
		"v2-length ack":    {ack[:40], ErrShort},
		"ack reserved":     {mod(ack, func(b []byte) { b[39] = 1 }), ErrGarbled},
		"route sans flag":  {mod(data, func(b []byte) { b[4] &^= FlagAckRoute }), ErrGarbled},
		"ack route flag":   {mod(ack, func(b []byte) { b[4] |= 0x02 }), ErrGarbled},
		"type 0":           {mod(data, func(b []byte) { b[3] = 0 }), ErrType},
		"type 9":           {mod(ack, func(b []byte) { b[3] = 9 }), ErrType},
		"unknown flag":     {mod(data, func(b []byte) { b[4] |= 0x80 }), ErrGarbled},
		"reserved byte":    {mod(ack, func(b []byte) { b[5] = 1 }), ErrGarbled},
		"negative payload": {mod(data, func(b []byte) { b[24] = 0x80 }), ErrGarbled},
		"zero npkts":       {mod(data, func(b []byte) { copy(b[20:24], []byte{0, 0, 0, 0}) }), ErrGarbled},
		"psn past end":     {mod(data, func(b []byte) { copy(b[16:20], []byte{0, 0, 0, 9}) }), ErrGarbled},
		"trailing data":    {append(bytes.Clone(data), 0), ErrGarbled},
		"trailing ack":     {append(bytes.Clone(ack), 0), ErrGarbled},
	} {
		var p Packet
		if err := Decode(tc.b, &p); !errors.Is(err, tc.want) {
			t.Errorf("%s: Decode = %v, want %v", name, err, tc.want)
		}
	}
	// Fewer payload bytes than announced: a trimmed packet, not an error.
	var p Packet
	if err := Decode(data[:DataHeaderLen+10], &p); err != nil || !p.Data.Trimmed || p.Data.Payload != h.Payload {
		t.Errorf("trimmed: %+v, %v", p.Data, err)
	}
	if err := DecodeData(ack, new(DataHeader)); !errors.Is(err, ErrType) {
		t.Errorf("DecodeData of an ACK: %v", err)
	}
}

func TestWireNoAllocs(t *testing.T) {
	h, a := sampleData(), sampleAck()
	buf := make([]byte, DataHeaderLen+int(h.Payload))
	abuf := make([]byte, AckHeaderLen)
	var p Packet
	allocs := testing.AllocsPerRun(100, func() {
		EncodeData(buf, &h)
		Decode(buf, &p)
		EncodeAck(abuf, &a)
		Decode(abuf, &p)
		Decode(buf[:3], &p) // errors do not allocate either
	})
	if allocs != 0 {
		t.Errorf("%v allocations per encode/decode", allocs)
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// encodes back to the same header bytes.
func FuzzDecode(f *testing.F) {
	h, a := sampleData(), sampleAck()
	data := make([]byte, DataHeaderLen+int(h.Payload))
	EncodeData(data, &h)
	ack := make([]byte, AckHeaderLen)
	EncodeAck(ack, &a)
	f.Add(data)
	f.Add(data[:DataHeaderLen+3])
	f.Add(ack)
	a.Nack = true
	nack := make([]byte, AckHeaderLen)
	EncodeAck(nack, &a)
	f.Add(nack)
	f.Add([]byte{})
	f.Add([]byte("FB\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbound.Default(t, func() {
			var p Packet
			if err := Decode(b, &p); err != nil {
				return
			}
			switch p.Type {
			case TypeData:
				d := p.Data
				out := make([]byte, DataHeaderLen)
				if err := PutDataHeader(out, &d); err != nil {
					t.Fatalf("re-encode %+v: %v", d, err)
				}
				if !bytes.Equal(out, b[:DataHeaderLen]) {
					t.Fatalf("header does not round-trip:\n%x\n%x", out, b[:DataHeaderLen])
				}
				if n := DataHeaderLen + int(d.Payload); d.Trimmed != (len(b) < n) || len(b) > n {
					t.Fatalf("length %d, payload %d, trimmed %v", len(b), d.Payload, d.Trimmed)
				}
			case TypeAck, TypeNack:
				if p.Ack.Nack != (p.Type == TypeNack) {
					t.Fatalf("type %v, nack %v", p.Type, p.Ack.Nack)
				}
				out := make([]byte, AckHeaderLen)
				EncodeAck(out, &p.Ack)
				if !bytes.Equal(out, b) {
					t.Fatalf("ack does not round-trip:\n%x\n%x", out, b)
				}
			default:
				t.Fatalf("Decode accepted type %d", p.Type)
			}
		})
	})
}

func BenchmarkEncodeDecode(b *testing.B) {
	h := sampleData()
	buf := make([]byte, DataHeaderLen+int(h.Payload))
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		EncodeData(buf, &h)
		if err := Decode(buf, &p); err != nil {
			b.Fatal(err)
		}
	}
}
