#!/bin/sh
# Runs every fuzz target of the module, one after the other, for FUZZTIME
# each (default 30s): `task fuzz` or `FUZZTIME=10s ./scripts/fuzz.sh`.
# The targets are found with `go test -list`, so new ones are picked up
# without editing this script. Exits non-zero when any target fails.
set -eu
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
targets=$(go test -list '^Fuzz' ./... | awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok/   { for (i = 0; i < n; i++) print $2 " " names[i]; n = 0 }')
total=$(printf '%s\n' "$targets" | grep -c . || true)
echo "fuzz: $total targets, $FUZZTIME each"
failed=""
i=0
while read -r pkg name; do
	[ -n "$pkg" ] || continue
	i=$((i + 1))
	echo "fuzz: [$i/$total] $pkg $name"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" "$pkg"; then
		failed="$failed $pkg.$name"
	fi
done <<EOT
$targets
EOT
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed" >&2
	exit 1
fi
echo "fuzz: all $total targets passed"
