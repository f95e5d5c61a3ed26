#!/usr/bin/env bash
# Simulator benchmark: 3-tier fat trees (100 Gb/s, 1 us links) with a 2 MiB
# permutation at 1024 hosts, and at 8192 hosts when FABRICBENCH_BENCH_8192=1
# (about a minute on 2 cores). Prints wall time, events/s and peak RSS per
# scale (peak RSS from /usr/bin/time -v when present, else the simulator's
# own figure).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scales=(1024)
if [ "${FABRICBENCH_BENCH_8192:-}" = 1 ]; then scales+=(8192); fi
for hosts in "${scales[@]}"; do
  cmd=(./bin/fabricbench sim -q --topo "fattree:hosts=$hosts,tiers=3,gbps=100,oversub=1,latency=1us"
    --tm permutation:size=2MiB --seed 1 --lb reps --json "$out/bench-$hosts.json")
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "${cmd[@]}" >"$out/out-$hosts" 2>"$out/time-$hosts"
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time-$hosts")
  else
    "${cmd[@]}" >"$out/out-$hosts"
    rss_kb=
  fi
  python3 - "$hosts" "$out/bench-$hosts.json" "$rss_kb" <<'PY'
import json, sys
hosts, path, rss_kb = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(path))["summary"]
rss = int(rss_kb) * 1024 if rss_kb else s["peak_rss_bytes"]
print(f"{hosts:>6} hosts: {s['events']/1e6:6.1f} M events in {s['wall_s']:6.2f} s wall = "
      f"{s['events_per_s']/1e6:5.2f} M events/s, peak RSS {rss/1e6:6.1f} MB, "
      f"{s['completed']}/{s['flows']} flows")
PY
done
echo
go test -run='^$' -bench=. -benchtime=1x ./sim/ ./agents/transport/
echo
# Agent data plane (loopback packets/s) and the kernel-counter exporter's
# per-tick read cost (needs root for its veths; skips otherwise).
go test -run='^$' -bench=. -benchtime=2s ./agents/dataplane/ ./telemetry/kernelexp/
