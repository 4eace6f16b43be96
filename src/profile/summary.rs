//! A run's profiles as printed after its report (`versus sysbench … --profile`, `versus script`,
//! `versus ibench run --profile`): the server's CPU per transaction and the functions with the most
//! CPU of their own, and with waits the off-CPU time and the calls blocked in longest. Nothing here
//! compares; experiments compare profiles with intervals (`report::profile`).

use std::fmt::Write as _;

use super::{FunctionCost, Profile, Sampling};
use crate::error::{Error, Result};
use crate::present::fmt;
use crate::present::table::{Cell, Table, Tone};
use crate::present::writers::Writer;
use crate::present::writers::text::TextWriter;

/// Functions listed, by their own cost per transaction.
pub const TOP: usize = 15;

/// What a profiled run printed: its on-CPU profile, and its off-CPU one with `--profile-waits`.
#[derive(Debug, Clone, PartialEq)]
pub struct Profiles {
    /// Sampled CPU per stack.
    pub cpu: Profile,
    /// Off-CPU time per stack.
    pub waits: Option<Profile>,
}

impl Profiles {
    /// Stops `sampling`: its profiles over `transactions`, or the error (naming `--profile` or
    /// `--profile-waits`) that says why one that was asked for is missing.
    pub fn finish(sampling: Sampling, transactions: u64) -> Result<Profiles> {
        let (cpu, waits) = sampling.finish_all();
        let check = |p: Profile, flag: &str, what: &str| match &p.note {
            Some(why) => Err(Error::option(flag, format!("no {what} of the server: {why}"))),
            None if transactions == 0 => {
                Err(Error::option(flag, "nothing was measured to divide the server's time by"))
            }
            None => Ok(Profile { transactions, ..p }),
        };
        Ok(Profiles {
            cpu: check(cpu, "--profile", "profile")?,
            waits: waits.map(|w| check(w, "--profile-waits", "off-CPU profile")).transpose()?,
        })
    }
}

/// The functions with the most self CPU per transaction, most first, at most `n`.
fn top(p: &Profile, n: usize) -> Vec<(String, FunctionCost)> {
    let mut all: Vec<(String, FunctionCost)> = p.function_costs().into_iter().collect();
    all.sort_by(|a, b| b.1.self_us.total_cmp(&a.1.self_us).then_with(|| a.0.cmp(&b.0)));
    all.truncate(n);
    all
}

/// The profiles as text, after sysbench's report.
pub fn text(p: &Profiles) -> String {
    let cpu = &p.cpu;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Server profile ({} at {} Hz over the measured time, {} samples, {} transactions):",
        cpu.event, cpu.hz, cpu.samples, cpu.transactions
    );
    let total = cpu.total_us_per_txn().unwrap_or(0.0);
    let _ = writeln!(out, "    CPU per transaction:                 {} µs (sampled)", fmt::num(total));
    let _ = writeln!(
        out,
        "    samples in a named function:         {} (the rest is counted under its object file, e.g. [mariadbd])\n",
        fmt::percent(cpu.named_share())
    );
    if let Some(line) = super::hardware_counters_line() {
        let _ = writeln!(out, "    note: {line}\n");
    }
    top_table(&mut out, cpu, "CPU");
    if let Some(w) = &p.waits {
        let _ = writeln!(
            out,
            "\nServer waits ({} on every CPU over the measured time, {} switches of the server's threads):",
            w.event, w.samples
        );
        let total = w.total_us_per_txn().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "    off-CPU time per transaction:        {} µs (all of the server's threads)",
            fmt::num(total)
        );
        let _ = writeln!(
            out,
            "    each wait is counted under the call it blocked in; [preempted]: runnable, waiting for a CPU\n"
        );
        top_table(&mut out, w, "off-CPU time");
    }
    out
}

/// The `TOP` functions of `p` by their own cost per transaction, as a table of `what` µs.
fn top_table(out: &mut String, p: &Profile, what: &str) {
    let total = p.total_us_per_txn().unwrap_or(0.0);
    let mut t = Table::new(
        "server-profile",
        format!("The {TOP} functions with the most {what} of their own per transaction"),
        vec![
            ("function".into(), false),
            ("self µs/txn".into(), true),
            ("self share".into(), true),
            ("incl. µs/txn".into(), true),
        ],
    );
    for (name, c) in top(p, TOP) {
        let share = if total > 0.0 { fmt::percent(c.self_us / total) } else { "—".into() };
        t.rows.push(vec![
            Cell::plain(crate::present::svg::truncate(&name, 60)),
            Cell::plain(fmt::num(c.self_us)),
            Cell::toned(share, Tone::Muted),
            Cell::plain(fmt::num(c.total_us)),
        ]);
    }
    TextWriter { out, color: false }.table(&t);
}

/// The profiles in the JSON report: `server_profile`, and `server_waits` with `--profile-waits`.
pub fn json(p: &Profiles, doc: &mut serde_json::Value) {
    doc["server_profile"] = json_of(&p.cpu, "cpu_us_per_transaction");
    if let Some(w) = &p.waits {
        doc["server_waits"] = json_of(w, "off_cpu_us_per_transaction");
    }
}

/// One profile as JSON, its total per transaction under `per_txn`.
fn json_of(p: &Profile, per_txn: &str) -> serde_json::Value {
    let functions: Vec<serde_json::Value> = top(p, TOP)
        .into_iter()
        .map(|(name, c)| serde_json::json!({ "function": name, "self_us": c.self_us, "total_us": c.total_us }))
        .collect();
    let mut v = serde_json::json!({
        "event": p.event,
        "hz": p.hz,
        "samples": p.samples,
        "transactions": p.transactions,
        "named_share": p.named_share(),
        "functions": functions,
    });
    v[per_txn] = serde_json::json!(p.total_us_per_txn());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            event: "cpu-clock".into(),
            hz: 199,
            samples: 4,
            transactions: 2,
            stacks: vec![
                ("server;dispatch;JOIN::exec".into(), 6_000),
                ("server;dispatch".into(), 2_000),
                ("server;[mariadbd]".into(), 2_000),
            ],
            note: None,
        }
    }

    #[test]
    fn the_top_functions_are_ranked_by_self_cost_per_transaction() {
        let p = profile();
        let t = top(&p, 2);
        assert_eq!(t[0].0, "JOIN::exec");
        assert_eq!((t[0].1.self_us, t[0].1.total_us), (3.0, 3.0));
        assert_eq!(t.len(), 2);
        let text = text(&Profiles { cpu: p.clone(), waits: None });
        assert!(text.contains("CPU per transaction:                 5.00 µs"), "{text}");
        assert!(text.contains("80.0 %"), "named share: {text}");
        let mut j = serde_json::json!({});
        json(&Profiles { cpu: p.clone(), waits: Some(p.clone()) }, &mut j);
        assert_eq!(j["server_waits"]["off_cpu_us_per_transaction"], 5.0);
        let j = &j["server_profile"];
        assert_eq!(j["functions"][0]["function"], "JOIN::exec");
        assert_eq!(j["cpu_us_per_transaction"], 5.0);
    }
}
