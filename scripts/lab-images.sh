#!/usr/bin/env bash
# Builds the lab images the containerlab tests deploy (no registry is
# reachable from the test machines, so nothing is pulled): Debian bookworm
# root file systems made with mmdebstrap from Debian's packages and
# imported with `docker import`.
#
#   fabricbench/frr:8.4        FRR switch: Debian's frr package started the
#                              way the official FRR image starts it (its
#                              daemons file, then frrinit.sh start); no sshd,
#                              like the official image (fabricbench reaches it
#                              with docker exec)
#   fabricbench/host:bookworm  host: iproute2, ping, iperf3, an OpenSSH server
#                              (not started: fabricbench starts it with the
#                              lab's keys)
#
# An image is rebuilt only when the Debian package versions it would
# contain (or this script) changed: their digest is the image's label
# org.fabricbench.recipe. Prints the image names, one per line.
set -euo pipefail

log() { printf 'lab-images: %s\n' "$*" >&2; }

FRR_IMAGE="${FABRICBENCH_FRR_IMAGE:-fabricbench/frr:8.4}"
HOST_IMAGE="${FABRICBENCH_HOST_IMAGE:-fabricbench/host:bookworm}"
SUITE="${FABRICBENCH_LAB_SUITE:-bookworm}"

common=(iproute2 iputils-ping procps tini lldpd ca-certificates)
frr_pkgs=(frr "${common[@]}")
host_pkgs=(openssh-server iperf3 ethtool "${common[@]}")

for tool in docker mmdebstrap apt-cache sha256sum; do
	command -v "$tool" >/dev/null 2>&1 || { log "$tool not found"; exit 1; }
done
docker info >/dev/null 2>&1 || { log "no Docker engine (docker info failed)"; exit 1; }

# recipe NAME PKG... : a digest of this script and the package versions
# apt would install.
recipe() {
	local name="$1"; shift
	{
		sha256sum "$0" | cut -d' ' -f1
		echo "$name $SUITE"
		for p in "$@"; do
			printf '%s=%s\n' "$p" "$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')"
		done
	} | sha256sum | cut -c1-16
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/frr-start" <<'START'
#!/bin/sh
# fabricbench/frr: start FRR as the official FRR image does (its daemons
# file decides which daemons run), then stay up. Unlike the official
# image's start script it does not chown /etc/frr: files bound into it
# from a checkout keep their owner (FRR reads them as they are).
set -e
mkdir -p /var/run/frr /var/log/frr
chown frr:frr /var/run/frr /var/log/frr
/usr/lib/frr/frrinit.sh start
exec sleep infinity
START

build() {
	local image="$1" entry="$2"; shift 2
	local want have
	want="$(recipe "$image" "$@")"
	have="$(docker image inspect --format '{{ index .Config.Labels "org.fabricbench.recipe" }}' "$image" 2>/dev/null || true)"
	if [[ "$have" == "$want" ]]; then
		log "$image is up to date (recipe $want)"
		return
	fi
	log "building $image (recipe $want; packages: $*)"
	local pkgs
	pkgs="$(IFS=,; echo "$*")"
	local hooks=()
	if [[ "$entry" == frr ]]; then
		hooks=(--customize-hook="upload $tmp/frr-start /usr/local/sbin/fabricbench-frr-start"
			--customize-hook='chmod 755 "$1/usr/local/sbin/fabricbench-frr-start"')
	fi
	local cmd='["sleep","infinity"]'
	[[ "$entry" == frr ]] && cmd='["/usr/local/sbin/fabricbench-frr-start"]'
	TMPDIR=/var/tmp mmdebstrap --quiet --variant=minbase --include="$pkgs" \
		--customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
		"${hooks[@]}" "$SUITE" - |
		docker import \
			-c 'ENTRYPOINT ["/usr/bin/tini", "--"]' \
			-c "CMD $cmd" \
			-c "LABEL org.fabricbench.recipe=$want" \
			- "$image" >/dev/null
	log "built $image"
}

build "$FRR_IMAGE" frr "${frr_pkgs[@]}"
build "$HOST_IMAGE" host "${host_pkgs[@]}"
echo "$FRR_IMAGE"
echo "$HOST_IMAGE"
