//! One load from several client processes (`versus sysbench … --clients N`) against the distribution's
//! MariaDB in a temporary sandbox: one report with the clients' figures merged exactly, the threads and
//! the rate shared, a start skew that is measured and small, a client that cannot reach the server
//! refused before the barrier, and a client killed with -9 failing the run with the others' figures
//! marked as a part.

mod common;
#[path = "common/slurm.rs"]
mod slurm_cluster;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestServer, output_text, start_server, sysbench_fails_with as fails_with, versus_sysbench as versus};

/// A server of its own for each test, with the tables prepared.
fn with_server<T>(f: impl FnOnce(&TestServer) -> T) -> T {
    let s = start_server();
    let prepared = versus(&strs(&args(&s, &["prepare"])));
    assert!(prepared.status.success(), "{}", output_text(&prepared));
    f(&s)
}

fn args(s: &TestServer, more: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["oltp_point_select", "--tables=1", "--table-size=1000", "--mysql-host=127.0.0.1"].map(String::from).into();
    a.push(format!("--mysql-port={}", s.port));
    a.push(format!("--mysql-user={}", s.user));
    a.push(format!("--mysql-password={}", s.password));
    a.push(format!("--mysql-db={}", s.db));
    a.extend(more.iter().map(|m| m.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", output_text(o));
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", output_text(o)));
    let errors = common::sysbench_schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:?}");
    doc
}

#[test]
fn a_split_load_is_one_run_with_the_clients_figures_merged() {
    with_server(|s| {
        let o = versus(&strs(&args(
            s,
            &["--clients=2", "--threads=5", "--time=3", "--report-interval=1", "--format=json", "run"],
        )));
        let doc = json_of(&o);
        let c = &doc["clients"];
        assert_eq!((c["count"].as_u64(), c["complete"].as_bool()), (Some(2), Some(true)), "{c}");
        let parts = c["parts"].as_array().unwrap();
        // 5 threads shared as 3 + 2; every client finished and says where it ran.
        let threads: Vec<u64> = parts.iter().map(|p| p["threads"].as_u64().unwrap()).collect();
        assert_eq!(threads, [3, 2], "{c}");
        assert!(parts.iter().all(|p| p["status"] == "done" && p["pid"].as_u64().unwrap() > 0), "{c}");
        // The barrier: both started measuring within a few ms of each other.
        let skew = c["skew_ms"].as_f64().unwrap();
        assert!(skew < 100.0, "clients started {skew} ms apart");
        // One run: its events are the clients', its histogram holds every one of them, 5 threads' fairness.
        let events = doc["totals"]["events"].as_u64().unwrap();
        let by_client: u64 = parts.iter().map(|p| p["events"].as_u64().unwrap()).sum();
        assert!(events > 0 && events == by_client, "{events} against {by_client}");
        let in_histogram: u64 =
            doc["histogram"]["buckets"].as_array().unwrap().iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(in_histogram, events);
        assert_eq!(doc["threads"], 5);
        assert_eq!(doc["threads_fairness"]["per_thread"].as_array().unwrap().len(), 5);
        // Per-second periods summed over the clients: each holds both clients' threads, and they add up.
        let ivs = doc["intervals"].as_array().unwrap();
        assert!((2..=4).contains(&ivs.len()), "{} periods in 3 s", ivs.len());
        assert!(ivs.iter().all(|i| i["threads"] == 5), "{ivs:?}");
        let summed: u64 = ivs.iter().map(|i| i["events"].as_u64().unwrap()).sum();
        // The periods cover the run, but for an event per thread that ended after its client's last
        // period, as in one process.
        assert!(summed <= events && summed + 5 >= events, "{summed} events in the periods of {events}");

        // Each client's raw latencies (--latency-log): one histogram of all of them has the percentiles
        // of the merged report, exactly.
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("lat");
        let logged = format!("--latency-log={}", log.display());
        let o = versus(&strs(&args(s, &["--clients=2", "--threads=4", "--time=2", "--format=json", &logged, "run"])));
        let doc = json_of(&o);
        let mut all = versus::workload::sysbench::stats::new_histogram();
        for k in 1..=2 {
            let text = std::fs::read_to_string(dir.path().join(format!("lat.{k}"))).unwrap();
            for l in text.lines() {
                all.record(l.parse().unwrap()).unwrap();
            }
        }
        assert_eq!(Some(all.len()), doc["totals"]["events"].as_u64());
        let max_ms = doc["latency_ms"]["max"].as_f64().unwrap();
        for p in ["50", "95", "99", "99.9"] {
            let want =
                (versus::workload::sysbench::stats::percentile(&all, p.parse().unwrap()) as f64 / 1000.0).min(max_ms);
            assert_eq!(doc["latency_ms"]["percentiles"][p].as_f64(), Some(want), "p{p}");
        }
        // A log file that exists is never overwritten: refused before anything runs.
        let o = versus(&strs(&args(s, &["--clients=2", "--threads=2", "--time=1", &logged, "run"])));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("lat.1 exists; versus does not overwrite files"), "{err}");

        // The text report is sysbench's, once; the clients are one line on stderr.
        let o = versus(&strs(&args(s, &["--clients=2", "--threads=2", "--time=2", "--report-interval=1", "run"])));
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{out}{err}");
        assert_eq!(out.matches("SQL statistics:").count(), 1, "{out}");
        assert_eq!(out.matches("Threads started!").count(), 1, "{out}");
        assert!(out.contains("Number of threads: 2") && out.contains("[ 1s ] thds: 2 tps: "), "{out}");
        assert!(err.contains("versus: 2 clients on 1 host(s)") && err.contains("their starts spread over"), "{err}");
    });
}

#[test]
fn the_rate_is_shared_so_that_the_whole_schedule_is_the_one_asked() {
    with_server(|s| {
        let o =
            versus(&strs(&args(s, &["--clients=2", "--threads=4", "--rate=101", "--time=4", "--format=json", "run"])));
        let doc = json_of(&o);
        let rates: Vec<u64> =
            doc["clients"]["parts"].as_array().unwrap().iter().map(|p| p["rate"].as_u64().unwrap()).collect();
        assert_eq!(rates, [51, 50]);
        // Poisson arrivals at 101/s for 4 s: about 404 events (±20 % is about 4 standard deviations).
        let tps = doc["totals"]["tps"].as_f64().unwrap();
        assert!((81.0..=121.0).contains(&tps), "{tps} tps at --rate=101");
    });
}

#[test]
fn bad_client_counts_are_refused_before_anything_runs() {
    with_server(|s| {
        let run = |more: &[&str], needle: &str| {
            let mut a = args(s, more);
            a.push("run".into());
            fails_with(&strs(&a), needle);
        };
        run(&["--clients=3", "--threads=2"], "--clients: invalid value '3': 3 clients need at least 3 threads");
        run(&["--clients=0"], "--clients: invalid value '0': expected 1 to 1024");
        run(&["--clients=2", "--threads=2", "--rate=1"], "--rate=1 cannot be shared by 2 clients");
        run(&["--clients=2", "--threads=2", "--report-checkpoints=1"], "--report-checkpoints are not taken");
    });
}

#[test]
fn a_client_that_cannot_reach_the_server_fails_the_run_before_the_barrier() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let o = versus(&[
        "oltp_point_select",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--clients=2",
        "--threads=2",
        "--time=2",
        "run",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", output_text(&o));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(last.contains(&format!("of 2 on {host} could not start the load: connect: unable to connect")), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Threads started!"), "{}", output_text(&o));
}

/// The processes now running for which `keep` holds (given their pid).
fn processes(keep: impl Fn(u32) -> bool) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|p| keep(*p))
        .collect()
}

/// The client processes of coordinator `pid`.
fn clients_of(pid: u32) -> Vec<u32> {
    processes(|p| {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        ppid == Some(pid)
    })
}

/// Kills process `victim` (a client of the run `child`) with -9 after 2 s, and waits for the run: its
/// exit code, stdout and stderr, and stderr's last line.
fn kill_mid_run(child: std::process::Child, victim: u32) -> (Option<i32>, String, String, String) {
    std::thread::sleep(Duration::from_secs(2));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    let last = err.trim().lines().last().unwrap_or_default().to_string();
    (o.status.code(), out, err, last)
}

#[test]
fn a_client_killed_mid_run_fails_it_and_the_rest_is_marked_as_a_part() {
    with_server(|s| {
        let child = Command::new(env!("CARGO_BIN_EXE_versus"))
            .arg("sysbench")
            .args(args(s, &["--clients=2", "--threads=2", "--time=6", "--report-interval=1", "run"]))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        let clients = loop {
            let c = clients_of(child.id());
            if c.len() == 2 {
                break c;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "no 2 clients after 20 s: {c:?}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let victim = clients[1];
        let (code, out, err, last) = kill_mid_run(child, victim);
        assert_eq!(code, Some(1), "{out}{err}");
        assert!(last.starts_with("versus: error: client "), "{err}");
        assert!(last.contains(&format!("(pid {victim}) did not finish: it was killed by signal 9")), "{err}");
        assert!(last.contains("the figures are of 1 of 2 clients, not the whole load"), "{err}");
        // The figures that were measured are shown, and said to be a part.
        assert!(out.contains("WARNING: the figures below are of 1 of 2 clients, not the whole load"), "{out}");
        assert!(out.contains("SQL statistics:"), "{out}");
        assert!(!std::path::Path::new(&format!("/proc/{}", clients[0])).exists(), "the other client is left running");
    });
}

/// The processes of Slurm task `task` of a split load.
fn slurm_task(task: u32) -> Vec<u32> {
    processes(|p| {
        let env = std::fs::read(format!("/proc/{p}/environ")).unwrap_or_default();
        let vars: Vec<&[u8]> = env.split(|b| *b == 0).collect();
        vars.contains(&&b"VERSUS_CLIENT_PART=procid/2"[..]) && vars.contains(&format!("SLURM_PROCID={task}").as_bytes())
    })
}

#[test]
fn a_split_load_runs_as_the_tasks_of_one_slurm_job_step() {
    let Some(slurm) = slurm_cluster::TempSlurm::start_if_installed() else { return };
    with_server(|s| {
        let run = |more: &[&str]| {
            let mut a = args(s, &["--clients-on=slurm", "--report-interval=1"]);
            a.extend(more.iter().map(|m| m.to_string()));
            Command::new(env!("CARGO_BIN_EXE_versus"))
                .arg("sysbench")
                .args(a)
                .env("SLURM_CONF", slurm.conf())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        // Four tasks on the test node: one report, every client on the node, started together.
        let o = run(&["--clients=4", "--threads=4", "--time=3", "--format=json", "run"]).wait_with_output().unwrap();
        let doc = json_of(&o);
        let c = &doc["clients"];
        assert_eq!((c["count"].as_u64(), c["complete"].as_bool()), (Some(4), Some(true)), "{c}\n{}", slurm.logs());
        let parts = c["parts"].as_array().unwrap();
        assert!(parts.iter().all(|p| p["host"] == slurm.node.as_str() && p["threads"] == 1), "{c}");
        assert!(c["skew_ms"].as_f64().unwrap() < 100.0, "{c}");
        let by_client: u64 = parts.iter().map(|p| p["events"].as_u64().unwrap()).sum();
        assert_eq!(doc["totals"]["events"].as_u64(), Some(by_client));

        // A task killed with -9: srun says so, the other task goes on, the run fails and says whose
        // figures it shows.
        let child = run(&["--clients=2", "--threads=2", "--time=6", "run"]);
        let t0 = Instant::now();
        let victim = loop {
            if let Some(p) = slurm_task(1).first() {
                break *p;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "task 1 did not start in 30 s\n{}", slurm.logs());
            std::thread::sleep(Duration::from_millis(100));
        };
        let (code, out, err, last) = kill_mid_run(child, victim);
        assert_eq!(code, Some(1), "{out}{err}");
        // srun usually reports the killed task and lets the other finish (--kill-on-bad-exit=0); once,
        // on a loaded machine, it force-terminated the whole step instead (exit 137, no task report),
        // and then no client finished. Either way the run fails and says whose figures it shows.
        let killed = format!("client 2 of 2 on {} (pid {victim}) did not finish: it was killed", slurm.node);
        let step_ended = "did not finish: it ended with its job step (srun exited with status 137";
        if last.contains(&killed) {
            assert!(out.contains("WARNING: the figures below are of 1 of 2 clients, not the whole load"), "{out}");
        } else {
            assert!(
                last.contains(step_ended) && last.ends_with("the figures are of 0 of 2 clients, not the whole load"),
                "{err}\n{}",
                slurm.logs()
            );
        }
    });
}

#[test]
fn an_experiment_cell_with_clients_is_one_stored_run_with_each_clients_histogram() {
    // The experiment prepares its own tables.
    let server = start_server();
    let s = &server;
    {
        let home = common::home::Home::new("versus-clients-");
        let text = common::external_experiment("split", s.port)
            .replace("threads = [1]", "threads = [4]\nrepetitions = 1")
            .replace("duration = \"1s\"", "duration = \"2s\"")
            .replace("table-size = 100 }", "table-size = 1000, clients = 2 }");
        assert!(text.contains("clients = 2"), "{text}");
        let pw = [("SAFETY_TEST_PW", s.password.as_str())];
        // More clients than a cell's threads: refused before anything runs.
        let wide = home
            .file("wide", &text.replace("clients = 2", "clients = 8").replace("name = \"split\"", "name = \"wide\""));
        let out = home.versus(&["run", wide.to_str().unwrap()]).envs(pw).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("clients = 8 need at least 8 threads to share, not 4"), "{err}");
        assert!(home.store().latest_experiment_named("wide").unwrap().is_none(), "nothing was stored: {err}");
        let file = home.file("split", &text);
        let out = home.versus(&["run", file.to_str().unwrap()]).envs(pw).output().unwrap();
        assert!(out.status.success(), "{}{}", output_text(&out), home.output(&["runs", "split"]).1);
        let store = home.store();
        let id = store.latest_experiment_named("split").unwrap().unwrap().id;
        let runs = store.runs(id).unwrap();
        assert_eq!(runs.len(), 1, "{runs:?}");
        let detail = store.run(runs[0].id).unwrap().unwrap();
        let kinds: Vec<&str> = detail.histograms.iter().filter(|h| h.t_s.is_none()).map(|h| h.kind.as_str()).collect();
        assert_eq!(kinds, ["client-1", "client-2", "total"], "{kinds:?}");
        let count = |kind: &str| {
            let h = detail.histograms.iter().find(|h| h.kind == kind).unwrap();
            versus::store::decode_histogram(&h.data).unwrap().len()
        };
        assert_eq!(count("client-1") + count("client-2"), count("total"));
        let summary = detail.run.summary.as_ref().expect("a finished run");
        assert_eq!(summary.events, count("total"), "{summary:?}");
        // The stored command line has no password (the clients got it in their environment).
        let command = detail.command.map(|c| c.to_string()).unwrap_or_default();
        assert!(!command.contains(&s.password), "{command}");
        let show = common::home::ok(home.output(&["show", &runs[0].id.to_string()]), "show");
        assert_eq!(show.matches("SQL statistics:").count(), 1, "{show}");
    }
}
