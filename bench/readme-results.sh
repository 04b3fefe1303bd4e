#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   bench/readme-results.sh [RESULTS_JSON]
#
# Regenerate README.md's results section (between the bench-results
# markers) from a make bench run: bench/results/latest.json by default.
# Nothing in that section is copied by hand.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
json=${1:-$top/bench/results/latest.json}
[ -f "$json" ] || { echo "bench/readme-results.sh: no $json; run make bench first" >&2; exit 1; }
exec python3 "$top/bench/report.py" --readme "$top/README.md" "$json"
