#!/usr/bin/env bash
# Build, vet, statically check and test the way a change must pass:
# a thin wrapper of `make check` (see the Makefile for the single targets).
set -euo pipefail
cd "$(dirname "$0")/.."
exec make check "$@"
