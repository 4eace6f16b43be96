//! Experiments end to end, as a user runs them: `versus run` on real sandboxes, the stored results,
//! kill -9 of versus and --resume, a server killed mid-run, and no server left behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use versus::store::{Status, Store};

mod common;

use common::experiment::sync_nosync;
use common::home::Home as Env;
use common::processes::{kill9, processes_mentioning};

impl Env {
    /// Server processes started from this home (their --defaults-file lies under it).
    fn servers(&self) -> Vec<(u32, String)> {
        servers_under(self.home.path())
    }

    fn assert_no_servers(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.servers().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(self.servers(), vec![], "servers left running");
    }
}

fn servers_under(home: &Path) -> Vec<(u32, String)> {
    let needle = format!("--defaults-file={}", home.display());
    processes_mentioning(&needle).into_iter().filter(|(pid, _)| versus::server::process::is_alive(*pid)).collect()
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn finish(mut child: Child) -> (i32, String) {
    let status = child.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    (status.code().unwrap_or(-1), err)
}

/// Two configs at two thread counts, twice.
fn matrix() -> String {
    sync_nosync("matrix", "threads = [1, 2]\nduration = \"2s\"\nwarmup = \"1s\"\nrepetitions = 2\n", 2000)
}

#[test]
fn a_small_matrix_is_run_and_everything_is_stored() {
    let env = Env::new("versus-exp-");
    let file = env.file("exp", &matrix());
    let dry = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert!(
        plan.contains("2 target(s) × 1 workload(s) × 2 thread count(s) → 4 cells × 2 repetition(s) = 8 runs"),
        "{plan}"
    );
    assert!(env.store_is_absent(), "a dry run stores nothing");

    let out = env.versus(&["run", file.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = env.store();
    let exps = store.list_experiments().unwrap();
    assert_eq!(exps.len(), 1);
    assert_eq!((exps[0].runs, exps[0].done, exps[0].failed), (8, 8, 0));
    let e = store.experiment(exps[0].id).unwrap().unwrap();
    assert_eq!(e.status, Status::Done);
    assert!(e.host.logical_cpus.unwrap_or(0) >= 1, "host facts are stored");
    let runs = store.runs(e.id).unwrap();
    let mut cells: Vec<(String, u32, u32)> =
        runs.iter().map(|r| (r.cell.target.clone(), r.cell.threads, r.repetition)).collect();
    cells.sort();
    cells.dedup();
    assert_eq!(cells.len(), 8, "every cell × repetition exactly once");
    for r in &runs {
        let d = store.run(r.id).unwrap().unwrap();
        let s = d.run.summary.as_ref().unwrap();
        assert!(s.events > 0 && s.tps > 0.0, "run {} measured nothing", r.id);
        assert!(!d.intervals.is_empty(), "1-s intervals are stored");
        assert!(d.intervals.iter().all(|i| i.t_s > 1.5), "no warm-up interval is stored: {:?}", d.intervals);
        assert!(d.variables.iter().any(|(k, _)| k == "innodb_flush_log_at_trx_commit"));
        let flush = d.variables.iter().find(|(k, _)| k == "innodb_flush_log_at_trx_commit").unwrap().1.clone();
        assert_eq!(flush, if r.cell.target.ends_with("/sync") { "1" } else { "0" });
        assert!(d.status_deltas.iter().any(|(k, v)| k == "Com_select" && *v > 0), "status deltas are stored");
        assert!(d.efficiency.server_cpu_user_us.unwrap_or(0.0) > 0.0, "server CPU per txn: {:?}", d.efficiency);
        assert!(d.efficiency.client_cpu_us.unwrap_or(0.0) > 0.0, "client CPU per txn: {:?}", d.efficiency);
        let cmd = d.command.unwrap().to_string();
        assert!(cmd.contains("--mysql-password=<redacted>") && !cmd.contains("sbpass"), "{cmd}");
    }
    let show = env.versus(&["show", &runs[0].id.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("SQL statistics:") && text.contains("95th percentile:"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("command: versus sysbench oltp_")), "{text}");
    env.assert_no_servers();
    assert!(!env.home.path().join("experiments/matrix").exists(), "the prepared data is removed when done");
}

impl Env {
    fn store_is_absent(&self) -> bool {
        !self.home.path().join("results.db").exists()
    }
}

const RESUMABLE: &str = r#"
name = "resumable"
builds = ["system"]
threads = [1, 2]
duration = "2s"
repetitions = 2
prewarm = false
[[workloads]]
test = "oltp_read_only"
options = { tables = 1, table-size = 2000 }
"#;

#[test]
fn kill_9_of_versus_then_resume_runs_exactly_what_is_missing() {
    let env = Env::new("versus-exp-");
    let file = env.file("exp", RESUMABLE);
    let child = env.versus(&["run", file.to_str().unwrap()]).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let db = env.home.path().join("results.db");
    wait_until("the first finished run", Duration::from_secs(120), || {
        db.exists()
            && Store::open(&db)
                .is_ok_and(|s| s.list_experiments().is_ok_and(|e| e.first().is_some_and(|e| e.done >= 1)))
    });
    wait_until("a run in flight", Duration::from_secs(60), || !env.servers().is_empty());
    kill9(pid);
    let (code, _) = finish(child);
    assert_eq!(code, -1, "killed by a signal");
    env.assert_no_servers();

    let before = env.store().runs(1).unwrap();
    let done_before: Vec<i64> = before.iter().filter(|r| r.status == Status::Done).map(|r| r.id).collect();
    assert!(!done_before.is_empty() && done_before.len() < 4, "{done_before:?}");

    let out = env.versus(&["run", file.to_str().unwrap(), "--resume"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = env.store();
    assert_eq!(store.list_experiments().unwrap().len(), 1, "resumed, not started anew");
    let after = store.runs(1).unwrap();
    assert_eq!(after.len(), 4);
    assert!(after.iter().all(|r| r.status == Status::Done), "{after:?}");
    let again = after.iter().filter(|r| done_before.contains(&r.id)).collect::<Vec<_>>();
    for (a, b) in again.iter().zip(before.iter().filter(|r| done_before.contains(&r.id))) {
        assert_eq!(a.started_at, b.started_at, "finished runs are not run again");
    }
    env.assert_no_servers();

    let by_id = env.versus(&["run", "--resume-id", "1"]).output().unwrap();
    assert!(by_id.status.success(), "{}", String::from_utf8_lossy(&by_id.stderr));
    assert!(String::from_utf8_lossy(&by_id.stderr).contains("0 to do"), "nothing is left to run");
    assert_eq!(env.store().runs(1).unwrap().len(), 4);

    let changed = env.file("exp", &RESUMABLE.replace("repetitions = 2", "repetitions = 3"));
    let out = env.versus(&["run", changed.to_str().unwrap(), "--resume"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("repetitions: 2 → 3"), "{err}");
}

#[test]
fn a_server_killed_mid_run_fails_that_run_and_the_experiment_goes_on() {
    let env = Env::new("versus-exp-");
    let file = env.file(
        "exp",
        r#"
name = "crash"
builds = ["system"]
threads = [2]
duration = "4s"
repetitions = 2
prewarm = false
order = "interleaved"
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 2000 }
"#,
    );
    let child = env.versus(&["run", file.to_str().unwrap()]).stderr(Stdio::piped()).spawn().unwrap();
    let run_cnf = env.home.path().join("experiments/crash/run/my.cnf");
    let needle = format!("--defaults-file={}", run_cnf.display());
    let db = env.home.path().join("results.db");
    let mut victim = 0;
    wait_until("the first run to be measuring", Duration::from_secs(120), || {
        let measuring = db.exists()
            && Store::open(&db)
                .is_ok_and(|s| s.runs(1).is_ok_and(|r| r.first().is_some_and(|r| r.status == Status::Running)));
        if let Some((pid, _)) = env.servers().into_iter().find(|(_, c)| c.contains(&needle)) {
            victim = pid;
        }
        measuring && victim != 0
    });
    std::thread::sleep(Duration::from_millis(1500));
    kill9(victim);
    let (code, err) = finish(child);
    assert_eq!(code, 1, "a failed run makes the exit code 1: {err}");
    let store = env.store();
    let runs = store.runs(1).unwrap();
    assert_eq!(runs[0].status, Status::Failed, "{runs:?}");
    let why = runs[0].error.clone().unwrap_or_default();
    assert!(why.contains("died") || why.contains("Lost connection") || why.contains("lost"), "{why}");
    // Printed as one line that names the run and its first cause; the store keeps the whole error.
    let failed: Vec<&str> = err.lines().filter(|l| l.contains(" failed: ")).collect();
    let line = format!("      run {} (system oltp_point_select 2 thr rep 1) failed: ", runs[0].id);
    assert!(failed.len() == 1 && failed[0].starts_with(&line), "{err}");
    let shown = failed[0][line.len()..].split(" (the whole error: `versus show").next().unwrap();
    assert!(!shown.is_empty() && why.starts_with(shown.trim_end_matches('…')), "{shown} | {why}");
    assert!(!store.run(runs[0].id).unwrap().unwrap().intervals.is_empty(), "partial intervals are kept");
    assert_eq!(runs[1].status, Status::Done);
    assert_eq!(store.experiment(1).unwrap().unwrap().status, Status::Partial, "a run failed, one is done: partial");
    env.assert_no_servers();
}

#[test]
fn ctrl_c_stops_cleanly_marks_the_run_interrupted_and_keeps_what_was_measured() {
    let env = Env::new("versus-exp-");
    let file = env.file(
        "exp",
        &RESUMABLE.replace("\"resumable\"", "\"ctrlc\"").replace("duration = \"2s\"", "duration = \"6s\""),
    );
    let mut child =
        env.versus(&["run", file.to_str().unwrap()]).stderr(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let db = env.home.path().join("results.db");
    wait_until("a run measuring", Duration::from_secs(120), || {
        db.exists()
            && Store::open(&db).is_ok_and(|s| s.runs(1).is_ok_and(|r| r.iter().any(|r| r.status == Status::Running)))
    });
    std::thread::sleep(Duration::from_millis(2500));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (code, err) = finish(child);
    assert_eq!(code, 130, "{err}");
    assert!(!err.contains("versus: error: interrupted"), "a clean stop is said once, not as an error too: {err}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
    assert!(out.contains("interrupted; continue with: versus run --resume-id 1\n"), "the one resume hint: {out}");
    let store = env.store();
    let runs = store.runs(1).unwrap();
    let interrupted: Vec<_> = runs.iter().filter(|r| r.status == Status::Interrupted).collect();
    assert_eq!(interrupted.len(), 1, "{runs:?}");
    assert!(!store.run(interrupted[0].id).unwrap().unwrap().intervals.is_empty(), "measured intervals are kept");
    assert_eq!(store.experiment(1).unwrap().unwrap().status, Status::Interrupted);
    env.assert_no_servers();
}

#[test]
fn a_config_the_server_rejects_fails_its_cells_with_the_servers_message_and_the_others_run() {
    let env = Env::new("versus-exp-");
    let file = env.file(
        "exp",
        r#"
name = "rejected"
threads = [1]
duration = "1s"
prewarm = false
[[targets]]
name = "good"
build = "system"
[[targets]]
name = "bad"
build = "system"
set = { no_such_option_xyz = 1 }
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 1000 }
"#,
    );
    let out = env.versus(&["run", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let runs = env.store().runs(1).unwrap();
    let bad = runs.iter().find(|r| r.cell.target == "bad").unwrap();
    let good = runs.iter().find(|r| r.cell.target == "good").unwrap();
    assert_eq!(bad.status, Status::Failed);
    assert!(bad.error.as_deref().unwrap_or("").contains("unknown variable 'no_such_option_xyz=1'"), "{:?}", bad.error);
    assert_eq!(good.status, Status::Done);
    env.assert_no_servers();
}

#[test]
fn a_value_the_server_adjusts_at_startup_is_a_warning_and_with_strict_an_error() {
    let env = Env::new("versus-exp-");
    let file = env.file(
        "exp",
        r#"
name = "clamped"
threads = [1]
duration = "1s"
prewarm = false
[[targets]]
name = "trx7"
build = "system"
set = { innodb_flush_log_at_trx_commit = 7, innodb_buffer_pool_size = "32M" }
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 1000 }
"#,
    );
    let out = env.versus(&["run", file.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("warning: target 'trx7' does not run as configured: innodb_flush_log_at_trx_commit=7 runs as 3")
            .count(),
        1,
        "one warning naming the variable, the requested and the effective value:\n{err}"
    );
    assert!(!err.contains("innodb_buffer_pool_size"), "32M is what the server runs with:\n{err}");

    let out = env.versus(&["run", file.to_str().unwrap(), "--strict"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let e = env.store().latest_experiment_named("clamped").unwrap().unwrap();
    let run = &env.store().runs(e.id).unwrap()[0];
    assert_eq!(run.status, Status::Failed);
    let why = run.error.as_deref().unwrap_or("");
    assert!(why.starts_with("--strict: target 'trx7': the server changed requested values at startup: innodb_flush_log_at_trx_commit=7 runs as 3"), "{why}");
    env.assert_no_servers();
}

const CHARSETS: &str = r#"
name = "charsets"
threads = [1]
duration = "1s"
repetitions = 1
prewarm = false
[[targets]]
name = "latin1"
build = "system"
set = { character-set-server = "latin1", collation-server = "latin1_swedish_ci", sync_binlog = 0 }
[[targets]]
name = "utf8mb4"
build = "system"
set = { character-set-server = "utf8mb4", collation-server = "utf8mb4_general_ci", sync_binlog = 1 }
charset = "latin1"
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 500 }
"#;

/// The collation of `sbtest1` in a snapshot: restored into a fresh datadir and started.
fn table_collation(home: &Path, snapshot: &Path, scratch: &Path) -> String {
    use mysql::prelude::Queryable;
    let h = versus::server::Home::at(home);
    let data = scratch.join("data");
    versus::server::snapshot::restore(snapshot, &data).unwrap();
    let mut spec = versus::server::SandboxSpec::new("check", h.build("system").unwrap(), scratch);
    spec.datadir = Some(data);
    let mut sb = versus::server::Sandbox::start(spec).unwrap();
    let mut conn = sb.connect_root().unwrap();
    let c: Option<String> =
        conn.query_first("SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_NAME = 'sbtest1'").unwrap();
    drop(conn);
    sb.stop().unwrap();
    c.expect("sbtest1 exists")
}

/// Two targets of one build that differ in the server's character set: each gets data prepared
/// under its own (the tables' collation), the other options do not split the data, and the client
/// side (`charset`) is each connection's.
#[test]
fn targets_whose_character_sets_differ_get_data_prepared_under_each() {
    let env = Env::new("versus-exp-");
    let file = env.file("exp", CHARSETS);
    let dry = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert!(
        plan.contains("build=system;character_set_server=latin1;collation_server=latin1_swedish_ci;oltp"),
        "{plan}"
    );
    assert!(
        plan.contains("build=system;character_set_server=utf8mb4;collation_server=utf8mb4_general_ci;oltp"),
        "{plan}"
    );
    assert!(plan.contains("connections run SET NAMES latin1"), "{plan}");
    let out = env.versus(&["run", file.to_str().unwrap(), "--keep-data"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = env.store();
    let e = &store.list_experiments().unwrap()[0];
    assert_eq!((e.runs, e.done), (2, 2));
    for r in store.runs(e.id).unwrap() {
        let d = store.run(r.id).unwrap().unwrap();
        let cmd = d.command.unwrap();
        let init = cmd.get("connection_init").map(|v| v.to_string()).unwrap_or_default();
        match r.cell.target.as_str() {
            "utf8mb4" => assert_eq!(init, r#"["SET NAMES latin1"]"#),
            _ => assert_eq!(init, "", "no client-side setting on the latin1 target"),
        }
    }
    let work = env.home.path().join("experiments/charsets");
    let mut snapshots: Vec<PathBuf> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("snapshot-")))
        .collect();
    snapshots.sort();
    assert_eq!(snapshots.len(), 2, "one preparation per character set: {snapshots:?}");
    let mut collations: Vec<String> = snapshots
        .iter()
        .enumerate()
        .map(|(i, s)| table_collation(env.home.path(), s, &env.home.path().join(format!("check-{i}"))))
        .collect();
    collations.sort();
    assert_eq!(collations, ["latin1_swedish_ci", "utf8mb4_general_ci"]);
    env.assert_no_servers();
}

#[test]
fn the_set_up_choices_are_shown_by_a_dry_run_and_checked_before_anything_runs() {
    let env = Env::new("versus-exp-");
    let text = matrix().replace("repetitions = 2\n", "repetitions = 2\nsettle = \"3s\"\npin_cpus = true\n");
    let file = env.file("exp", &text);
    let dry = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
    let plan = String::from_utf8_lossy(&dry.stdout);
    let cpus = versus::server::affinity::allowed().unwrap();
    if cpus.len() >= 2 {
        assert!(dry.status.success(), "{}", String::from_utf8_lossy(&dry.stderr));
        let line = plan.lines().find(|l| l.starts_with("set-up: ")).unwrap_or_else(|| panic!("{plan}"));
        assert!(line.contains("pin the started server and the client: server on CPU "), "{line}");
        assert!(line.contains("settle 3 s after each server start"), "{line}");
    } else {
        let err = String::from_utf8_lossy(&dry.stderr);
        assert!(err.contains("pin_cpus") && err.contains("at least 2 CPUs"), "{err}");
    }
    let bad = env.file("exp", &matrix().replace("repetitions = 2\n", "repetitions = 2\nsettle = \"soon\"\n"));
    let out = env.versus(&["run", bad.to_str().unwrap(), "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("'soon' is not a duration") && err.contains("settle"), "{err}");
    let out = env.versus(&["run", file.to_str().unwrap(), "--confidence", "95"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--confidence") && err.contains("strictly between 0 and 1"), "{err}");
    // A level for looks that a fixed plan never takes (`env.file` wrote the bad file over the good one).
    let file = env.file("exp", &text);
    let out = env.versus(&["run", file.to_str().unwrap(), "--confidence", "0.99", "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--confidence") && err.contains("--max-repetitions") && err.lines().count() == 1, "{err}");
    let adaptive = ["run", file.to_str().unwrap(), "--confidence", "0.99", "--max-repetitions", "4", "--dry-run"];
    let out = env.versus(&adaptive).output().unwrap();
    if cpus.len() >= 2 {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("(group-sequential, 99 % overall)"));
    }
    assert!(env.store_is_absent(), "neither a dry run nor a refused flag stores anything");
}

/// `run --dry-run --db FILE` checks the store as the real run opens it, without creating or changing
/// it: a directory, another program's SQLite file and a store of a newer versus are refused in one
/// line naming the file; a store that does not exist yet passes and is still absent afterwards.
#[test]
fn a_dry_run_refuses_the_store_the_real_run_would_refuse() {
    let env = Env::new("versus-exp-");
    let file = env.file("exp", &matrix());
    let dry = |db: &Path| {
        env.versus(&["run", file.to_str().unwrap(), "--dry-run", "--db", db.to_str().unwrap()]).output().unwrap()
    };
    let foreign = env.home.path().join("other.db");
    let conn = rusqlite::Connection::open(&foreign).unwrap();
    conn.execute_batch("CREATE TABLE customers (id INTEGER)").unwrap();
    drop(conn);
    let newer = env.home.path().join("newer.db");
    let conn = rusqlite::Connection::open(&newer).unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER); PRAGMA user_version = 100000").unwrap();
    drop(conn);
    let before = std::fs::read(&foreign).unwrap();
    for (db, want) in [
        (env.home.path().to_path_buf(), "it is a directory"),
        (foreign.clone(), "not a versus results store"),
        (newer.clone(), "has schema version 100000 but this versus knows only up to"),
    ] {
        let out = dry(&db);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", db.display());
        assert!(err.starts_with(&format!("versus: error: {}: ", db.display())) && err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty(), "no plan printed for a refused store");
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), before, "the foreign file is unchanged");
    let fresh = env.home.path().join("new").join("results.db");
    let out = dry(&fresh);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!fresh.exists() && !fresh.parent().unwrap().exists(), "a dry run creates no store");
}

/// Names that would print alike (another Unicode encoding of the same text, a trailing space) are
/// refused in one line before anything runs, as an exact duplicate is.
#[test]
fn names_that_print_alike_are_refused() {
    let env = Env::new("versus-exp-");
    for (a, b, want) in [
        ("caf\u{e9}", "cafe\u{301}", "differ only in how their characters are encoded"),
        ("sync", "sync ", "\"sync \" has leading or trailing whitespace"),
    ] {
        let text = matrix().replacen("name = \"sync\"", &format!("name = \"{a}\""), 1).replacen(
            "name = \"nosync\"",
            &format!("name = \"{b}\""),
            1,
        );
        let file = env.file("exp", &text);
        let out = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.starts_with("versus: error: ") && err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(env.store_is_absent());
}

/// A `set` option written bare (`= true`) that the build's server needs a value for is refused by
/// the dry run, naming the target; a real switch written bare passes.
#[test]
fn a_bare_option_that_needs_a_value_is_refused_before_anything_runs() {
    let env = Env::new("versus-exp-");
    let text =
        matrix().replace("set = { innodb_flush_log_at_trx_commit = 0 }", "set = { innodb_buffer_pool_size = true }");
    let out = env.versus(&["run", env.file("exp", &text).to_str().unwrap(), "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("target system/nosync: set: 'innodb_buffer_pool_size' has no value, and system takes one"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let text = matrix().replace(
        "set = { innodb_flush_log_at_trx_commit = 0 }",
        "set = { skip-external-locking = true, log-bin = true }",
    );
    let out = env.versus(&["run", env.file("exp", &text).to_str().unwrap(), "--dry-run"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Thread counts above a sandbox's max_connections (151 by default, or its `set`) are refused by the
/// dry run, naming the target, instead of failing every run at its start.
#[test]
fn threads_above_a_sandbox_s_max_connections_are_refused_before_anything_runs() {
    let env = Env::new("versus-exp-");
    let text = matrix().replace("threads = [1, 2]", "threads = [1, 200]");
    let out = env.versus(&["run", env.file("exp", &text).to_str().unwrap(), "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("target system/sync: 200 threads open 200 connections, more than its max_connections (151, the server's default)"),
        "{err}"
    );
    let raised = text
        .replace("innodb_flush_log_at_trx_commit = 1 }", "innodb_flush_log_at_trx_commit = 1, max_connections = 300 }");
    let out = env.versus(&["run", env.file("exp", &raised).to_str().unwrap(), "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("system/sync:") && err.contains("target system/nosync: 200 threads"), "{err}");
}

#[test]
fn a_managed_option_in_a_target_is_refused_with_advice_that_fits_a_file() {
    let env = Env::new("versus-exp-");
    let file =
        env.file("exp", &matrix().replace("set = { innodb_flush_log_at_trx_commit = 0 }", "set = { port = 3307 }"));
    let out = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // An experiment file has no --port: the message says who chooses the port.
    assert!(err.contains("'port' is managed by versus: versus gives each sandbox a free port"), "{err}");
    assert!(!err.contains("set it with"), "{err}");
    assert!(env.store_is_absent());
}

#[test]
fn numbers_a_file_gives_as_floats_are_refused_unless_they_are_exact_whole_counts() {
    let env = Env::new("versus-exp-");
    let refused = |from: &str, to: &str, want: &str| {
        let file = env.file("exp", &matrix().replace(from, to));
        let out = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{to}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{to}: {err}");
    };
    let sync = "set = { innodb_flush_log_at_trx_commit = 1 }";
    refused(sync, "set = { max_connections = 9.2e18 }", "config 'sync': set.max_connections: 9.2e18 is a float");
    refused(
        "tables = 1,",
        "tables = 2.5,",
        "--tables: invalid value '2.5': expected a whole number from 0 to 4294967295",
    );
    refused("table-size = 2000", "table-size = 9.2e18", "--table-size: invalid value '9200000000000000000.0'");
    // A whole number in a float's form is that number.
    let file = env.file("exp", &matrix().replace(sync, "set = { max_connections = 2e2 }").replace("2000 }", "2e3 }"));
    let out = env.versus(&["run", file.to_str().unwrap(), "--dry-run"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(env.store_is_absent());
}
