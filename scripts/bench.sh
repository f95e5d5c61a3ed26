#!/usr/bin/env bash
# Simulator benchmark: 3-tier fat trees (100 Gb/s, 1 us links) with a 2 MiB
# permutation at 1024 hosts, at 8192 hosts when FABRICBENCH_BENCH_8192=1
# (a few minutes on 2 cores) and at 32768 hosts (radix 64, 32 pods) when
# FABRICBENCH_BENCH_32768=1 (tens of minutes, about 1 GB). Each scale runs
# twice: serial (--shards 1) and in the parallel mode with the command's
# default shard count (one per 256 hosts, at least 2) on as many workers as
# CPUs. Prints wall time, CPU time (user + sys), events
# per wall and per CPU second and peak RSS per run (CPU time and peak RSS
# from /usr/bin/time -v when present, else the simulator's own figures).
# On a shared machine compare CPU seconds, and take the minimum of several
# runs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scales=(1024)
if [ "${FABRICBENCH_BENCH_8192:-}" = 1 ]; then scales+=(8192); fi
if [ "${FABRICBENCH_BENCH_32768:-}" = 1 ]; then scales+=(32768); fi
for hosts in "${scales[@]}"; do
for shards in 1 $((hosts / 256 > 2 ? hosts / 256 : 2)); do
  spec="fattree:hosts=$hosts,tiers=3,gbps=100,oversub=1,latency=1us"
  # 32768 = 32 full pods of the radix-64 tree (not a K^3/4 size).
  if [ "$hosts" = 32768 ]; then spec="fattree:hosts=32768,tiers=3,radix=64,gbps=100,oversub=1,latency=1us"; fi
  cmd=(./bin/fabricbench sim -q --topo "$spec"
    --tm permutation:size=2MiB --seed 1 --lb reps --shards "$shards" --json "$out/bench-$hosts.json")
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "${cmd[@]}" >"$out/out-$hosts" 2>"$out/time-$hosts"
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time-$hosts")
    cpu_s=$(awk -F': ' '/User time|System time/ {t += $2} END {print t}' "$out/time-$hosts")
  else
    "${cmd[@]}" >"$out/out-$hosts"
    rss_kb= cpu_s=
  fi
  python3 - "$hosts" "$out/bench-$hosts.json" "$rss_kb" "$cpu_s" <<'PY'
import json, sys
hosts, path, rss_kb, cpu_s = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = json.load(open(path))["summary"]
rss = int(rss_kb) * 1024 if rss_kb else s["peak_rss_bytes"]
cpu = f", {float(cpu_s):6.2f} s CPU = {s['events']/float(cpu_s)/1e6:5.2f} M events/CPU-s" if cpu_s else ""
mode = f"{s['shards']} shards/{s['workers']} workers" if s.get('shards') else "serial"
print(f"{hosts:>6} hosts, {mode:>18}: {s['events']/1e6:6.1f} M events in {s['wall_s']:6.2f} s wall = "
      f"{s['events_per_s']/1e6:5.2f} M events/s{cpu}, peak RSS {rss/1e6:6.1f} MB, "
      f"{s['completed']}/{s['flows']} flows")
PY
done
done
echo
go test -run='^$' -bench=. -benchtime=1x ./sim/ ./agents/transport/
echo
# Agent data plane (loopback packets/s, allocations per packet) and the
# kernel-counter exporter's per-tick read cost (needs root for its veths;
# skips otherwise).
go test -run='^$' -bench=. -benchtime=2s ./agents/dataplane/ ./telemetry/kernelexp/
# The agent against iperf3 on a namespace lab path (root; task bench-agent
# repeats it three times).
if [ "$(id -u)" = 0 ]; then
  echo
  ./bin/fabricbench agent bench --out "$out/agent-bench" || echo "agent bench: exit $?"
fi
