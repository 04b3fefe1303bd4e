#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch --strict and sparse are clean on patches/ and the module.
set -euo pipefail
exec "$(dirname "$0")/../../scripts/style.sh"
