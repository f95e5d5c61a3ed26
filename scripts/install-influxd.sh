#!/usr/bin/env bash
# Install the InfluxDB 1.8.10 server (influxd) from source with the Go toolchain.
#
# The binary is put at "$(go env GOPATH)/bin/influxd-1.8.10" (override the
# directory with INFLUXD_BIN_DIR). If a binary is already there and reports
# version 1.8.10, nothing is built. Only the Go module proxy is used: no cgo,
# no C/Rust libraries (Flux in 1.8.10 is pure Go unless built with the
# `libflux` tag, which we do not use).
#
# Progress messages go to stderr; the last line on stdout is the binary path,
# so callers can do:  INFLUXD="$(scripts/install-influxd.sh)"
#
# Environment:
#   INFLUXD_BIN_DIR         install directory (default: first GOPATH entry + /bin)
#   INFLUXD_BUILD_TIMEOUT   seconds allowed for `go install` (default: 1800)
set -euo pipefail

readonly INFLUXD_VERSION="1.8.10"
readonly INFLUXD_PKG="github.com/influxdata/influxdb/cmd/influxd@v${INFLUXD_VERSION}"

log() { printf 'install-influxd: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "the 'go' command is not on PATH; install Go first"

# True if "$1" is an executable influxd that reports version 1.8.10.
is_wanted_version() {
	local bin="$1" out
	[[ -f "$bin" && -x "$bin" ]] || return 1
	out="$("$bin" version 2>/dev/null)" || return 1
	# Expected output: "InfluxDB v1.8.10 (git: 1.8 unknown)"
	[[ "$out" == "InfluxDB v${INFLUXD_VERSION} "* ]]
}

bin_dir="${INFLUXD_BIN_DIR:-}"
if [[ -z "$bin_dir" ]]; then
	gopath="$(go env GOPATH)" || die "'go env GOPATH' failed"
	[[ -n "$gopath" ]] || die "'go env GOPATH' is empty; set GOPATH or INFLUXD_BIN_DIR"
	bin_dir="${gopath%%:*}/bin"
fi
target="${bin_dir}/influxd-${INFLUXD_VERSION}"

if is_wanted_version "$target"; then
	log "already installed: $("$target" version 2>/dev/null)"
	printf '%s\n' "$target"
	exit 0
fi
if [[ -e "$target" ]]; then
	log "replacing $target (it does not report version ${INFLUXD_VERSION})"
fi

mkdir -p "$bin_dir" || die "cannot create $bin_dir"

# Build into a scratch GOBIN inside bin_dir (same filesystem, so the final mv
# is atomic and a half-built binary never sits at $target).
tmp_gobin="$(mktemp -d "${bin_dir}/.influxd-${INFLUXD_VERSION}.XXXXXX")" \
	|| die "cannot create a temporary directory in $bin_dir"
# Run from a neutral directory so no go.mod / go.work around the caller applies.
tmp_wd="$(mktemp -d)" || die "cannot create a temporary directory"
cleanup() { rm -rf -- "$tmp_gobin" "$tmp_wd"; }
trap cleanup EXIT

# -X main.version/main.branch are what InfluxData's release build sets; they
# make `influxd version` and the X-Influxdb-Version header read 1.8.10.
ldflags="-s -w -X main.version=${INFLUXD_VERSION} -X main.branch=1.8"

timeout_s="${INFLUXD_BUILD_TIMEOUT:-1800}"
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then
	timeout_cmd=(timeout "$timeout_s")
fi

log "building ${INFLUXD_PKG} with $(go version) (this takes a few minutes on a cold cache)"
start=$SECONDS
if ! (
	cd "$tmp_wd" &&
		env GOBIN="$tmp_gobin" GOWORK=off GOFLAGS= CGO_ENABLED=0 \
			"${timeout_cmd[@]}" go install -trimpath -ldflags="$ldflags" "$INFLUXD_PKG" >&2
); then
	die "'go install ${INFLUXD_PKG}' failed (or exceeded ${timeout_s}s); see the output above"
fi
log "build took $((SECONDS - start))s"

built="${tmp_gobin}/influxd"
[[ -x "$built" ]] || die "go install succeeded but $built is missing"
is_wanted_version "$built" \
	|| die "built binary reports '$("$built" version 2>&1 || true)', expected InfluxDB v${INFLUXD_VERSION}"

mv -f -- "$built" "$target" || die "cannot move the binary to $target"
log "installed: $("$target" version 2>/dev/null)"
printf '%s\n' "$target"
