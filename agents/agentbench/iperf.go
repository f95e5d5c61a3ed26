package agentbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// iperf3Port is the port iperf3's server listens on in the destination
// namespace.
const iperf3Port = 5201

// findIperf3 resolves the iperf3 binary: "" looks it up ("" back when it
// is missing), "none" skips it, anything else must exist.
func findIperf3(bin string) (string, error) {
	switch bin {
	case "none":
		return "", nil
	case "":
		p, err := exec.LookPath("iperf3")
		if err != nil {
			return "", nil
		}
		return p, nil
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("agentbench: iperf3 %q: %w", bin, err)
	}
	return p, nil
}

// iperfRunner runs iperf3 over plane 0 of the path.
type iperfRunner struct {
	bin      string
	path     Path
	dur      time.Duration
	datagram int
}

// iperfEnd is the part of iperf3's JSON output the bench reads.
type iperfEnd struct {
	Error string `json:"error"`
	End   struct {
		Streams []struct {
			UDP *struct {
				BitsPerSecond float64 `json:"bits_per_second"`
				LostPercent   float64 `json:"lost_percent"`
			} `json:"udp"`
			Receiver *struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"receiver"`
		} `json:"streams"`
		Sum         *iperfSum `json:"sum"`
		SumSent     *iperfSum `json:"sum_sent"`
		SumReceived *iperfSum `json:"sum_received"`
	} `json:"end"`
}

type iperfSum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         float64 `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`
	Packets       uint64  `json:"packets"`
	LostPackets   uint64  `json:"lost_packets"`
	LostPercent   float64 `json:"lost_percent"`
}

// measure runs one iperf3 test of n parallel streams: UDP with the agent's
// datagram size and no rate limit (-b 0), or TCP.
func (ip *iperfRunner) measure(ctx context.Context, n int, udp bool, run int) (*Result, error) {
	port := strconv.Itoa(iperf3Port)
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", ip.path.DstNS, ip.bin, "-s", "-1", "-p", port)
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("agentbench: start iperf3 server: %w", err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	defer func() {
		if srv.ProcessState == nil {
			_ = srv.Process.Kill()
			<-srvDone
		}
	}()
	if err := ip.waitListening(ctx, srvDone); err != nil {
		return nil, fmt.Errorf("%w; server output: %s", err, strings.TrimSpace(srvOut.String()))
	}
	args := []string{"netns", "exec", ip.path.SrcNS, ip.bin, "-c", ip.path.Dst[0].String(), "-p", port, "-J",
		"-t", strconv.Itoa(int(math.Ceil(ip.dur.Seconds()))), "-P", strconv.Itoa(n)}
	tool := ToolIperfTCP
	if udp {
		tool = ToolIperfUDP
		args = append(args, "-u", "-b", "0", "-l", strconv.Itoa(ip.datagram))
	}
	cli := exec.CommandContext(ctx, "ip", args...)
	var out, stderr bytes.Buffer
	cli.Stdout, cli.Stderr = &out, &stderr
	runErr := cli.Run()
	var srvErr error
	select {
	case srvErr = <-srvDone:
	case <-time.After(10 * time.Second):
		_ = srv.Process.Kill()
		srvErr = <-srvDone
		if srvErr == nil {
			srvErr = errors.New("did not exit after the test")
		}
	}
	var res iperfEnd
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("agentbench: iperf3 %s: %v (%v); output: %s %s", tool, runErr, err, clip(out.String()), clip(stderr.String()))
	}
	if res.Error != "" || runErr != nil {
		return nil, fmt.Errorf("agentbench: iperf3 %s: %v %s; %s", tool, runErr, res.Error, clip(stderr.String()))
	}
	if srvErr != nil {
		return nil, fmt.Errorf("agentbench: iperf3 server: %v; %s", srvErr, clip(srvOut.String()))
	}
	r := &Result{Tool: tool, Flows: n, Run: run, CPUSeconds: (procCPU(cli.ProcessState) + procCPU(srv.ProcessState)).Seconds()}
	sent, recv := res.End.SumSent, res.End.SumReceived
	if sent == nil {
		sent = res.End.Sum
	}
	if recv == nil {
		recv = res.End.Sum
	}
	if sent == nil || recv == nil || recv.Seconds <= 0 {
		return nil, fmt.Errorf("agentbench: iperf3 %s: no summary in its output: %s", tool, clip(out.String()))
	}
	r.Seconds = recv.Seconds
	r.SentGbps = sent.BitsPerSecond / 1e9
	r.GoodputGbps = recv.BitsPerSecond / 1e9
	if udp {
		r.Datagram = ip.datagram
		r.Packets = sent.Packets
		if res.End.SumReceived == nil {
			// iperf3 before 3.11 has one "sum": the sender's rate and the
			// receiver's loss.
			r.GoodputGbps = sent.BitsPerSecond * (1 - recv.LostPercent/100) / 1e9
		}
		r.LossPct = recv.LostPercent
	} else {
		r.Retransmits = sent.Retransmits
		mss := ip.path.MTU - 20 - 32 // IPv4, TCP with timestamps
		r.Packets = uint64(sent.Bytes) / uint64(max(mss, 1))
	}
	r.Bytes = int64(r.GoodputGbps * 1e9 / 8 * r.Seconds)
	r.PerFlowGbps = r.GoodputGbps / float64(n)
	r.MinFlowGbps = r.PerFlowGbps
	for i, s := range res.End.Streams {
		var g float64
		switch {
		case s.UDP != nil:
			g = s.UDP.BitsPerSecond * (1 - s.UDP.LostPercent/100) / 1e9
		case s.Receiver != nil:
			g = s.Receiver.BitsPerSecond / 1e9
		default:
			continue
		}
		if i == 0 || g < r.MinFlowGbps {
			r.MinFlowGbps = g
		}
	}
	if r.Bytes > 0 {
		r.CPUPerGB = r.CPUSeconds / (float64(r.Bytes) / 1e9)
	}
	return r, nil
}

// waitListening waits until the server listens (ss in its namespace).
func (ip *iperfRunner) waitListening(ctx context.Context, exited <-chan error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.CommandContext(ctx, "ip", "netns", "exec", ip.path.DstNS, "ss", "-Hltn", "sport = :"+strconv.Itoa(iperf3Port)).Output()
		if strings.Contains(string(out), "LISTEN") {
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("agentbench: the iperf3 server exited at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("agentbench: the iperf3 server does not listen after 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procCPU is a finished process's user plus system time.
func procCPU(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}
