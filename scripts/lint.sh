#!/usr/bin/env bash
# gofmt, go vet and the pinned staticcheck. Installs staticcheck when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
STATICCHECK_VERSION=v0.6.1
bin="$(go env GOPATH)/bin"
if ! "$bin/staticcheck" -version 2>/dev/null | grep -q "${STATICCHECK_VERSION#v}"; then
  echo "lint: installing staticcheck ${STATICCHECK_VERSION}"
  GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}"
fi
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "lint: gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
"$bin/staticcheck" ./...
echo "lint: ok"
