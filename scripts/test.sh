#!/usr/bin/env bash
# The one test command: installs what the tests need, then runs lint and every
# test. Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/lint.sh
# -count=1: always run, never report cached results.
go test -count=1 -timeout 30m ./...
