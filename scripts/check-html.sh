#!/usr/bin/env bash
# Renders a versus HTML report in headless Chromium at 1280 px width, as a reader would see it, and checks
# that it is self-contained and that its tables and SVG charts are in the rendered page.
#
#   scripts/check-html.sh REPORT.html [OUTDIR]
#
# Writes OUTDIR/screenshot.png (1280 px wide, the top of the page), OUTDIR/screenshot-full.png (the
# whole page) and OUTDIR/dom.html (the DOM after rendering). Installs Debian's chromium when missing
# (set VERSUS_NO_INSTALL=1 to fail instead). Exit 0 when every check passes.
set -euo pipefail

report=${1:?usage: scripts/check-html.sh REPORT.html [OUTDIR]}
out=${2:-$(mktemp -d /tmp/versus-html-check.XXXXXX)}
[ -f "$report" ] || { echo "check-html: $report: no such file" >&2; exit 2; }
mkdir -p "$out"
report=$(realpath "$report")

if ! command -v chromium >/dev/null 2>&1; then
    if [ "${VERSUS_NO_INSTALL:-0}" = 1 ]; then
        echo "check-html: chromium is not installed (apt-get install -y chromium)" >&2
        exit 3
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

profile=$(mktemp -d /tmp/versus-chromium.XXXXXX)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile")

fail=0
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what" >&2; fail=1; fi
}

# The page as written: self-contained.
check "no <script> element" bash -c "! grep -qi '<script' '$report'"
check "no external reference (only the SVG namespace URI)" \
    bash -c "! grep -oiE '(src|href)=\"(https?:)?//[^\"]*' '$report' | grep -q . && ! grep -oiE 'url\\((https?:)?//' '$report' | grep -q . && ! grep -oE 'https?://[^\" )<]*' '$report' | grep -vx 'http://www.w3.org/2000/svg' | grep -q ."

# The page as rendered.
timeout 120 chromium "${flags[@]}" --virtual-time-budget=5000 --dump-dom "file://$report" >"$out/dom.html" 2>"$out/chromium.log"
tables=$(grep -o '<table class="data"' "$out/dom.html" | wc -l)
charts=$(grep -o '<svg[^>]*class="chart"' "$out/dom.html" | wc -l)
lines=$(grep -oE '<(polyline|circle|rect) ' "$out/dom.html" | wc -l)
check "rendered DOM has the ratio table" grep -q 'id="table-ratios"' "$out/dom.html"
check "rendered DOM has the efficiency and stability tables" \
    bash -c "grep -q 'id=\"table-efficiency\"' '$out/dom.html' && grep -q 'id=\"table-stability\"' '$out/dom.html'"
check "rendered DOM has $tables tables (>= 6)" test "$tables" -ge 6
check "rendered DOM has $charts SVG charts (>= 3) with $lines marks" bash -c "[ $charts -ge 3 ] && [ $lines -ge 10 ]"
check "rendered DOM has the experiment definition" grep -q '<pre>' "$out/dom.html"

# Screenshots at 1280 px: the top of the page, and the whole page (height from a generous window).
timeout 120 chromium "${flags[@]}" --window-size=1280,2000 --screenshot="$out/screenshot.png" "file://$report" \
    >>"$out/chromium.log" 2>&1
timeout 120 chromium "${flags[@]}" --window-size=1280,9000 --screenshot="$out/screenshot-full.png" "file://$report" \
    >>"$out/chromium.log" 2>&1
png_width() { python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print(struct.unpack('>I', d[16:20])[0])" "$1"; }
check "screenshot is 1280 px wide" test "$(png_width "$out/screenshot.png")" -eq 1280
check "screenshot is not blank" test "$(stat -c %s "$out/screenshot.png")" -gt 20000

echo "check-html: screenshots and DOM in $out"
exit $fail
