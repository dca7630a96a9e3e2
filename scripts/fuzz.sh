#!/usr/bin/env bash
# fuzz.sh runs each fuzz target for FUZZTIME (default 60s). New failing
# inputs land in the package's testdata/fuzz/, which `make test` replays.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-60s}
go test -run '^$' -fuzz '^FuzzDecodeFrame$' -fuzztime "$t" ./agentbridge/wire
go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime "$t" ./exec
go test -run '^$' -fuzz '^FuzzParseFormat$' -fuzztime "$t" ./prefs
go test -run '^$' -fuzz '^FuzzMarshal$' -fuzztime "$t" ./agentbridge/audit
go test -run '^$' -fuzz '^FuzzTyped$' -fuzztime "$t" ./exec/shellword
go test -run '^$' -fuzz '^FuzzAgreesWithBash$' -fuzztime "$t" ./exec/shellword
