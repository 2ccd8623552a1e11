#!/usr/bin/env bash
# The README's main job: validate the bundled example sessions (later: index them and recall).
set -euo pipefail
cd "$(dirname "$0")/.."
export FUNES_HOME="${FUNES_HOME:-$PWD/.funes-demo}"
funes index --check examples/sessions
