#!/bin/bash
# host.sh ADDRESS/LEN GATEWAY: address eth1 and route the lab's prefixes through GATEWAY.
set -euo pipefail
ip link set eth1 up
ip addr replace "$1" dev eth1
ip route replace 198.18.0.0/17 via "$2" dev eth1
