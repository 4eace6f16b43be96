#!/usr/bin/env bash
# Renders a versus HTML report in headless Chromium at 1400 px width, as a reader would see it, and checks
# that it is self-contained, that every section of its table of contents is on the rendered page in the
# same order, that its tables and SVG charts are there, that no shown table scrolls horizontally, and
# that the page stays under a height limit.
#
#   scripts/check-html.sh REPORT.html [OUTDIR]
#
# Environment: VERSUS_SECTION_SHOTS=0 skips the per-section screenshots; VERSUS_MAX_HEIGHT (default 8000) is the page-height limit in CSS px at 1400 px width;
# VERSUS_MIN_TABLES (default 6) and VERSUS_MIN_CHARTS (default 3) the least tables and charts expected;
# VERSUS_REQUIRE_IDS (default: table-ratios table-efficiency table-stability, those of `versus report`) the
# element ids that must be on the rendered page, VERSUS_MIN_TOC (default 8) the least table-of-contents
# entries (the Insert Benchmark page of `versus ibench compare --format html`:
# VERSUS_REQUIRE_IDS="table-ibench-throughput table-ibench-relative" VERSUS_MIN_TOC=5);
# VERSUS_NO_INSTALL=1 fails instead of installing Debian's chromium when it is missing.
#
# Writes OUTDIR/screenshot.png (1400 px wide, the top of the page), OUTDIR/screenshot-full.png (the
# whole page), OUTDIR/section-ID.png (1400 × 1400 from the top of each section), OUTDIR/dom.html (the DOM after rendering) and OUTDIR/layout.txt (what was measured:
# page height and width, and the position of every section). Exit 0 when every check passes.
set -euo pipefail

report=${1:?usage: scripts/check-html.sh REPORT.html [OUTDIR]}
out=${2:-$(mktemp -d /tmp/versus-html-check.XXXXXX)}
[ -f "$report" ] || { echo "check-html: $report: no such file" >&2; exit 2; }
mkdir -p "$out"
report=$(realpath "$report")
out=$(realpath "$out")
width=1400
max_height=${VERSUS_MAX_HEIGHT:-8000}

if ! command -v chromium >/dev/null 2>&1; then
    if [ "${VERSUS_NO_INSTALL:-0}" = 1 ]; then
        echo "check-html: chromium is not installed (apt-get install -y chromium)" >&2
        exit 3
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

profile=$(mktemp -d /tmp/versus-chromium.XXXXXX)
probe_dir=$(mktemp -d /tmp/versus-html-probe.XXXXXX)
trap 'rm -rf "$profile" "$probe_dir"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile")

fail=0
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what" >&2; fail=1; fi
}

# The page as written: self-contained. An address ends at a quote, a space, `)`, `<` or `&` (an entity:
# an attribute's quotes inside a srcdoc are written `&quot;`).
check "no <script> element" bash -c "! grep -qi '<script' '$report'"
check "no external reference (only the SVG namespace URI)" \
    bash -c "! grep -oiE '(src|href)=\"(https?:)?//[^\"]*' '$report' | grep -q . && ! grep -oiE 'url\\((https?:)?//' '$report' | grep -q . && ! grep -oE 'https?://[^\" )<&]*' '$report' | grep -vx 'http://www.w3.org/2000/svg' | grep -q ."

# The page as rendered.
timeout 120 chromium "${flags[@]}" --virtual-time-budget=5000 --dump-dom "file://$report" >"$out/dom.html" 2>"$out/chromium.log"
tables=$(grep -o '<table class="data"' "$out/dom.html" | wc -l)
charts=$(grep -o '<svg[^>]*class="chart"' "$out/dom.html" | wc -l)
lines=$(grep -oE '<(polyline|circle|rect|path) ' "$out/dom.html" | wc -l)
for id in ${VERSUS_REQUIRE_IDS:-table-ratios table-efficiency table-stability}; do
    check "rendered DOM has #$id" grep -q "id=\"$id\"" "$out/dom.html"
done
check "rendered DOM has $tables tables (>= ${VERSUS_MIN_TABLES:-6})" test "$tables" -ge "${VERSUS_MIN_TABLES:-6}"
check "rendered DOM has $charts SVG charts (>= ${VERSUS_MIN_CHARTS:-3}) with $lines marks" \
    bash -c "[ $charts -ge ${VERSUS_MIN_CHARTS:-3} ] && [ $lines -ge 10 ]"
check "rendered DOM has the experiment definition (or the options compared)" grep -q '<pre>' "$out/dom.html"

# The layout at 1400 px: a probe page (outside the report, which has no scripts) loads the report in a
# 1400-px frame and writes what it measures into its own DOM, which Chromium dumps.
cat >"$probe_dir/probe.html" <<EOF
<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="f" src="file://$report" style="width:${width}px;height:900px;border:0"></iframe>
<pre id="out">not measured</pre>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, lines = [];
  var root = d.documentElement;
  lines.push('height ' + root.scrollHeight);
  lines.push('width ' + root.scrollWidth);
  var links = d.querySelectorAll('nav a[href^="#"]');
  lines.push('toc ' + links.length);
  links.forEach(function (a) {
    var id = a.getAttribute('href').slice(1), el = d.getElementById(id);
    var top = el ? Math.round(el.getBoundingClientRect().top + d.defaultView.scrollY) : -1;
    var shown = el && el.getBoundingClientRect().height > 0 ? 1 : 0;
    lines.push('section ' + top + ' ' + shown + ' ' + id + ' ' + a.textContent);
  });
  d.querySelectorAll('h2').forEach(function (h) { if (!h.id) lines.push('untitled ' + h.textContent); });
  d.querySelectorAll('svg.chart').forEach(function (s) {
    if (s.getBoundingClientRect().width > d.querySelector('main').clientWidth + 1) lines.push('wide-chart ' + s.getAttribute('aria-label'));
  });
  d.querySelectorAll('table.data').forEach(function (t) {
    var box = t.parentElement, w = t.getBoundingClientRect().width;
    if (w > 0 && (t.scrollWidth > box.clientWidth + 1 || w > d.querySelector('main').clientWidth + 1))
      lines.push('wide-table ' + t.id + ' ' + t.scrollWidth + ' px in ' + box.clientWidth + ' px');
  });
  document.getElementById('out').textContent = lines.join('\n');
});
</script></body></html>
EOF
timeout 120 chromium "${flags[@]}" --allow-file-access-from-files --virtual-time-budget=8000 \
    --window-size=${width},900 --dump-dom "file://$probe_dir/probe.html" 2>>"$out/chromium.log" \
    | sed -n '/<pre id="out">/,/<\/pre>/p' | sed -e 's/<pre id="out">//' -e 's/<\/pre>.*//' >"$out/layout.txt"
height=$(awk '$1 == "height" { print $2 }' "$out/layout.txt")
page_width=$(awk '$1 == "width" { print $2 }' "$out/layout.txt")
toc=$(awk '$1 == "toc" { print $2 }' "$out/layout.txt")
check "layout measured at ${width} px (see $out/layout.txt)" test -n "$height"
height=${height:-0}
check "page height ${height} px at ${width} px wide (< ${max_height})" test "$height" -lt "$max_height"
check "no horizontal overflow (page ${page_width:-?} px wide)" test "${page_width:-99999}" -le "$width"
check "table of contents has ${toc:-0} entries (>= ${VERSUS_MIN_TOC:-8})" test "${toc:-0}" -ge "${VERSUS_MIN_TOC:-8}"
check "every section in the table of contents is on the page" \
    bash -c "! awk '\$1 == \"section\" && (\$2 < 0 || \$3 == 0)' '$out/layout.txt' | grep -q ."
check "the table of contents is in page order" \
    bash -c "awk '\$1 == \"section\" { print \$2 }' '$out/layout.txt' | sort -n -c"
check "every section has an anchor" bash -c "! grep -q '^untitled ' '$out/layout.txt'"
check "no chart wider than the page" bash -c "! grep -q '^wide-chart ' '$out/layout.txt'"
check "no table scrolls horizontally (every shown table fits the page; see wide-table lines in $out/layout.txt)" \
    bash -c "! grep -q '^wide-table ' '$out/layout.txt'"

# Screenshots at 1400 px: the top of the page, and the whole page.
full=$(( height > 0 ? height : 9000 ))
full=$(( full > 16000 ? 16000 : full ))
timeout 120 chromium "${flags[@]}" --window-size=${width},1800 --screenshot="$out/screenshot.png" "file://$report" \
    >>"$out/chromium.log" 2>&1
timeout 120 chromium "${flags[@]}" --window-size=${width},${full} --screenshot="$out/screenshot-full.png" \
    "file://$report" >>"$out/chromium.log" 2>&1
# One screenshot per section (from its top, 1400 × 1400), cut from the whole page, for reviewing
# (VERSUS_SECTION_SHOTS=0 skips them).
[ "${VERSUS_SECTION_SHOTS:-1}" = 0 ] || awk '$1 == "section" && $2 >= 0 { print $2, $4 }' "$out/layout.txt" | while read -r top id; do
    printf '<!DOCTYPE html><html><body style="margin:0"><div style="width:%spx;height:1400px;overflow:hidden">
<img src="file://%s" style="display:block;margin-top:-%spx"></div></body></html>' \
        "$width" "$out/screenshot-full.png" "$top" >"$probe_dir/crop.html"
    timeout 120 chromium "${flags[@]}" --allow-file-access-from-files --window-size=${width},1400 \
        --screenshot="$out/section-$id.png" "file://$probe_dir/crop.html" >>"$out/chromium.log" 2>&1 || true
done
png_width() { python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print(struct.unpack('>I', d[16:20])[0])" "$1"; }
check "screenshot is ${width} px wide" test "$(png_width "$out/screenshot.png")" -eq "$width"
check "screenshot is not blank" test "$(stat -c %s "$out/screenshot.png")" -gt 20000

echo "check-html: screenshots, DOM and layout in $out"
exit $fail
