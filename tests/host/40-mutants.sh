#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Mutation testing of module/core.c and module/place.c (tests/mutants/run,
# `make mutants`): every mutation of tests/mutants/core.list and
# place.list must be caught by the host unit and model tests.  One
# PASS/FAIL line per mutant; 62 mutants, about 130 s on 2 idle cores
# (2026-12-05), nearly all of it compiling the tests once per mutant.
# In `make stress` and `make mutants`, not `make check`: it tests the
# tests, and make check's 20 minutes cannot hold it beside the guests.
# stress-only
exec "$(dirname "$0")/../mutants/run"
