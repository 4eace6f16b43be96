//! `versus sysbench` against real servers: the same work as sysbench 1.0.20 (server counters per
//! transaction), one-line server errors, unix sockets, JSON, Ctrl-C and lost connections, the legacy command
//! lines of the appendix, and prepare's tables compared with sysbench's.

mod common;

use std::process::Output;
use std::time::Duration;

use common::{
    output_text as text, start_server, sysbench_fails_with as fails_with, sysbench_schema_errors as schema_errors,
    versus_sysbench as versus,
};
use mysql::prelude::Queryable;

use common::counters::{compare, conn_args, phases, sysbench};

/// More threads than the server's max_connections (500 on test servers) are refused in one line
/// before any worker connects, with either client; the server saw only the one connection that asked.
#[test]
fn threads_above_max_connections_are_refused_before_any_worker_starts() {
    let s = start_server();
    let mut root = s.root_conn();
    let mut connections = || -> i64 {
        let row: Option<(String, i64)> = root.query_first("SHOW GLOBAL STATUS LIKE 'Connections'").unwrap();
        row.unwrap().1
    };
    let before = connections();
    for client in ["--client=lean", "--client=crate"] {
        let mut args = conn_args(&s);
        args.extend(["--threads=501", "--time=30", client, "run"].map(String::from));
        let o = versus(&["oltp_point_select"].into_iter().chain(args.iter().map(String::as_str)).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{client}: {}", text(&o));
        assert!(
            err.starts_with(
                "versus: error: --threads: 501 connections are more than the server allows (max_connections = 500)"
            ),
            "{client}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let opened = connections() - before;
    assert!(opened <= 4, "only the asking connections, not 501 workers: {opened}");
}

#[test]
fn same_work_as_sysbench_per_transaction() {
    let s = start_server();
    let mut root = s.root_conn();
    let base: Vec<String> =
        conn_args(&s).into_iter().chain(["--tables=2".to_string(), "--threads=1".to_string()]).collect();
    // (test, events, options for both tools, options for versus only)
    let cases: &[(&str, u64, &[&str], &[&str])] = &[
        ("oltp_read_write", 500, &["--table-size=5000"], &[]),
        ("oltp_read_only", 500, &["--table-size=5000"], &[]),
        ("oltp_write_only", 1000, &["--table-size=5000"], &[]),
        ("oltp_point_select", 5000, &["--table-size=5000"], &[]),
        ("oltp_update_index", 3000, &["--table-size=5000"], &[]),
        ("oltp_update_non_index", 3000, &["--table-size=5000"], &[]),
        ("oltp_insert", 3000, &["--table-size=5000"], &[]),
        // Deletes that hit an id deleted earlier in the run are random (about n²/2N of n): with 200k rows
        // their spread per transaction is ~0.2 %, far inside the 1 % tolerance.
        ("oltp_delete", 1000, &["--table-size=200000", "--rand-type=uniform", "--tables=1"], &[]),
        ("select_random_points", 40_000, &["--table-size=5000", "--rand-type=uniform", "--tables=1"], &[]),
        ("select_random_ranges", 40_000, &["--table-size=5000", "--rand-type=uniform", "--tables=1"], &[]),
        ("bulk_insert", 200_000, &[], &[]),
        (
            "oltp_read_write",
            300,
            &["--table-size=5000", "--db-ps-mode=disable", "--skip-trx", "--rand-type=pareto"],
            &[],
        ),
        (
            "oltp_read_only",
            300,
            &["--table-size=5000", "--range-selects=off", "--point-selects=3", "--rand-type=gaussian"],
            &[],
        ),
        // Workers following their server threads' CPUs (the default, spelled out), with 4 of them.
        ("oltp_read_only", 400, &["--table-size=5000", "--threads=4"], &["--client-affinity=follow"]),
        // The mysql crate client, and the event-loop workers.
        ("oltp_read_write", 300, &["--table-size=5000"], &["--client=crate"]),
        ("oltp_read_only", 400, &["--table-size=5000", "--threads=4"], &["--client-threads=2"]),
        ("oltp_write_only", 500, &["--table-size=5000"], &["--client-threads=1"]),
        ("bulk_insert", 100_000, &["--threads=2"], &["--client-threads=1"]),
    ];
    // Event counts are chosen so that the random part of data-dependent counters (rows matched per k
    // value, ids hit by deletes) stays well below 1 %: about 3 standard deviations or more.
    let mut failures = Vec::new();
    for (test, events, extra, versus_only) in cases {
        let mut args = vec![test.to_string()];
        args.extend(base.iter().cloned());
        args.extend(extra.iter().map(|x| x.to_string()));
        let run_extra = vec![format!("--events={events}"), "--time=0".to_string()];
        let sb = phases(&mut root, &|a| sysbench(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>()), &args, &run_extra);
        // sysbench's INSERT batches, so that prepare's counters can be compared too (the default LOAD DATA
        // path gives the same table contents, see prepare_methods_give_identical_tables).
        let vs_prepare = |a: &[String]| {
            let mut a: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
            a.insert(1, "--prepare-method=insert");
            for (i, o) in versus_only.iter().enumerate() {
                a.insert(2 + i, o);
            }
            versus(&a)
        };
        let vs = phases(&mut root, &vs_prepare, &args, &run_extra);
        let label = format!("{test} {}", extra.iter().chain(versus_only.iter()).copied().collect::<Vec<_>>().join(" "));
        compare(&format!("{label}: prepare"), &sb.0, &vs.0, 1.0, &mut failures);
        compare(&format!("{label}: run"), &sb.1, &vs.1, *events as f64, &mut failures);
    }
    assert!(failures.is_empty(), "counters differ:\n{}", failures.join("\n"));
}

// ---------- against a real server ----------

#[test]
fn server_errors_are_one_line() {
    let s = start_server();
    // The benchmark account may work in `nope` (which does not exist), so the server says 1049, not 1044.
    s.root_exec(&["GRANT SELECT ON nope.* TO 'sbtest'@'%'"]);
    let port = format!("--mysql-port={}", s.port);
    let base = ["oltp_point_select", "--mysql-host=127.0.0.1", &port, "--mysql-user=sbtest"];
    let with = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    let f = |a: Vec<String>, needle: &str| fails_with(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>(), needle);
    f(with(&["--mysql-password=wrong", "--time=1", "run"]), "1045");
    f(with(&["--mysql-password=sbpass", "--mysql-db=nope", "--time=1", "run"]), "create the database");
    f(with(&["--mysql-password=sbpass", "--time=1", "run"]), "run prepare first");
    // Its statement is sent over several lines, as sysbench's; the error stays on one.
    let mut points = with(&["--mysql-password=sbpass", "--time=1", "run"]);
    points[0] = "select_random_points".into();
    f(points, "run prepare first");
    f(
        vec![
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            "--mysql-port=1".into(),
            "--time=1".into(),
            "run".into(),
        ],
        "unable to connect",
    );
    let ok = versus(
        &with(&["--mysql-password=sbpass", "--table-size=100", "prepare"])
            .iter()
            .map(|x| x.as_str())
            .collect::<Vec<_>>(),
    );
    assert!(ok.status.success(), "{}", text(&ok));
    f(with(&["--mysql-password=sbpass", "--table-size=100", "prepare"]), "run cleanup first");
}

#[test]
fn socket_json_ctrl_c_and_lost_connections() {
    let mut s = start_server();
    let sock = format!("--mysql-socket={}", s.socket.display());
    let base = [
        "oltp_read_write",
        sock.as_str(),
        "--mysql-user=sbtest",
        "--mysql-password=sbpass",
        "--table-size=1000",
        "--tables=2",
    ];
    let args = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    let run = |a: Vec<String>| versus(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(run(args(&["--threads=2", "prepare"])).status.success());
    let o = run(args(&["--threads=2", "prewarm"]));
    assert!(o.status.success() && text(&o).contains("Prewarming table sbtest2"), "{}", text(&o));

    // JSON over the unix socket, validated against the schema.
    let o = run(args(&["--time=2", "--threads=2", "--report-interval=1", "--format=json", "run"]));
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(doc["totals"]["events"].as_u64().unwrap() > 0);

    // Ctrl-C: the report of what was measured, and a non-zero exit.
    let bin = assert_cmd::cargo::cargo_bin("versus");
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=60", "run"]))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{t}");
    assert!(t.contains("SQL statistics:") && t.contains("Threads fairness:"), "{t}");
    // `timeout -s INT` signals the child and then its process group at once: still one Ctrl-C.
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=60", "--threads=2", "run"]))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    for _ in 0..2 {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT)
            .unwrap();
        // Two deliveries (not merged into one pending signal), yet well within one request.
        std::thread::sleep(Duration::from_micros(300));
    }
    let out = child.wait_with_output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{t}");
    assert!(t.contains("SQL statistics:"), "a double signal sent at once must still give the report: {t}");

    // Lost connections: kill the workers' connections mid-run; they reconnect and are counted, in both
    // threading models.
    for model in ["--client-threads=0", "--client-threads=1"] {
        let child = std::process::Command::new(&bin)
            .arg("sysbench")
            .args(args(&["--time=4", "--threads=2", model, "run"]))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let mut root = s.root_conn();
        let ids: Vec<u64> = root.query("SELECT id FROM information_schema.processlist WHERE user='sbtest'").unwrap();
        assert!(!ids.is_empty());
        for id in &ids {
            let _ = root.query_drop(format!("KILL {id}"));
        }
        let out = child.wait_with_output().unwrap();
        let t = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{t}");
        let reconnects: u64 = t
            .lines()
            .find(|l| l.trim_start().starts_with("reconnects:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .expect("reconnects line");
        assert!(reconnects >= 1, "{model}: {t}");
    }

    // The server away for a while (restarted mid-run): said once on stderr; the workers reconnect.
    let child = std::process::Command::new(&bin)
        .arg("sysbench")
        .args(args(&["--time=6", "--threads=2", "run"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    s.sandbox().stop().expect("stop the server mid-run");
    std::thread::sleep(Duration::from_millis(500));
    s.sandbox().restart().expect("start it again");
    let out = child.wait_with_output().unwrap();
    let (t, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{t}{err}");
    assert_eq!(err.matches("the server cannot be reached").count(), 1, "{err}");
    assert!(t.contains("reconnects:") && !t.contains("reconnects:                           0 "), "{t}");
    assert!(run(args(&["cleanup"])).status.success());
}

// ---------- legacy command lines from the field (issue appendix), with small tables ----------

#[test]
fn appendix_command_lines_run() {
    let s = start_server();
    let sock = s.socket.display().to_string();
    let port = s.port.to_string();
    let root_password = s.root_password();
    let run = |line: &str| -> Output {
        let line = line.replace("SOCK", &sock).replace("PORT", &port).replace("ROOTPW", &root_password);
        let args: Vec<&str> = line.split_whitespace().collect();
        let o = versus(&args);
        assert!(o.status.success(), "{line}\n{}", text(&o));
        o
    };
    // 1: 1.0 style over a socket as root (tables prepared first).
    let l1 = "oltp_read_write --report-interval=1 --time=2 --threads=24 --tables=10 --table-size=100 --mysql-user=root --mysql-password=ROOTPW --mysql-socket=SOCK --mysql-db=sbtest";
    run(&format!("{l1} prepare"));
    let o = run(&format!("{l1} run"));
    let t = text(&o);
    assert!(
        t.contains("Number of threads: 24") && t.contains("[ 1s ] thds: 24 tps: ") && t.contains("SQL statistics:"),
        "{t}"
    );
    run(&format!("{l1} cleanup"));

    // 2: a script path as the test name, storage engine with underscores.
    let l2 = "--db-driver=mysql --mysql-user=sbtest --mysql-password=sbpass --mysql-db=sbtest --mysql-host=127.0.0.1 --mysql-port=PORT --mysql_storage_engine=innodb --table_size=1000 --tables=2 --threads=2 /usr/share/sysbench/oltp_read_write.lua";
    let o = run(&format!("{l2} prepare"));
    assert!(text(&o).contains("Inserting 1000 records into 'sbtest2'"));
    run(&format!("{l2} cleanup"));

    // 3: sysbench 0.4, incupdate, batch mode.
    let l3 = "--batch --batch-delay=1 --test=oltp --mysql-host=127.0.0.1 --mysql-port=PORT --mysql-user=sbtest --mysql-password=sbpass --mysql-db=sbtest --oltp-table-size=1000 --max-time=2 --max-requests=0 --mysql-table-engine=innodb --db-ps-mode=disable --mysql-engine-trx=yes --oltp-table-name=sbtest1 --oltp-skip-trx --oltp-test-mode=incupdate --oltp-dist-type=uniform --oltp-range-size=10 --oltp-connect-delay=0 --percentile=99 --num-threads=1 --seed-rng=1413171854";
    run(&format!("{l3} prepare"));
    let o = run(&format!("{l3} run"));
    let t = text(&o);
    assert!(t.contains("legacy command line mapped to: versus sysbench oltp_inc_update "), "{t}");
    assert!(t.contains("99th percentile:") && t.contains("[ 1s ] thds: 1"), "{t}");
    let writes: u64 = t
        .lines()
        .find(|l| l.trim_start().starts_with("write:"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(writes > 0, "{t}");
    let mut root = s.root_conn();
    let numeric: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.sbtest1 WHERE c NOT LIKE '%-%'").unwrap().unwrap();
    assert!(numeric > 0, "incupdate must have incremented c");
    run(&format!("{l3} cleanup"));

    // 4: sysbench 0.5 oltp.lua with client-side ids.
    let l4 = "--report-interval=1 --oltp-auto-inc=off --max-time=2 --max-requests=0 --mysql-engine-trx=yes --test=/usr/share/doc/sysbench/tests/db/oltp.lua --init-rng=on --oltp_index_updates=10 --oltp_non_index_updates=10 --oltp_distinct_ranges=15 --oltp_order_ranges=15 --oltp_tables_count=1 --num-threads=4 --oltp_table_size=1000 --mysql-db=sbtest --mysql-user=root --mysql-password=ROOTPW --db-driver=mysql --mysql-socket=SOCK";
    run(&format!("{l4} prepare"));
    let o = run(&format!("{l4} run"));
    let t = text(&o);
    assert!(t.contains("mapped to: versus sysbench oltp_read_write ") && t.contains(" --auto-inc=off "), "{t}");
    assert!(t.contains("--index-updates=10") && t.contains("Number of threads: 4"), "{t}");
    run(&format!("{l4} cleanup"));
}

#[test]
fn prepare_methods_give_identical_tables() {
    let s = start_server();
    let mut root = s.root_conn();
    let conn: Vec<String> = conn_args(&s);
    let checksum = |root: &mut mysql::Conn| -> Vec<(String, u64)> {
        root.query("CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2").unwrap()
    };
    for auto_inc in ["--auto-inc=on", "--auto-inc=off"] {
        let mut sums = Vec::new();
        for method in ["--prepare-method=insert", "--prepare-method=load", "--prepare-method=auto"] {
            let mut a: Vec<String> =
                vec!["oltp_read_write".into(), "--tables=2".into(), "--table-size=20000".into(), "--threads=2".into()];
            a.extend(conn.iter().cloned());
            a.push(auto_inc.into());
            a.push(method.into());
            let args = |cmd: &str| -> Vec<String> { a.iter().cloned().chain([cmd.to_string()]).collect() };
            let o = versus(&args("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
            assert!(o.status.success(), "{}", text(&o));
            let count: u64 = root.query_first("SELECT COUNT(*) FROM sbtest.sbtest2").unwrap().unwrap();
            assert_eq!(count, 20_000);
            sums.push(checksum(&mut root));
            assert!(versus(&args("cleanup").iter().map(|x| x.as_str()).collect::<Vec<_>>()).status.success());
        }
        assert_eq!(sums[0], sums[1], "{auto_inc}: LOAD DATA and INSERT must give identical tables");
        assert_eq!(sums[0], sums[2]);
    }
    // Against sysbench's own prepare: the same shape and the same size on disk (values differ: other
    // random streams).
    let shape = |root: &mut mysql::Conn| -> Vec<Vec<String>> {
        root.query_drop("ANALYZE TABLE sbtest.sbtest1, sbtest.sbtest2").unwrap();
        let q = "SELECT t.table_name, t.data_length, t.index_length, (SELECT COUNT(*) FROM information_schema.statistics \
                 s WHERE s.table_schema = t.table_schema AND s.table_name = t.table_name) FROM information_schema.tables t \
                 WHERE t.table_schema = 'sbtest' ORDER BY 1";
        let mut rows: Vec<Vec<String>> = root
            .query_map(q, |(n, d, i, k): (String, u64, u64, u64)| vec![n, d.to_string(), i.to_string(), k.to_string()])
            .unwrap();
        for (t, row) in rows.iter_mut().enumerate() {
            let cols: (u64, u64, u64, u64, u64, u64) = root
                .query_first(format!(
                    "SELECT COUNT(*), MIN(id), MAX(id), SUM(LENGTH(c)), SUM(LENGTH(pad)), \
                     SUM(k BETWEEN 1 AND 20000) FROM sbtest.sbtest{}",
                    t + 1
                ))
                .unwrap()
                .unwrap();
            row.push(format!("{cols:?}"));
        }
        rows
    };
    let mut a: Vec<String> =
        vec!["oltp_read_write".into(), "--tables=2".into(), "--table-size=20000".into(), "--threads=2".into()];
    a.extend(conn.iter().cloned());
    let with = |cmd: &str| -> Vec<String> { a.iter().cloned().chain([cmd.to_string()]).collect() };
    let o = sysbench(&with("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    let theirs = shape(&mut root);
    assert!(sysbench(&with("cleanup").iter().map(|x| x.as_str()).collect::<Vec<_>>()).status.success());
    let o = versus(&with("prepare").iter().map(|x| x.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(shape(&mut root), theirs, "versus's prepare must give sysbench's table shape and size");
}
