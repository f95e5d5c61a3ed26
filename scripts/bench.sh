#!/usr/bin/env bash
# Simulator benchmark: 1024-host 3-tier fat tree (100 Gb/s, 1 us links),
# 1024-flow 2 MiB permutation. Prints wall time, events/s and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./bin/fabricbench sim --topo fattree:hosts=1024,tiers=3,gbps=100,oversub=1,latency=1us \
  --tm permutation:size=2MiB --seed 1 --json "$out/bench.json"
echo
go test -run='^$' -bench=. -benchtime=1x ./sim/ ./agents/transport/
echo
# Agent data plane (loopback packets/s) and the kernel-counter exporter's
# per-tick read cost (needs root for its veths; skips otherwise).
go test -run='^$' -bench=. -benchtime=2s ./agents/dataplane/ ./telemetry/kernelexp/
