#!/usr/bin/env bash
# Regenerate the example page of the recorded runs and its screenshot (README, docs/node-results.md).
# The page: `sessionspec report` of the recorded reports (tests/conformance/test_html_report.py checks it
# is fresh). The screenshot: Debian's Chromium, headless, with a fresh profile.
# With --record, first re-record the three runs (slower; the Node run needs node and npm):
#   1. the reference at the pinned revision 2f74ac98ba;
#   2. the reference at the published revision b150a551b8;
#   3. the Node adapter on @deepseek-ai/dsh-session 0.1.1-rc.2 at the revision it declares (b150a551b8),
#      with its expectation file (known failures and known fuzz differences show as such) and the
#      CI-quick fuzz profile (fixed seeds).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=(docs/results/1-reference-2f74ac98ba.jsonl docs/results/2-reference-b150a551b8.jsonl
      docs/results/3-node-0.1.1-rc.2.jsonl)
if [[ "${1:-}" == "--record" ]]; then
    npm ci --prefix conformance/adapters/node-dsh-session --no-audit --no-fund >/dev/null
    sessionspec conformance --revision 2f74ac98ba --report "${runs[0]}" --force >/dev/null
    sessionspec conformance --revision b150a551b8 --report "${runs[1]}" --force >/dev/null
    sessionspec conformance --impl 'node conformance/adapters/node-dsh-session/adapter.mjs' \
        --expect conformance/adapters/node-dsh-session/expectations.json --fuzz quick -j 2 \
        --report "${runs[2]}" --force >/dev/null
fi
sessionspec report "${runs[@]}" --html docs/results/conformance.html --force
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1200,960 \
    --screenshot=docs/results/conformance.png "file://$PWD/docs/results/conformance.html" 2>/dev/null
echo "wrote docs/results/conformance.html and docs/results/conformance.png"
