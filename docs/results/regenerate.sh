#!/usr/bin/env bash
# Regenerate the example page of the recorded runs and its screenshot (README, docs/node-results.md).
# The page: `sessionspec report` of the recorded reports (tests/conformance/test_html_report.py checks it
# is fresh). The screenshot: Debian's Chromium, headless, with a fresh profile.
# Re-recording the runs themselves is a separate, slower step (see docs/node-results.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
sessionspec report docs/results/1-reference.jsonl docs/results/2-node-known-failures.jsonl \
    docs/results/3-node-fuzz.jsonl --html docs/results/conformance.html
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1200,960 \
    --screenshot=docs/results/conformance.png "file://$PWD/docs/results/conformance.html" 2>/dev/null
echo "wrote docs/results/conformance.html and docs/results/conformance.png"
