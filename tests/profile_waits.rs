//! Off-CPU waits of real runs (`profile_waits = true`) on the distribution's MariaDB. Runs alone
//! (scripts/run-tests.sh): its A/A pair must show no wait beyond the noise, and another test binary's
//! load during one side's runs changes the server's waits for real (once, an A/A gap of 1.8x).

mod common;

use common::home::{Home, ok};

/// `profile_waits = true`: every run keeps its server threads' off-CPU time per stack beside its CPU
/// profile. Durable commits (innodb_flush_log_at_trx_commit = 1) against relaxed ones (= 0) on an
/// update workload: the comparison of waits finds the commit's fdatasync, with an interval that
/// excludes no change; the same durable settings twice (an A/A pair) show no wait of the server's own
/// beyond the noise; and every format shows the section.
#[test]
fn waits_show_the_fsync_of_durable_commits() {
    let home = Home::on_disk("versus-waits-");
    let file = home.write(
        "waits.toml",
        r#"
name = "waits"
builds = ["system"]
threads = [2]
duration = "3s"
warmup = "1s"
repetitions = 2
profile = true
profile_waits = true
[[configs]]
name = "sync"
set = { innodb_flush_log_at_trx_commit = 1 }
[[configs]]
name = "nosync"
set = { innodb_flush_log_at_trx_commit = 0 }
[[configs]]
name = "again"
set = { innodb_flush_log_at_trx_commit = 1 }
[[workloads]]
test = "oltp_update_index"
options = { tables = 1, table-size = 2000 }
"#,
    );
    ok(home.output(&["run", file.to_str().unwrap()]), "the experiment with waits");
    let fsync_us = fdatasync_median_us(&home.path().join("fsync-probe"));
    let store = home.store();
    let e = store.latest_experiment_named("waits").unwrap().unwrap();
    // fdatasync's off-CPU µs per transaction in each run, for the message of a failure below.
    let mut in_fsync = Vec::new();
    for r in store.runs(e.id).unwrap() {
        let w = store.waits(r.id).unwrap().unwrap_or_else(|| panic!("run {} has no off-CPU profile", r.id));
        assert!(w.note.is_none(), "run {}: {:?}", r.id, w.note);
        assert!(w.samples > 1000, "run {}: {} switches", r.id, w.samples);
        let d = store.run(r.id).unwrap().unwrap();
        assert_eq!(w.transactions, d.run.summary.as_ref().unwrap().events);
        assert!(store.profile(r.id).unwrap().is_some_and(|p| p.note.is_none()), "run {}: the CPU profile too", r.id);
        let us: f64 = w.function_costs().iter().filter(|(f, _)| f.contains("fdatasync")).map(|(_, c)| c.total_us).sum();
        in_fsync.push(format!("{}: {us:.0}", r.cell.target));
    }

    let doc = home.report_json(&["report", "waits", "--baseline", "system/sync", "--format", "json"]);
    let sections = doc["profiles"].as_array().unwrap();
    assert_eq!(sections.len(), 2, "one CPU and one waits section");
    assert!(sections[0].get("kind").is_none() && sections[1]["kind"] == "waits", "{:?}", sections[1]["kind"]);
    let sides: Vec<&str> = doc["sides"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    let waits = |label: &str| {
        let i = sides.iter().position(|s| *s == label).unwrap();
        sections[1]["comparisons"].as_array().unwrap().iter().find(|c| c[0] == i).map(|c| c[1].clone()).unwrap()
    };
    // An A/A pair: the same settings twice. No wait of the server's own differs beyond the noise. The
    // time a connection's thread sleeps in poll for its client's next statement is the client's pace,
    // not the server's cost, and it did differ between identical runs (60 against 330 µs per
    // transaction, once, with nothing else running): those rows are allowed here.
    let aa = waits("system/again");
    assert!(aa["tested"].as_u64().unwrap() > 100, "{aa}");
    let own: Vec<&str> = aa["self_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .filter(|f| !f.contains("poll"))
        .collect();
    assert!(own.is_empty(), "the A/A pair has the server's own waits beyond the noise: {own:?} in {aa}");
    let d = &waits("system/nosync");
    let rows = d["inclusive_rows"].as_array().unwrap();
    let fsync = rows.iter().find(|r| r["function"].as_str().unwrap().contains("fdatasync"));
    if let Some(fsync) = fsync {
        assert!(fsync["high_us"].as_f64().unwrap() < 0.0, "relaxed commits wait less in fdatasync: {fsync}");
    } else if fsync_us >= FSYNC_WAITS_US {
        panic!(
            "no fdatasync among the waits that differ, on storage where one takes {fsync_us:.0} µs; \
             fdatasync µs per transaction by run: {in_fsync:?}; rows: {rows:?}"
        );
    } else {
        // Storage that acknowledges a flush without waiting (a write-back cache, tmpfs) gives durable
        // commits nothing to wait for: the part above has nothing to find there.
        eprintln!("fdatasync takes {fsync_us:.0} µs here: not a wait to find ({in_fsync:?})");
    }

    let text = ok(home.output(&["compare", "waits", "--profile", "--color", "never"]), "compare --profile");
    assert!(text.contains("Where the server waited, off the CPU") && text.contains("off-CPU time"), "{text}");
    let md = ok(home.output(&["report", "waits", "--format", "markdown"]), "report markdown");
    assert!(md.contains("Off-CPU time per transaction with what it calls"), "{md}");
    let html = ok(home.output(&["report", "waits", "--format", "html"]), "report html");
    assert!(html.contains("Off-CPU flame graph"), "no off-CPU flame graph in the HTML");
}

/// Below this median, a fdatasync on the tests' storage does not wait for a device.
const FSYNC_WAITS_US: f64 = 100.0;

/// The median time of a 512-byte append and fdatasync on a new file at `path` (removed after).
fn fdatasync_median_us(path: &std::path::Path) -> f64 {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let mut us: Vec<f64> = (0..101)
        .map(|_| {
            f.write_all(&[b'x'; 512]).unwrap();
            let t = std::time::Instant::now();
            f.sync_data().unwrap();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    std::fs::remove_file(path).unwrap();
    us.sort_by(f64::total_cmp);
    us[50]
}
