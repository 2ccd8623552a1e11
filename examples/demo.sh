#!/usr/bin/env bash
# The README's main job: index the bundled example sessions into a throwaway memory, show its
# status, and recall from it. Set FUNES_HOME to use another memory (default: ./.funes-demo).
set -euo pipefail
cd "$(dirname "$0")/.."
export FUNES_HOME="${FUNES_HOME:-$PWD/.funes-demo}"

echo "== validating the example sessions (writes nothing)"
funes index --check examples/sessions
echo
echo "== indexing them into $FUNES_HOME"
funes index examples/sessions --wait
echo
echo "== funes status"
funes status
echo
echo '== funes recall "why did the ARM build break" -k 2'
funes recall "why did the ARM build break" -k 2
