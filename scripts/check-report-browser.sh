#!/bin/sh
# check-report-browser.sh: render a servesim HTML report in headless Chromium and check that the
# screenshot is a non-blank PNG (report.TestReportInChromium does the check).
#
# Needs chromium on PATH. Debian/Ubuntu: sudo apt-get install -y chromium  (binary /usr/bin/chromium).
# Chromium runs with --headless --no-sandbox --disable-gpu --no-first-run
# --disable-background-networking --disable-component-update --disable-sync and a fresh
# --user-data-dir, so it needs no network, display or profile.
#
# Usage:
#   scripts/check-report-browser.sh                 # build the seed report with `servesim report`, check it
#   scripts/check-report-browser.sh report.html     # check an existing report
#   SCREENSHOT=shot.png scripts/check-report-browser.sh   # keep the screenshot
set -eu
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
	echo "check-report-browser: chromium not found; install it: sudo apt-get install -y chromium" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ $# -ge 1 ]; then
	report=$1
	[ -f "$report" ] || { echo "check-report-browser: $report: no such file" >&2; exit 2; }
else
	report=$tmp/report.html
	go run ./cmd/servesim report --out "$report"
fi
case $report in
/*) ;;
*) report=$(pwd)/$report ;;
esac

SERVESIM_REPORT=$report SERVESIM_SCREENSHOT=${SCREENSHOT:-} \
	go test ./report -run '^TestReportInChromium$' -count=1 -v
