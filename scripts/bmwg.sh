#!/usr/bin/env bash
# Runs the IETF BMWG AI-fabric pack (examples/suites/bmwg) on the
# simulator and writes each suite's BMWG report (docs/bmwg.md):
#
#   scripts/bmwg.sh [OUT]        # default OUT: out/bmwg
#
# Every suite's results go to OUT/<suite>/ (results.json, report.html,
# bmwg.md, bmwg.json, bmwg-*.svg). Exit status: the worst suite's.
set -u
out=${1:-out/bmwg}
bin=${FABRICBENCH:-bin/fabricbench}
if [ ! -x "$bin" ]; then
	go build -buildvcs=auto -o bin/fabricbench ./cmd/fabricbench || exit 2
	bin=bin/fabricbench
fi
mkdir -p "$out" || exit 2
status=0
start=$(date +%s)
for f in examples/suites/bmwg/*.yaml; do
	name=$(basename "$f" .yaml)
	t0=$(date +%s)
	par=2
	[ "$name" = 7-soak ] && par=1 # its leak check samples the process after each run
	"$bin" run "$f" --out "$out/$name" --parallel "$par" >"$out/$name.log" 2>&1
	rc=$?
	"$bin" report --format bmwg "$out/$name" >/dev/null || rc=3
	echo "$name: exit $rc, $(( $(date +%s) - t0 )) s ($out/$name/bmwg.md)"
	[ "$rc" -gt "$status" ] && status=$rc
done
echo "pack: $(( $(date +%s) - start )) s"
exit "$status"
