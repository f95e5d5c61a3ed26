#!/usr/bin/env bash
# The one test command: installs what the tests need, then runs lint and every
# test. Used by the README and by .ci/run.
#
# It installs, when missing: the pinned InfluxDB 1.8.10 (built with the Go
# toolchain, see install-influxd.sh), Chromium (Debian package, for the
# HTML report test) and, for the lab tests (real FRR fabrics in network
# namespaces, which run as root), FRR, the OpenSSH server, iproute2 and
# ping, iperf3 (the agent bench's comparison), and Slurm (slurm-wlm,
# munge) for the Slurm tests, which start a
# one-node cluster on loopback. Set FABRICBENCH_SKIP_INSTALL=1 to install nothing; the
# tests that need a missing component then skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'test.sh: %s\n' "$*" >&2; }

if [[ "${FABRICBENCH_SKIP_INSTALL:-0}" != 1 ]]; then
	if [[ -z "${FABRICBENCH_INFLUXD:-}" ]]; then
		FABRICBENCH_INFLUXD="$(./scripts/install-influxd.sh | tail -n 1)"
		export FABRICBENCH_INFLUXD
	fi
	log "influxd: ${FABRICBENCH_INFLUXD}"
	apt_missing=()
	[[ -x /usr/lib/frr/zebra ]] || apt_missing+=(frr)
	[[ -x /usr/sbin/sshd ]] || apt_missing+=(openssh-server)
	command -v ip >/dev/null 2>&1 || apt_missing+=(iproute2)
	command -v ping >/dev/null 2>&1 || apt_missing+=(iputils-ping)
	command -v nsenter >/dev/null 2>&1 || apt_missing+=(util-linux)
	# The agent bench compares the agents with iperf3 (agents/agentbench).
	command -v iperf3 >/dev/null 2>&1 || apt_missing+=(iperf3)
	# The Slurm tests (internal/slurmtest: a one-node cluster on loopback).
	[[ -x /usr/sbin/slurmctld && -x /usr/sbin/slurmd ]] || apt_missing+=(slurm-wlm)
	[[ -x /usr/sbin/munged ]] || apt_missing+=(munge)
	if (( ${#apt_missing[@]} > 0 )); then
		if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
			log "installing ${apt_missing[*]} (apt-get) for the lab tests"
			export DEBIAN_FRONTEND=noninteractive
			# TMPDIR=/var/tmp: on some hosts apt-key cannot create its temp file in /tmp.
			TMPDIR=/var/tmp apt-get update -qq >/dev/null || log "apt-get update failed; trying the install anyway"
			apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null \
				|| log "could not install ${apt_missing[*]}; the lab and Slurm tests will skip"
		else
			log "${apt_missing[*]} missing and not root with apt-get; the lab tests will skip"
		fi
	fi
	if ! command -v chromium >/dev/null 2>&1 && [[ -z "${FABRICBENCH_CHROMIUM:-}" ]]; then
		if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
			log "installing chromium (apt-get)"
			export DEBIAN_FRONTEND=noninteractive
			TMPDIR=/var/tmp apt-get update -qq >/dev/null || log "apt-get update failed; trying the install anyway"
			apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null \
				|| log "could not install chromium; the report browser test will skip"
		else
			log "chromium missing and not root with apt-get; the report browser test will skip"
		fi
	fi
fi

./scripts/lint.sh
# iproute2 turns /run/netns into a bind mount of itself the first time it
# creates a namespace. If that happens while another test package's lab
# already has namespaces mounted there, those end up underneath the new
# mount and cannot be deleted ("device or resource busy"). Packages run in
# parallel, so set the mount up once before any of them starts.
if [[ "$(id -u)" == 0 ]] && command -v ip >/dev/null 2>&1; then
	ip netns add fbtest-mountprobe 2>/dev/null && ip netns delete fbtest-mountprobe 2>/dev/null || true
fi
# -count=1: always run, never report cached results. testsum prints a
# line per package, the output of failed tests and, at the end, every
# skipped test with its reason.
summary="$(mktemp -d)/testsum"
go build -o "$summary" ./internal/tools/testsum
go test -count=1 -timeout 30m -json ./... | "$summary"
