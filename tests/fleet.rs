//! Fleets: the sbatch script and the Kubernetes manifest as golden files, the manifest's round trip
//! through the typed Kubernetes API structures, the command line, and a real single-node Slurm
//! cluster running an experiment as a job array into a PostgreSQL store while one task is killed.

#[path = "fleet/canary.rs"]
mod canary;
#[path = "common/experiment.rs"]
mod experiment;
#[path = "fleet/faults.rs"]
mod faults;
#[path = "common/home.rs"]
mod home;
#[path = "common/postgres.rs"]
mod postgres;
#[path = "common/processes.rs"]
mod processes;
#[path = "common/slurm.rs"]
mod slurm_cluster;

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use versus::experiment::{ExperimentFile, Plan};
use versus::fleet::k8s::{self, K8sOptions};
use versus::fleet::{FleetJob, slurm};
use versus::store::Location;

use experiment::sync_nosync;
use home::{Home, ok};
use processes::{kill9, processes_mentioning};

const EXPERIMENT: &str = r#"
name = "Nightly durability"
builds = ["system"]
threads = [1, 4]
duration = "2s"
repetitions = 5
[[configs]]
name = "sync"
file = "base.cnf"
set = { innodb_flush_log_at_trx_commit = 1 }
[[configs]]
name = "nosync"
set = { innodb_flush_log_at_trx_commit = 0 }
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 1000 }
"#;

/// The job for EXPERIMENT in `dir`, with the machine-specific paths replaced by fixed ones.
fn job(dir: &Path, store: &str) -> FleetJob {
    std::fs::write(dir.join("nightly.toml"), EXPERIMENT).unwrap();
    std::fs::write(dir.join("base.cnf"), "[mysqld]\ninnodb_buffer_pool_size = 256M\n").unwrap();
    let (file, text) = ExperimentFile::load(&dir.join("nightly.toml")).unwrap();
    let plan = Plan::new(&file, dir).unwrap();
    let mut job = FleetJob::new(&plan, &dir.join("nightly.toml"), &text, &Location::parse(store), 3).unwrap();
    job.file = "/shared/exp/nightly.toml".into();
    job.versus = "/opt/versus/bin/versus".into();
    job
}

#[test]
fn sbatch_script_golden() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(dir.path(), "postgres://bench:hunter2@db.example:5432/versus");
    assert_eq!(j.blocks, 5);
    assert!(!j.store.contains("hunter2"), "{}", j.store);
    j.partition = Some("bench".into());
    j.constraint = Some("epyc-7b13".into());
    insta::assert_snapshot!("sbatch", slurm::sbatch(&j).unwrap());
}

#[test]
fn kubernetes_manifest_golden_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(dir.path(), "postgres://bench@db.example/versus");
    j.constraint = Some("hc-0123456789ab".into());
    let opts = K8sOptions { image: "registry.example/versus:0.1.0".into(), password_secret: "versus-db".into() };
    let text = k8s::manifest(&j, &opts).unwrap();
    insta::assert_snapshot!("k8s_manifest", text);

    // Every document reads back into the typed structures it was written from.
    let docs: Vec<&str> = text.split("\n---\n").skip(1).collect();
    assert_eq!(docs.len(), 2, "{text}");
    let config: ConfigMap = serde_norway::from_str(docs[0]).unwrap();
    assert_eq!(config, k8s::config_map(&j));
    let back: Job = serde_norway::from_str(docs[1]).unwrap();
    assert_eq!(back, k8s::indexed_job(&j, &opts));
    let spec = back.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(5), Some(3)));
    let data = config.data.unwrap();
    assert!(data["experiment.toml"].contains("Nightly durability") && data.contains_key("base.cnf"));
}

#[test]
fn a_config_file_in_another_directory_cannot_go_into_a_config_map() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cnf")).unwrap();
    std::fs::write(dir.path().join("cnf/base.cnf"), "[mysqld]\n").unwrap();
    let mut j = job(dir.path(), "postgres://bench@db.example/versus");
    j.config_files = vec![("cnf/base.cnf".into(), "[mysqld]\n".into())];
    let e = k8s::manifest(&j, &K8sOptions::default()).unwrap_err().to_string();
    assert!(e.contains("'cnf/base.cnf' is in another directory"), "{e}");
}

#[test]
fn command_line_writes_the_script_and_warns_about_a_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nightly.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    std::fs::write(dir.path().join("base.cnf"), "[mysqld]\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "slurm", file.to_str().unwrap(), "--hosts", "2"])
        .env("VERSUS_HOME", dir.path())
        .env_remove("VERSUS_DB")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is a SQLite file: that works only when every task runs on this machine"), "{stderr}");
    let script = std::fs::read_to_string(dir.path().join("nightly.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-4%2\n"), "{script}");
    assert!(script.contains(&format!("export VERSUS_DB={}", dir.path().join("results.db").display())), "{script}");

    let k = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "k8s", file.to_str().unwrap(), "-o", "-", "--db", "postgres://u:secret@h/db"])
        .env("VERSUS_HOME", dir.path())
        .output()
        .unwrap();
    assert!(k.status.success(), "{}", String::from_utf8_lossy(&k.stderr));
    let yaml = String::from_utf8_lossy(&k.stdout);
    assert!(yaml.contains("completionMode: Indexed") && !yaml.contains("u:secret"), "{yaml}");

    let bad = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "slurm", file.to_str().unwrap(), "--hosts", "0", "-o", "-"])
        .env("VERSUS_HOME", dir.path())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--hosts: must be at least 1"));
}

#[test]
fn hostile_scheduler_values_are_refused_in_one_line_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nightly.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    std::fs::write(dir.path().join("base.cnf"), "[mysqld]\n").unwrap();
    let f = file.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["slurm", f, "--partition", "bench\ntouch X"], "--partition: 'bench\\ntouch X'"),
        (&["slurm", f, "--constraint", "epyc$(touch X)"], "--constraint: 'epyc$(touch X)'"),
        (&["slurm", f, "--constraint", "a b"], "--constraint: 'a b'"),
        (&["k8s", f, "--constraint", "hc-1\nkind: Pod"], "--constraint: 'hc-1\\nkind: Pod'"),
        (&["k8s", f, "--image", "versus:1 --privileged"], "--image: 'versus:1 --privileged'"),
        (&["k8s", f, "--password-secret", "Versus_DB"], "--password-secret: 'Versus_DB'"),
    ];
    for (args, said) in cases {
        let out = assert_cmd::Command::cargo_bin("versus")
            .unwrap()
            .arg("fleet")
            .args(args)
            .args(["--db", "postgres://u@h/db"])
            .env("VERSUS_HOME", dir.path())
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(&format!("versus: error: {said} is not valid here")), "{args:?}: {err}");
        let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(written.len(), 2, "{args:?}: {written:?}");
    }
}

/// Two configs, three blocks of one second each.
fn small() -> String {
    sync_nosync("fleet-small", "threads = [1]\nduration = \"1s\"\nwarmup = \"0s\"\nrepetitions = 3\n", 200)
}

/// What the fleet tests that measure start from: a PostgreSQL cluster with a database `fleet`, and a
/// home with the distribution's build and [`small`] in it.
struct Fleet {
    pg: postgres::TempPostgres,
    url: String,
    home: Home,
    /// [`small`]'s path.
    file: String,
}

impl Fleet {
    fn start() -> Fleet {
        let pg = postgres::TempPostgres::start();
        let url = pg.url("fleet");
        let home = Home::new("versus-fleet-");
        let file = home.path().join("small.toml");
        std::fs::write(&file, small()).unwrap();
        Fleet { pg, url, file: file.to_str().unwrap().to_string(), home }
    }

    /// `versus ARGS` in the background with `env` set, its output in NAME.out and NAME.err in the home.
    fn spawn(&self, name: &str, args: &[&str], env: &[(&str, &Path)]) -> Child {
        let log = |ext: &str| std::fs::File::create(self.home.path().join(format!("{name}.{ext}"))).unwrap();
        let mut c = self.home.versus(args);
        c.envs(env.iter().copied()).stdout(log("out")).stderr(log("err"));
        Child(c.spawn().unwrap())
    }

    /// [`small`] as experiment `fleet-NAME` of two blocks, written to NAME.toml in the home; its path.
    fn two_blocks(&self, name: &str) -> String {
        let text = sync_nosync(
            &format!("fleet-{name}"),
            "threads = [1]\nduration = \"1s\"\nwarmup = \"0s\"\nrepetitions = 2\n",
            200,
        );
        self.home.write(&format!("{name}.toml"), &text).to_str().unwrap().to_string()
    }

    /// Waits up to 240 s for the store to hold a done block while the `follower` of the experiment
    /// still runs.
    fn wait_for_block_0(&self, follower: &mut Child, context: impl Fn() -> String) {
        let deadline = Instant::now() + Duration::from_secs(240);
        loop {
            let tables = self.pg.sql("fleet", "SELECT count(*) FROM pg_tables WHERE tablename = 'block_attempts'");
            let done = || self.pg.sql("fleet", "SELECT count(*) FROM block_attempts WHERE status = 'done'");
            if tables == "1" && done() == "1" {
                break;
            }
            assert!(follower.0.try_wait().unwrap().is_none(), "the follower ended early\n{}", context());
            assert!(Instant::now() < deadline, "block 0 was not done in 240 s\n{}", context());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The text of NAME in the home ("" when absent).
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.home.path().join(name)).unwrap_or_default()
    }
}

/// What must be the same in a fleet's comparison and a local run's: sides (targets, runs done, failed,
/// unfinished), cases, and each cell's number of values and missing ones.
fn shape(json: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let sides: Vec<serde_json::Value> = v["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| serde_json::json!([s["label"], s["targets"], s["runs_done"], s["runs_failed"], s["runs_unfinished"]]))
        .collect();
    let cells: Vec<serde_json::Value> = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::json!([c["case"], c["side"], c["n"], c["missing"]]))
        .collect();
    serde_json::json!({ "vs": v["vs"], "sides": sides, "cases": v["cases"], "cells": cells })
}

/// A running child process, killed (by its PID) and reaped when dropped.
struct Child(std::process::Child);

impl Child {
    /// Waits for the process to end, at most `secs` seconds; fails with what `context` says then.
    fn wait_up_to(&mut self, secs: u64, what: &str, context: impl Fn() -> String) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "{what} did not end in {secs} s\n{}", context());
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn slurm_job_array_requeues_a_killed_task_and_compares_like_a_local_run() {
    let Some(cluster) = slurm_cluster::TempSlurm::start_if_installed() else { return };
    let f = Fleet::start();
    let (pg, url, h, file) = (&f.pg, f.url.as_str(), f.home.path(), f.file.as_str());
    let conf = cluster.conf();

    // `versus fleet slurm --submit`: writes the script, submits it, follows it, requeues what died.
    let mut submit =
        f.spawn("submit", &["fleet", "slurm", file, "--hosts", "1", "--submit", "--db", url], &[("SLURM_CONF", &conf)]);
    let outputs = || {
        let mut s = String::new();
        for e in std::fs::read_dir(h).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".out") || name.ends_with(".err") {
                s += &format!("--- {name}\n{}\n", std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        s + &cluster.logs()
    };

    // Wait until block `k`'s first attempt is half way: one of its runs stored, the next one running.
    let mid_block = |k: u32| {
        let sql = format!(
            "SELECT count(*) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id \
             WHERE a.block = {k} AND a.attempt = 1 AND a.status = 'running' AND r.status = 'done'"
        );
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let tables = pg.sql("fleet", "SELECT count(*) FROM pg_tables WHERE tablename = 'block_attempts'");
            if tables == "1" && pg.sql("fleet", &sql) != "0" {
                break;
            }
            assert!(Instant::now() < deadline, "block {k} did not get half way in 300 s\n{}", outputs());
            std::thread::sleep(Duration::from_millis(200));
        }
        let running = cluster.command("squeue").args(["-h", "-r", "-t", "running", "-o", "%i"]).output().unwrap();
        let running = String::from_utf8_lossy(&running.stdout).trim().to_string();
        assert!(running.ends_with(&format!("_{k}")) && !running.contains('\n'), "running tasks: {running:?}");
        running
    };

    // Block 0: `scancel --signal=KILL` of its task. Slurm cancels the task (SIGTERM first, then SIGKILL
    // after KillWait): versus stops cleanly and records the attempt as interrupted when it manages to
    // within KillWait (5 s here), and is killed with it still running when it does not (a loaded host).
    // Either way the task is CANCELLED, and the follower requeues it because the rest of the job goes on.
    let task0 = mid_block(0);
    let killed = cluster.command("scancel").args(["--signal=KILL", &task0]).output().unwrap();
    assert!(killed.status.success(), "scancel: {}", String::from_utf8_lossy(&killed.stderr));
    // Block 1: SIGKILL straight to the task's versus process (what a lost node or the OOM killer does):
    // no chance to clean up, the attempt stays `running`, its server dies with it.
    let task1 = mid_block(1);
    let pids: Vec<u32> = processes_mentioning(file)
        .into_iter()
        .filter(|(_, l)| l.contains(" run ") && l.contains(" --block 1 "))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(pids.len(), 1, "{:?}", processes_mentioning(file));
    kill9(pids[0]);

    let status = submit.wait_up_to(480, "the job", outputs);
    let out = std::fs::read_to_string(h.join("submit.out")).unwrap();
    let err = std::fs::read_to_string(h.join("submit.err")).unwrap();
    assert!(status.success(), "the submitter failed\n{}", outputs());
    assert!(out.contains("ended: 3 of 3 block(s) complete (2 requeue(s))"), "{}", outputs());
    let requeued =
        |k: u32, why: &str, task: &str| format!("block {k}: {why} during attempt 1; requeued task {task} (1 of 3)");
    assert!(err.contains(&requeued(0, "its task was stopped (CANCELLED)", &task0)), "{}", outputs());
    assert!(err.contains(&requeued(1, "its task died", &task1)), "{}", outputs());
    assert_eq!(err.matches("; requeued task ").count(), 2, "{}", outputs());

    // The store: the stopped attempt failed (interrupted recorded) or, when versus was killed before it
    // could record that, abandoned by the next attempt; the killed one abandoned; one canonical attempt
    // per block, every cell measured once per block (0 lost, 0 duplicated), each run by the attempt that
    // finished its block.
    let attempts = "SELECT string_agg(block || ':' || attempt || ':' || status, ' ' ORDER BY block, attempt) \
                    FROM block_attempts";
    let attempts = pg.sql("fleet", attempts);
    assert!(
        ["0:1:failed", "0:1:abandoned"]
            .iter()
            .any(|a| attempts == format!("{a} 0:2:done 1:1:abandoned 1:2:done 2:1:done")),
        "{attempts}\n{}",
        outputs()
    );
    let stopped = pg.sql("fleet", "SELECT error FROM block_attempts WHERE block = 0 AND attempt = 1");
    assert!(
        [("failed", "interrupted"), ("abandoned", "its task ended without finishing the block")]
            .iter()
            .any(|(s, e)| attempts.starts_with(&format!("0:1:{s} ")) && stopped == *e),
        "{attempts}: {stopped}"
    );
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs"), "6");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs WHERE status = 'done'"), "6");
    assert_eq!(pg.sql("fleet", "SELECT count(DISTINCT (cell_id, repetition)) FROM runs"), "6");
    assert_eq!(
        pg.sql(
            "fleet",
            "SELECT count(*) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id \
             WHERE a.status = 'done' AND a.block = r.repetition - 1"
        ),
        "6"
    );
    // Nothing the killed task started lives on.
    assert_eq!(processes_mentioning(h.to_str().unwrap()), Vec::<(u32, String)>::new());

    // The same kind of comparison as the same experiment run locally.
    let fleet = ok(f.home.output(&["report", "fleet-small", "--db", url, "--format", "json"]), "compare (fleet)");
    let table = ok(f.home.output(&["compare", "fleet-small", "--db", url, "--color", "never"]), "compare (fleet)");
    assert!(table.contains("nosync") && table.contains("95 % CI"), "{table}");
    let local_db = h.join("local.db");
    let local_db = local_db.to_str().unwrap();
    ok(f.home.output(&["run", file, "--db", local_db]), "local run");
    let local = ok(f.home.output(&["report", "fleet-small", "--db", local_db, "--format", "json"]), "compare (local)");
    assert_eq!(shape(&fleet), shape(&local));
    let local_table = ok(f.home.output(&["compare", "fleet-small", "--db", local_db, "--color", "never"]), "compare");
    // Column widths follow the values; the columns themselves must be the same, but for the note
    // column, which is shown only when a row has a note and so depends on the measured values (a
    // change within the noise band, say, in one run and not the other).
    let header = |t: &str| {
        t.lines().find(|l| l.starts_with("workload ")).map(|l| {
            l.split("  ").map(str::trim).filter(|c| !c.is_empty() && *c != "note").collect::<Vec<_>>().join("|")
        })
    };
    assert_eq!(header(&table), header(&local_table));

    // The whole job cancelled (`scancel JOB`) while its first block measures: nothing is requeued (a
    // cancel is not undone), the follower names every block incomplete and exits 1, nothing lives on.
    let cancel_started = Instant::now();
    let cancel = h.join("cancel.toml");
    std::fs::write(
        &cancel,
        small().replace("fleet-small", "fleet-cancel").replace("repetitions = 3", "repetitions = 2"),
    )
    .unwrap();
    let cancel = cancel.to_str().unwrap();
    let mut submit = f.spawn(
        "cancel",
        &["fleet", "slurm", cancel, "--hosts", "1", "--submit", "--db", url],
        &[("SLURM_CONF", &conf)],
    );
    let measuring = "SELECT count(*) FROM block_attempts a JOIN experiments e ON e.id = a.experiment_id \
                     WHERE e.name = 'fleet-cancel' AND a.block = 0 AND a.status = 'running'";
    let deadline = Instant::now() + Duration::from_secs(120);
    while pg.sql("fleet", measuring) != "1" {
        assert!(Instant::now() < deadline, "block 0 of fleet-cancel did not start in 120 s\n{}", outputs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let job = f.read("cancel.out");
    let job = job.split_whitespace().skip_while(|w| *w != "job").nth(1).unwrap().trim_end_matches(':').to_string();
    let cancelled = cluster.command("scancel").arg(&job).output().unwrap();
    assert!(cancelled.status.success(), "scancel {job}: {}", String::from_utf8_lossy(&cancelled.stderr));
    let status = submit.wait_up_to(120, "the cancelled job's follower", outputs);
    let err = f.read("cancel.err");
    assert_eq!(status.code(), Some(1), "{}", outputs());
    assert!(!err.contains("requeued task"), "{}", outputs());
    assert!(err.contains("block 0 is incomplete: attempt 1 was stopped: its job was cancelled"), "{}", outputs());
    assert!(err.contains("block 1 is incomplete: its task was cancelled before it started the block"), "{}", outputs());
    assert!(err.contains(&format!("job {job} ended with 2 of 2 block(s) incomplete (0 1)")), "{}", outputs());
    let left = "SELECT count(*) FROM block_attempts a JOIN experiments e ON e.id = a.experiment_id \
                WHERE e.name = 'fleet-cancel' AND (a.block <> 0 OR a.status = 'done')";
    assert_eq!(pg.sql("fleet", left), "0");
    // A task killed while it prepares leaves its bootstrap server to end by itself once its input closes:
    // wait for everything under the home to go, not just the job's own processes.
    let home = h.to_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(processes_mentioning(cancel).is_empty() && processes_mentioning(home).is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(processes_mentioning(cancel), Vec::<(u32, String)>::new());
    eprintln!("whole-job cancel: {:.0?}", cancel_started.elapsed());
    assert_eq!(processes_mentioning(home), Vec::<(u32, String)>::new());
}

#[test]
fn a_task_whose_store_dies_mid_block_fails_in_one_line_and_its_block_runs_again_whole() {
    let f = Fleet::start();
    let (pg, url, h, file) = (&f.pg, f.url.as_str(), f.home.path(), f.file.as_str());
    // A recovery file would go to the temporary directory (the store is not a file): this one.
    let mut task = f.spawn("task", &["run", file, "--block", "0", "--db", url], &[("TMPDIR", h)]);
    let read = |name: &str| f.read(name);

    // The store dies (every session cut at once) while the block is half way: its first run stored,
    // the second one measuring.
    let half_way = "SELECT count(*) FILTER (WHERE r.status = 'done') || ' ' || count(*) FILTER (WHERE r.status = 'running') \
                    FROM runs r JOIN block_attempts a ON a.id = r.attempt_id WHERE a.status = 'running'";
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let tables = pg.sql("fleet", "SELECT count(*) FROM pg_tables WHERE tablename = 'block_attempts'");
        if tables == "1" && pg.sql("fleet", half_way) == "1 1" {
            break;
        }
        assert!(task.0.try_wait().unwrap().is_none(), "the task ended early\n{}{}", read("task.out"), read("task.err"));
        assert!(Instant::now() < deadline, "block 0 did not get half way in 240 s\n{}", read("task.err"));
        std::thread::sleep(Duration::from_millis(100));
    }
    pg.crash();
    let status = task.wait_up_to(120, "the task", || read("task.err"));
    let (out, err) = (read("task.out"), read("task.err"));
    // It fails, with a code a scheduler retries (not 3, "do not retry"), in one line naming the store.
    assert!(!status.success() && status.code().is_some_and(|c| c != 3), "{status:?}\n{out}{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(err.trim_end().lines().last() == Some(errors[0]) && errors[0].starts_with("versus: error: "), "{err}");
    assert!(errors[0].contains(&format!("{url}: results store")) && !err.contains("panicked"), "{err}");
    // The store's failure is not the run's: no run is said to have failed.
    assert!(!err.contains("failed:") && !out.contains("failed:"), "{out}{err}");
    assert!(!out.contains("blocks done"), "{out}");

    // Nothing half-written: the attempt is still open (it did not finish the block), the run that was
    // going on when the store died has no measurement, the one before it has all of its own.
    pg.restart();
    let attempts = "SELECT string_agg(block || ':' || attempt || ':' || status, ' ' ORDER BY block, attempt) \
                    FROM block_attempts";
    assert_eq!(pg.sql("fleet", attempts), "0:1:running");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs WHERE repetition = 1"), "2");
    // A run measured but refused by the dead store is not kept: its block counts only when one attempt
    // measures it whole. The error gives the command that does. (Rarely, on a slow host, the store dies
    // after the second run was stored, before the block was closed: then no run was refused.)
    let done = pg.sql("fleet", "SELECT count(*) FROM runs WHERE repetition = 1 AND status = 'done'");
    let rerun = errors[0].split('`').nth(1).filter(|_| errors[0].contains("was measured but not stored"));
    assert!((done == "1" && rerun.is_some()) || (done == "2" && rerun.is_none()), "{done} done: {err}");
    let recovery_files: Vec<_> = std::fs::read_dir(h)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".recovery.json"))
        .collect();
    assert!(recovery_files.is_empty(), "{recovery_files:?}: {err}");
    let unfinished = "SELECT count(*) FROM runs r WHERE r.status <> 'done' AND (r.tps IS NOT NULL \
                      OR EXISTS (SELECT 1 FROM intervals i WHERE i.run_id = r.id) \
                      OR EXISTS (SELECT 1 FROM histograms g WHERE g.run_id = r.id))";
    assert_eq!(pg.sql("fleet", unfinished), "0");
    let measured = "SELECT count(*) FROM runs r WHERE r.status = 'done' AND r.tps IS NOT NULL \
                    AND EXISTS (SELECT 1 FROM intervals i WHERE i.run_id = r.id)";
    assert_eq!(pg.sql("fleet", measured), done);

    // The task again (the scheduler's retry): a new attempt measures the whole block on this host,
    // the open one is abandoned; each cell once, by the attempt that finished the block.
    let rerun = rerun.map(|c| c.to_string()).unwrap_or_else(|| format!("versus run {file} --block 0 --db {url}"));
    let args: Vec<&str> = rerun.split_whitespace().collect();
    assert_eq!(args[..2], ["versus", "run"], "{rerun}");
    assert!(args.windows(2).any(|w| w == ["--db", url]), "{rerun}");
    let again = ok(f.home.output(&args[1..]), "block 0 again");
    assert!(again.contains("blocks done: 0"), "{again}");
    assert_eq!(pg.sql("fleet", attempts), "0:1:abandoned 0:2:done");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs WHERE repetition = 1 AND status = 'done'"), "2");
    assert_eq!(
        pg.sql(
            "fleet",
            "SELECT count(*) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id \
             WHERE r.repetition = 1 AND a.attempt = 2 AND r.status = 'done'"
        ),
        "2"
    );
    assert_eq!(pg.sql("fleet", "SELECT count(DISTINCT (cell_id, repetition)) FROM runs"), "6");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs"), "6");
    assert_eq!(processes_mentioning(h.to_str().unwrap()), Vec::<(u32, String)>::new());
}

#[test]
fn sbatch_refusals_are_one_line_that_says_what_to_do() {
    let Some(cluster) = slurm_cluster::TempSlurm::start_if_installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, small()).unwrap();
    let submit = |partition: &str, conf: &Path| {
        let out = assert_cmd::Command::cargo_bin("versus")
            .unwrap()
            .args(["fleet", "slurm", file.to_str().unwrap(), "--partition", partition, "--submit", "--db"])
            .arg(dir.path().join("r.db"))
            .env("VERSUS_HOME", dir.path())
            .env("SLURM_CONF", conf)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{err}");
        // The notes before the refusal (the script written, the SQLite store) stay; the refusal is the
        // last line, and the only one of sbatch's.
        let last = err.lines().last().unwrap_or_default().to_string();
        assert!(last.starts_with("versus: error: sbatch refused "), "{err}");
        assert!(!err.contains("sbatch: error"), "sbatch's own lines are not passed on: {err}");
        last
    };
    let last = submit("nosuch", &cluster.conf());
    assert!(last.contains("Invalid partition name specified; `sinfo -s` lists the partitions"), "{last}");
    drop(cluster);
    // A cluster whose controller is not running.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=gone\nSlurmctldHost=localhost\nSlurmctldPort={port}\n\
             NodeName=localhost CPUs=1\nPartitionName=debug Nodes=localhost Default=YES\n"
        ),
    )
    .unwrap();
    let last = submit("debug", &conf);
    assert!(last.contains("Unable to contact slurm controller") && last.contains("is Slurm running?"), "{last}");
}
