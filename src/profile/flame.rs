//! Flame graphs of per-transaction profiles, drawn by inferno: a plain one per target and a
//! differential one per candidate (frame widths from the candidate, red where a frame's own CPU per
//! transaction grew against the baseline, blue where it shrank).
//!
//! Weights are picoseconds per transaction (integers for inferno), shown as µs per transaction through
//! inferno's `factor`, so every graph of a report has the same unit.

use std::collections::BTreeMap;

use inferno::flamegraph::{self, Options, Palette, color::BasicPalette};

use super::Profile;

/// Width in pixels of the graph with the largest CPU per transaction; the others are narrower in
/// proportion, so the widths of two plain graphs compare as their totals do.
pub const FULL_WIDTH: usize = 1200;

/// The mean per-transaction weight of every stack over `runs`, in picoseconds per transaction
/// (runs without transactions are left out).
pub fn per_transaction(runs: &[&Profile]) -> Vec<(String, u64)> {
    let used: Vec<&&Profile> = runs.iter().filter(|p| p.transactions > 0).collect();
    let mut sum: BTreeMap<&str, f64> = BTreeMap::new();
    for p in &used {
        for (stack, ns) in &p.stacks {
            *sum.entry(stack.as_str()).or_default() += *ns as f64 * 1000.0 / p.transactions as f64;
        }
    }
    let n = used.len().max(1) as f64;
    sum.into_iter().map(|(s, ps)| (s.to_string(), (ps / n).round() as u64)).filter(|(_, w)| *w > 0).collect()
}

fn options(title: &str, width: usize) -> Options<'static> {
    let mut o = Options::default();
    o.title = title.to_string();
    o.count_name = "µs/txn".into();
    o.factor = 1e-6;
    o.image_width = Some(width.max(200));
    o.colors = Palette::Basic(BasicPalette::Hot);
    o.deterministic = true;
    o.hash = true;
    o.min_width = 0.2;
    o
}

/// A plain flame graph (SVG) of `stacks` (picoseconds per transaction), `width` pixels wide.
pub fn plain(title: &str, stacks: &[(String, u64)], width: usize) -> std::result::Result<String, String> {
    let lines: Vec<String> = stacks.iter().map(|(s, w)| format!("{s} {w}")).collect();
    draw(&mut options(title, width), &lines)
}

/// A differential flame graph (SVG): widths from `candidate`, colours from its difference with
/// `baseline` (both in picoseconds per transaction, not rescaled).
pub fn differential(
    title: &str,
    baseline: &[(String, u64)],
    candidate: &[(String, u64)],
) -> std::result::Result<String, String> {
    let mut both: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (s, w) in baseline {
        let e = both.entry(s.as_str()).or_default();
        e.0 = e.0.saturating_add(*w);
    }
    for (s, w) in candidate {
        let e = both.entry(s.as_str()).or_default();
        e.1 = e.1.saturating_add(*w);
    }
    let lines: Vec<String> = both.iter().map(|(s, (b, c))| format!("{s} {b} {c}")).collect();
    let mut o = options(title, FULL_WIDTH);
    o.subtitle = Some("width: the candidate's CPU per transaction; red: more than the baseline, blue: less".into());
    draw(&mut o, &lines)
}

fn draw(o: &mut Options<'_>, lines: &[String]) -> std::result::Result<String, String> {
    if lines.is_empty() {
        return Err("no samples to draw".into());
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(o, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| format!("the flame graph could not be drawn: {e}"))?;
    let svg = String::from_utf8(svg).map_err(|e| format!("the flame graph is not UTF-8: {e}"))?;
    Ok(self_contained(&svg))
}

/// The SVG namespace, the one address a self-contained page may name.
const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// inferno's SVG as a page of versus embeds it: without the XML declaration and DTD (an address a
/// reader could fetch), comments, the unused xlink namespace, and with the addresses its script
/// mentions in comments and messages written without their scheme, so that the page names no address
/// but the SVG namespace.
fn self_contained(svg: &str) -> String {
    let mut s = svg[svg.find("<svg").unwrap_or(0)..].to_string();
    while let (Some(a), Some(b)) = (s.find("<!--"), s.find("-->")) {
        if b < a {
            break;
        }
        s.replace_range(a..b + 3, "");
    }
    if !s.contains("xlink:href") {
        s = s.replace(" xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find("http") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let scheme =
            ["https://", "http://"].into_iter().find(|p| tail.starts_with(p) && !tail.starts_with(SVG_NAMESPACE));
        match scheme {
            Some(p) => rest = &tail[p.len()..],
            None => {
                out.push_str("http");
                rest = &tail[4..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::profile;

    #[test]
    fn per_transaction_weights_average_the_runs() {
        let a = profile(&[("m;a", 2_000), ("m;b", 1_000)], 2);
        let b = profile(&[("m;a", 4_000)], 1);
        let w = per_transaction(&[&a, &b]);
        // m;a: (1000 ns + 4000 ns) / 2 per txn = 2500 ns = 2_500_000 ps; m;b: 500 ns / 2 = 250_000 ps.
        assert_eq!(w, vec![("m;a".to_string(), 2_500_000), ("m;b".to_string(), 250_000)]);
    }

    #[test]
    fn graphs_are_svg_with_the_per_transaction_unit() {
        let base = vec![("m;a".to_string(), 2_000_000), ("m;b".to_string(), 1_000_000)];
        let cand = vec![("m;a".to_string(), 3_000_000), ("m;b".to_string(), 1_000_000)];
        let p = plain("base", &base, 600).unwrap();
        assert!(p.contains("<svg") && p.contains("µs/txn"), "{p}");
        let d = differential("diff", &base, &cand).unwrap();
        assert!(d.contains("<svg") && d.contains("red: more"), "{d}");
        // Self-contained: no address but the SVG namespace (scripts/check-html.sh checks the same).
        for g in [&p, &d] {
            assert!(g.starts_with("<svg") && !g.contains("<!--"), "{g}");
            let addresses = g.matches("http://").count() + g.matches("https://").count();
            assert_eq!(addresses, g.matches(SVG_NAMESPACE).count(), "{g}");
        }
        assert!(plain("none", &[], 600).is_err());
    }
}
