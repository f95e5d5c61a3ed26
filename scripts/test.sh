#!/usr/bin/env bash
# The one test command: installs what the tests need, then runs lint and every
# test. Used by the README and by .ci/run.
#
# It installs, when missing: the pinned InfluxDB 1.8.10 (built with the Go
# toolchain, see install-influxd.sh), Chromium (Debian package, for the
# HTML report test) and, for the lab tests (real FRR fabrics in network
# namespaces, which run as root), FRR, the OpenSSH server, iproute2 and
# ping, iperf3 (the agent bench's comparison), and Slurm (slurm-wlm,
# munge) for the Slurm tests, which start a one-node cluster on loopback,
# and redis-server for the SONiC test double (the sonic driver's tests).
# For the containerlab tests it installs
# docker.io and mmdebstrap, starts dockerd when no engine answers (and
# stops it at the end), builds the lab images once (scripts/lab-images.sh:
# reused while the Debian packages are the same) and points the tests at
# ../shared/tools/containerlab when it exists. Set
# FABRICBENCH_SKIP_INSTALL=1 to install nothing; the tests that need a
# missing component then skip with a printed reason.
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
	# lldpd: lab nodes announce themselves, so bring-up validation checks
	# the cabling by LLDP.
	[[ -x /usr/sbin/lldpd ]] || apt_missing+=(lldpd)
	# The agent bench compares the agents with iperf3 (agents/agentbench).
	command -v iperf3 >/dev/null 2>&1 || apt_missing+=(iperf3)
	# The Slurm tests (internal/slurmtest: a one-node cluster on loopback).
	[[ -x /usr/sbin/slurmctld && -x /usr/sbin/slurmd ]] || apt_missing+=(slurm-wlm)
	[[ -x /usr/sbin/munged ]] || apt_missing+=(munge)
	# The containerlab tests (containerlab and Docker; images from Debian
	# packages, no registry).
	[[ -x /usr/sbin/dockerd ]] || apt_missing+=(docker.io)
	command -v mmdebstrap >/dev/null 2>&1 || apt_missing+=(mmdebstrap)
	# xmllint validates junit.xml and compare.xml against the Jenkins
	# junit-10 schema (report's schema test).
	command -v xmllint >/dev/null 2>&1 || apt_missing+=(libxml2-utils)
	# The SONiC test double (drivers/sonic/testdouble): CONFIG_DB, STATE_DB
	# and COUNTERS_DB in a real redis-server, reached over sshd.
	command -v redis-server >/dev/null 2>&1 || apt_missing+=(redis-server)
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

# The containerlab tests: containerlab beside the checkout, a Docker
# engine (started here when none answers, stopped by its PID at the end)
# and the lab images.
dockerd_pid=""
stop_dockerd() {
	if [[ -n "$dockerd_pid" ]] && kill -0 "$dockerd_pid" 2>/dev/null; then
		log "stopping the dockerd this run started (pid $dockerd_pid)"
		kill "$dockerd_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$dockerd_pid" 2>/dev/null || true
	fi
}
trap stop_dockerd EXIT
if [[ -z "${FABRICBENCH_CONTAINERLAB:-}" && -x ../shared/tools/containerlab ]]; then
	FABRICBENCH_CONTAINERLAB="$(cd ../shared/tools && pwd)/containerlab"
	export FABRICBENCH_CONTAINERLAB
fi
export CLAB_VERSION_CHECK=disable
if [[ -n "${FABRICBENCH_CONTAINERLAB:-}" && "$(id -u)" == 0 ]] && command -v dockerd >/dev/null 2>&1; then
	if ! docker info >/dev/null 2>&1; then
		dlog="$(mktemp -t fabricbench-dockerd.XXXXXX)"
		log "starting dockerd (log $dlog)"
		dockerd --iptables=false --ip-masq=false --bridge=none >"$dlog" 2>&1 &
		dockerd_pid=$!
		for _ in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.3; done
		docker info >/dev/null 2>&1 || log "dockerd did not answer; the containerlab tests will skip (see $dlog)"
	fi
	if docker info >/dev/null 2>&1 && [[ "${FABRICBENCH_SKIP_INSTALL:-0}" != 1 || -n "${FABRICBENCH_BUILD_LAB_IMAGES:-}" ]]; then
		if images="$(./scripts/lab-images.sh)"; then
			FABRICBENCH_FRR_IMAGE="$(sed -n 1p <<<"$images")"
			FABRICBENCH_HOST_IMAGE="$(sed -n 2p <<<"$images")"
			export FABRICBENCH_FRR_IMAGE FABRICBENCH_HOST_IMAGE
		else
			log "could not build the lab images; the containerlab tests will skip"
		fi
	fi
elif [[ -z "${FABRICBENCH_CONTAINERLAB:-}" ]]; then
	log "no ../shared/tools/containerlab (or FABRICBENCH_CONTAINERLAB); the containerlab tests will skip"
fi
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
# What exists before the tests: containers, Docker networks, network
# namespaces (compared with what exists after them).
leftovers() {
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
		docker ps -a --format 'container {{.Names}}' 2>/dev/null || true
		docker network ls --format 'network {{.Name}}' 2>/dev/null || true
	fi
	ip netns list 2>/dev/null | awk '{print "namespace " $1}' || true
}
before=""
[[ "$(id -u)" == 0 ]] && before="$(leftovers)"
status=0
go test -count=1 -timeout 40m -json ./... | "$summary" || status=$?

# Nothing a test started may outlive the tests: no container, Docker
# network or network namespace that was not there before them.
if [[ "$(id -u)" == 0 ]]; then
	after="$(leftovers)"
	left="$(comm -13 <(sort <<<"$before") <(sort <<<"$after") | grep -v '^$' || true)"
	if [[ -n "$left" ]]; then
		log "left behind by the tests:"
		sed 's/^/  /' <<<"$left" >&2
		status=1
	fi
fi
exit "$status"
