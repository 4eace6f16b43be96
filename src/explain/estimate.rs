//! The whole search's estimated time, said once before it starts and by `--dry-run`.

use super::runner::ExplainReport;

impl ExplainReport {
    /// The one line on the whole search's time, printed before its first step and by `--dry-run`: the worst
    /// case for up to 3 findings (as many as there are candidates), within `--max-runs`, and the data
    /// preparations, from the same per-run and per-preparation estimates as each step's.
    pub fn total_estimate(&self) -> String {
        let r = self;
        let k = r.candidates.len().clamp(1, 3);
        let runs = r.estimate_runs[k - 1].min(r.max_runs);
        let preparations = r.base_preparations + r.extra_preparations;
        let seconds = runs as u64 * r.seconds_per_run + preparations as u64 * r.seconds_per_preparation;
        format!(
            "about {} min in all: at most {runs} runs of about {} s (the worst case for {k} finding(s), within \
             --max-runs {}) and up to {preparations} data preparation(s) of about {} s",
            seconds.div_ceil(60),
            r.seconds_per_run,
            r.max_runs,
            r.seconds_per_preparation
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report frame with `n` candidates, 10-s runs and 90-s preparations.
    fn frame(n: usize, max_runs: usize, extra_preparations: usize) -> ExplainReport {
        let candidates: Vec<crate::explain::bisect::Suspect> =
            (0..n).map(|i| crate::explain::bisect::Suspect::new(format!("v{i}"), "1", "2")).collect();
        serde_json::from_value(serde_json::json!({
            "a": "A", "b": "B", "versions": [null, null], "workload": "w", "threads": [1], "duration_s": 1,
            "repetitions": 2, "metric": "tps", "higher_is_better": true, "confidence": 0.95,
            "candidates": candidates, "skipped": [], "max_runs": max_runs, "estimate_runs": [30, 60, 90],
            "seconds_per_run": 10, "seconds_per_preparation": 90, "base_preparations": 1,
            "extra_preparations": extra_preparations, "outcome": null, "experiments": []
        }))
        .unwrap()
    }

    #[test]
    fn the_total_is_the_worst_case_within_the_budget_and_the_preparations() {
        // 4 candidates: the worst case for 3 findings, 90 runs of 10 s, and 1 + 2 preparations of 90 s.
        let t = frame(4, 200, 2).total_estimate();
        assert!(t.starts_with("about 20 min in all: at most 90 runs of about 10 s"), "{t}");
        assert!(t.contains("3 finding(s)") && t.contains("up to 3 data preparation(s)"), "{t}");
        // The budget caps the runs: 40 runs and one preparation are 490 s, about 9 min.
        let t = frame(4, 40, 0).total_estimate();
        assert!(t.starts_with("about 9 min in all: at most 40 runs"), "{t}");
        // One candidate can be at most one finding.
        let t = frame(1, 200, 0).total_estimate();
        assert!(t.starts_with("about 7 min in all: at most 30 runs") && t.contains("1 finding(s)"), "{t}");
    }
}
