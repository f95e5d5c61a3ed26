#!/usr/bin/env bash
# Shows that a change leaves fabricbench's results as they were: runs every
# example suite that runs on the sim backend (examples/suites/*.yaml; one
# the backend refuses, exit 2, counts as not running there, and must be
# refused on both sides) and a set of `fabricbench sim` commands with two
# builds, and compares what they wrote: results.json less its wall-clock
# fields, every run's flows.csv and plots.json, the sim commands' --json
# output and summary, and every exit status (internal/tools/resultscmp
# says what exactly).
#
#   scripts/compare-results.sh [REV]        build REV (default: main) and the
#                                           working tree, run both, compare
#   scripts/compare-results.sh --run DIR    run with the working tree's build
#                                           into DIR (e.g. to keep a baseline)
#   scripts/compare-results.sh --against DIR
#                                           run the working tree's build and
#                                           compare with a DIR made by --run
#
# FABRICBENCH_COMPARE_KEEP=DIR keeps the outputs of both sides under DIR.
# The example suites and sim commands take about 2 minutes per side on
# 2 cores. Exit status: 0 identical, 1 different, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

work=$(mktemp -d)
cleanup() { [ -n "${FABRICBENCH_COMPARE_KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# build DEST [REV]: builds fabricbench (at REV, from a git archive of it, or
# the working tree) into DEST.
build() {
  local dest=$1 rev=${2:-}
  if [ -n "$rev" ]; then
    local src=$work/src-$(git rev-parse --short "$rev")
    mkdir -p "$src"
    git archive "$rev" | tar -x -C "$src"
    (cd "$src" && go build -o "$dest" ./cmd/fabricbench)
  else
    go build -o "$dest" ./cmd/fabricbench
  fi
}

# The sim commands: presets, routing modes, load balancers, faults, planes,
# an htsim connection matrix and the parallel mode.
sim_cmds=(
  "smartt-incast|--preset smartt --topo fattree:hosts=32,tiers=2 --tm incast:senders=16,size=2MiB,dst=0"
  "smartt-ops|--preset smartt --topo leafspine:leaves=8,spines=4,hosts_per_leaf=8,uplink_gbps=400 --tm permutation:size=2MiB --lb ops"
  "spritz-monitored|--preset spritz --topo dragonfly:p=2,a=4,h=2 --routing source-guided --lb spritz-spray --tm monitored:size=6MiB,free=1 --seed 1"
  "htsim-perm|--topo fattree:hosts=128,tiers=3,gbps=100,oversub=1,latency=1us --tm sim/testdata/perm_128n_128c_2MB.cm --mtu 4086"
  "dctcp-ops-notrim|--topo fattree:hosts=128 --tm alltoall:size=64KiB,k=4 --cc dctcp --lb ops --trim=false"
  "faults-reconverge|--topo leafspine:leaves=4,spines=2,hosts_per_leaf=8 --tm permutation:size=2MiB --fault degrade:leaf0-spine1@0=0.5 --fault down:leaf2-spine0@50us --reconverge 1ms"
  "ugal-g|--topo dragonfly:p=2,a=4,h=2 --tm permutation:size=1MiB --lb ecmp --routing ugal-g"
  "minimal-fail-links|--topo dragonfly:p=2,a=4,h=2 --tm permutation:size=1MiB --routing minimal --lb ops --cc dctcp --fail-links 0.05 --seed 1"
  "adaptive|--topo leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=400 --tm permutation:size=1MiB --lb ecmp --routing adaptive --ar-staleness 100ns --ar-quantum 4KiB --ar-weighted"
  "owd|--topo dragonfly:p=2,a=4,h=2 --tm permutation:size=1MiB --routing port-msb --lb owd --cc dctcp"
  "planes-global|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4,planes=2 --tm permutation:size=1MiB --planes global"
  "coalesced-acks|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4 --tm permutation:size=1MiB --ack-every 4 --ack-every-bytes 16KiB --ack-delay 2us --entropies 64 --ops-cycle --lb ops --header 80 --target-rtt 2 --max-window 2"
  "go-back-n|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4 --tm permutation:size=1MiB --go-back-n --lb reps --reps-warmup"
  "bad-go-back-n-coalescing|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4 --tm permutation:size=1MiB --go-back-n --ack-every 4"
  "bad-owd-routing|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4 --tm permutation:size=1MiB --lb owd"
  "bad-preset-file|--preset smartt --topo inventory/testdata/leaf_spine_tiny.topo --tm permutation:size=1MiB"
  "longest-path-queue|--topo dragonfly:p=2,a=4,h=2 --tm permutation:size=1MiB --queue longest-path --routing source-guided --lb spritz-scout --end 5ms --stall-after off"
  "queue-size|--topo leafspine:leaves=2,spines=2,hosts_per_leaf=4 --tm incast:senders=7,size=1MiB,dst=0 --queue 64KiB --kmin 0.1 --kmax 0.5 --ecn=false"
  "shards|--topo fattree:hosts=128,tiers=3 --tm permutation:size=512KiB --shards 4 --workers 2"
)

# runall BIN DIR: every sim-backend example suite and every sim command.
runall() {
  local bin=$1 out=$2 f n rc
  mkdir -p "$out"
  for f in examples/suites/*.yaml; do
    n=$(basename "$f" .yaml)
    mkdir -p "$out/suite-$n"
    rc=0
    "$bin" run "$f" --backend sim -q --out "$out/suite-$n/out" >"$out/suite-$n/log" 2>&1 || rc=$?
    echo "$rc" >"$out/suite-$n/rc"
    # Rendered from results.json and the plots, or timestamped: not compared.
    find "$out/suite-$n/out" \( -name telemetry.csv.gz -o -name report.html -o -name junit.xml \) -delete 2>/dev/null || true
    echo "suite $n: exit $rc" >&2
  done
  local c
  for c in "${sim_cmds[@]}"; do
    n=${c%%|*}
    mkdir -p "$out/sim-$n"
    rc=0
    # shellcheck disable=SC2086 # the flags are split on purpose
    "$bin" sim -q ${c#*|} --json "$out/sim-$n/sim.json" >"$out/sim-$n/stdout" 2>"$out/sim-$n/stderr" || rc=$?
    echo "$rc" >"$out/sim-$n/rc"
    echo "sim $n: exit $rc" >&2
  done
}

compare() {
  go run ./internal/tools/resultscmp "$1" "$2"
}

case "${1:-}" in
  --run)
    [ $# = 2 ] || { echo "usage: $0 --run DIR" >&2; exit 2; }
    build "$work/after"
    runall "$work/after" "$2"
    ;;
  --against)
    [ $# = 2 ] || { echo "usage: $0 --against DIR" >&2; exit 2; }
    build "$work/after"
    runall "$work/after" "$work/out-after"
    compare "$2" "$work/out-after"
    ;;
  -h|--help)
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    rev=${1:-main}
    git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "$0: no commit $rev" >&2; exit 2; }
    build "$work/before" "$rev"
    build "$work/after"
    runall "$work/before" "$work/out-before"
    runall "$work/after" "$work/out-after"
    [ -z "${FABRICBENCH_COMPARE_KEEP:-}" ] || { mkdir -p "$FABRICBENCH_COMPARE_KEEP"; cp -r "$work/out-before" "$work/out-after" "$FABRICBENCH_COMPARE_KEEP/"; }
    compare "$work/out-before" "$work/out-after"
    ;;
esac
