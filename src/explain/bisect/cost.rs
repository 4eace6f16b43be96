//! What a search costs: the worst-case runs of [`super::search`] (see the module docs).

use super::model::SearchConfig;

/// Worst-case runs of a search over `n` candidates with `k` findings (see the module docs): the
/// findings split over the rounds in the costliest way, every probe of a search step at its most
/// repetitions (`1 + extra_rounds` times the step's, or the sequential design's maximum), and the
/// confirmation.
pub fn estimate_runs(n: usize, k: usize, cfg: &SearchConfig) -> usize {
    if n == 0 {
        return 0;
    }
    let k = k.clamp(1, n);
    let confirm = if cfg.confirm { confirm_probes(k) } else { 0 };
    let per_probe = match &cfg.sequential {
        Some(s) => s.max_runs_per_probe(),
        None => (1 + cfg.extra_rounds) * cfg.runs_per_probe,
    };
    per_probe * rounds_probes(n, k, cfg.singles_max) + cfg.runs_per_probe * confirm
}

/// Most probes of the rounds that find `k` findings among `n` candidates, and the round after them.
fn rounds_probes(n: usize, k: usize, singles_max: usize) -> usize {
    if n == 0 {
        return 0;
    }
    if k == 0 {
        return 3;
    }
    (1..=k).map(|j| 3 + group_probes(n, j, singles_max) + rounds_probes(n - j, k - j, singles_max)).max().unwrap_or(3)
}

/// Most probes needed to resolve a group of `n` holding `k` findings.
fn group_probes(n: usize, k: usize, singles_max: usize) -> usize {
    if k == 0 || n == 1 {
        return 0;
    }
    if n <= singles_max.max(2) {
        return n + 1;
    }
    let (n1, n2) = (n / 2, n - n / 2);
    (0..=k.min(n1))
        .filter(|k1| k - k1 <= n2)
        .map(|k1| 3 + group_probes(n1, k1, singles_max) + group_probes(n2, k - k1, singles_max))
        .max()
        .unwrap_or(3)
}

/// Probes of the confirmation of `k` findings: B, A, each alone, and the cumulative sets of two or more.
pub(super) fn confirm_probes(k: usize) -> usize {
    if k == 0 { 0 } else { 2 + k + k.saturating_sub(1) }
}
