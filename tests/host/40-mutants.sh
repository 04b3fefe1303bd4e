#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Mutation testing of module/core.c (tests/mutants/run, `make mutants`):
# every mutation of tests/mutants/core.list must be caught by the host
# unit and model tests.  One PASS/FAIL line per mutant; about 90 s.
exec "$(dirname "$0")/../mutants/run"
