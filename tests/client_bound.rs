//! The client-bound check on real runs: versus pinned to one CPU (`taskset -c 0`) with 16 threads
//! against the distribution's MariaDB, which runs on every CPU, halves the throughput on a 2-CPU host;
//! the run is flagged, in `versus sysbench`'s output and in every report format of a stored
//! experiment, while the same load unpinned is not. Runs alone (scripts/run-tests.sh): another test's
//! load on the pinned CPU would take part of the share the check measures.

mod common;

use common::home::{Home, ok};

const SIZE: &[&str] = &["--tables=1", "--table-size=10000"];

/// One test at a time: two pinned clients on one CPU would share it.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `versus sysbench oltp_point_select` against `srv` with `more` arguments.
fn sysbench_args(srv: &common::TestServer, more: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["sysbench", "oltp_point_select", "--mysql-host=127.0.0.1"].map(String::from).into();
    a.push(format!("--mysql-port={}", srv.port));
    a.push(format!("--mysql-user={}", srv.user));
    a.push(format!("--mysql-password={}", srv.password));
    a.push(format!("--mysql-db={}", srv.db));
    a.extend(SIZE.iter().chain(more).map(|s| s.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The `client` object of a `--format=json` report, checked against its schema.
fn client_of(stdout: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let errors = common::sysbench_schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:?}");
    doc["client"].clone()
}

#[test]
fn a_client_pinned_to_one_cpu_is_flagged_and_an_unpinned_one_is_not() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let srv = common::start_server();
    let home = Home::new("versus-client-");
    ok(home.output(&strs(&sysbench_args(&srv, &["prepare"]))), "prepare");
    let run = ["--threads=16", "--time=3", "--format=json", "run"];

    let pinned = ok(home.pinned("0", &strs(&sysbench_args(&srv, &run)), &[]), "the pinned run");
    let c = client_of(&pinned);
    assert_eq!(c["load"]["usable_cpus"], 1.0, "{c}");
    assert_eq!(c["client_bound"], true, "16 threads on one CPU beside the server: {c}");
    // The text report stays sysbench's; the flag is one line on stderr.
    let text_run = sysbench_args(&srv, &["--threads=16", "--time=2", "run"]);
    let (code, out, err) = home.pinned("0", &strs(&text_run), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("client-bound"), "{out}");
    assert!(err.contains("versus: client-bound: the client used") && err.contains("measure the client"), "{err}");

    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        let free = ok(home.output(&strs(&sysbench_args(&srv, &run))), "the unpinned run");
        let c = client_of(&free);
        assert_eq!(c["client_bound"], false, "the same load on every CPU: {c}");
        assert!(c["load"]["client_share"].as_f64().unwrap() < 0.5, "{c}");
    }

    // Split over two client processes pinned to the same CPU (they inherit the mask): their CPU adds up
    // on their host, and the load is flagged as one client's would be.
    let split = ["--threads=16", "--clients=2", "--time=3", "--format=json", "run"];
    let out = ok(home.pinned("0", &strs(&sysbench_args(&srv, &split)), &[]), "the pinned split run");
    let c = client_of(&out);
    assert_eq!(c["client_bound"], true, "two clients on one CPU beside the server: {c}");
    assert_eq!(c["load"]["usable_cpus"], 1.0, "one CPU between them: {c}");
}

#[test]
fn a_client_bound_run_is_flagged_in_every_report_format() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let srv = common::start_server();
    let home = Home::new("versus-client-");
    let text = common::external_experiment("cb", srv.port)
        .replace("threads = [1]", "threads = [16]\nwarmup = \"1s\"\nrepetitions = 1")
        .replace("duration = \"1s\"", "duration = \"2s\"")
        .replace("table-size = 100 }", "table-size = 10000 }");
    assert!(text.contains("threads = [16]") && text.contains("table-size = 10000"), "{text}");
    let file = home.file("cb", &text);
    let pw = [("SAFETY_TEST_PW", srv.password.as_str())];
    ok(home.pinned("0", &["run", file.to_str().unwrap()], &pw), "the pinned experiment");

    let doc = home.report_json(&["report", "cb", "--format", "json"]);
    let bound = &doc["cells"][0]["client_bound"];
    assert_eq!((bound["runs"].as_u64(), bound["of"].as_u64()), (Some(1), Some(1)), "{bound}");
    let note = "ext, oltp_point_select at 16 thr, is client-bound in 1 of 1 runs (the client used";
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.starts_with(note)), "{notes:?}");
    for format in ["markdown", "html", "csv"] {
        let text = ok(home.output(&["report", "cb", "--format", format]), format);
        assert!(text.contains("client-bound in 1 of 1 runs (the client used"), "{format}: {text}");
    }
    let terminal = ok(home.output(&["compare", "cb", "--color", "never"]), "compare");
    assert!(terminal.contains(note), "{terminal}");
    let run = home.store().runs(home.store().latest_experiment_named("cb").unwrap().unwrap().id).unwrap()[0].id;
    let show = ok(home.output(&["show", &run.to_string()]), "show");
    assert!(show.contains("client: client-bound: the client used"), "{show}");
}
