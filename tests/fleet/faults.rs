//! A fleet's own faults on the local Slurm cluster: a task whose host fails the canary requeues only
//! itself (never the array, finished tasks included), a finished block is skipped before the canary,
//! and an attempt left running by a killed task is abandoned once a later one is rejected; the follower waits out a restart of the results store instead of ending at its first error.

use std::time::{Duration, Instant};

use super::Fleet;
use super::home::ok;
use super::slurm_cluster::TempSlurm;

/// "block:attempt:status" of the experiment's real blocks (the fake history is at 100 and up).
fn attempts(f: &Fleet) -> String {
    f.pg.sql(
        "fleet",
        "SELECT string_agg(block || ':' || attempt || ':' || status, ' ' ORDER BY block, attempt) \
         FROM block_attempts WHERE block < 100",
    )
}

/// Waits until job `id` has left the queue, releasing requeued tasks Slurm holds back (`BeginTime`)
/// as `versus fleet slurm --submit` does, and running `each` every 100 ms meanwhile.
fn wait_for_job(cluster: &TempSlurm, id: &str, secs: u64, each: impl Fn(), context: impl Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        each();
        let q = cluster.command("squeue").args(["-h", "-r", "-j", id, "-o", "%i %T %r"]).output().unwrap();
        let text = String::from_utf8_lossy(&q.stdout).to_string();
        if text.trim().is_empty() {
            return;
        }
        for line in text.lines().filter(|l| l.ends_with(" PENDING BeginTime")) {
            let task = line.split_whitespace().next().unwrap();
            let _ = cluster.command("scontrol").args(["update", &format!("JobId={task}"), "StartTime=now"]).output();
        }
        assert!(Instant::now() < deadline, "job {id} still queued after {secs} s:\n{text}\n{}", context());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `Restarts=` of task `task` in `scontrol show job`.
fn restarts(cluster: &TempSlurm, task: &str) -> String {
    let out = cluster.command("scontrol").args(["show", "job", "-o", task]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace().find_map(|w| w.strip_prefix("Restarts=")).unwrap_or("?").to_string()
}

#[test]
fn a_rejected_task_requeues_only_itself_and_a_finished_block_skips_the_canary() {
    let Some(cluster) = TempSlurm::start_if_installed() else { return };
    let f = Fleet::start();
    let (url, h) = (f.url.as_str(), f.home.path());
    let file = &f.two_blocks("faults");

    // Block 0 is measured beforehand on this host. Then the store's history of this host class makes
    // every canary of this host an outlier: 11 CPU loops of 1 µs (block 0's own canary rewritten to
    // that, ten more on blocks 100+). Block 1 has an attempt left running by a task killed earlier and
    // was rejected once already, so its task is rejected twice more, requeueing itself each time, and
    // measures the block on its third run (after 3 rejections).
    ok(f.home.output(&["run", file, "--block", "0", "--db", url]), "block 0");
    let tiny = r#"{"cpu_loop_ms": 0.001}"#;
    f.pg.sql("fleet", &format!("UPDATE block_attempts SET canary = '{tiny}' WHERE block = 0"));
    f.pg.sql(
        "fleet",
        &format!(
            "INSERT INTO block_attempts (experiment_id, block, attempt, status, host_class, canary, started_at) \
             SELECT experiment_id, 100 + i, 1, 'failed', host_class, '{tiny}', 0 \
             FROM block_attempts, generate_series(0, 9) AS i WHERE block = 0; \
             INSERT INTO block_attempts (experiment_id, block, attempt, status, host_class, error, started_at) \
             SELECT experiment_id, 1, a, CASE a WHEN 1 THEN 'running' ELSE 'rejected' END, host_class, NULL, 0 \
             FROM block_attempts, generate_series(1, 2) AS a WHERE block = 0"
        ),
    );
    assert_eq!(attempts(&f), "0:1:done 1:1:running 1:2:rejected");

    // The script as `versus fleet slurm` writes it, submitted with plain sbatch: no follower requeues
    // anything, what happens is the tasks' own doing.
    ok(f.home.output(&["fleet", "slurm", file, "--hosts", "1", "--db", url]), "fleet slurm");
    let script = h.join("faults.sbatch");
    let out = cluster.command("sbatch").arg("--parsable").arg(&script).env("VERSUS_HOME", h).output().unwrap();
    assert!(out.status.success(), "sbatch: {}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap().to_string();
    let output =
        |k: u32| std::fs::read_to_string(h.join(format!("versus-fleet-faults-{id}_{k}.out"))).unwrap_or_default();
    let context =
        || format!("--- task 0\n{}\n--- task 1\n{}\n{}\n{}", output(0), output(1), attempts(&f), cluster.logs());
    // From the first new rejection on, the killed task's attempt is abandoned, not left running.
    let left_running = "SELECT count(*) FILTER (WHERE attempt >= 3 AND status = 'rejected') || ' ' || \
                        count(*) FILTER (WHERE attempt = 1 AND status = 'running') FROM block_attempts WHERE block = 1";
    let each = || {
        let seen = f.pg.sql("fleet", left_running);
        assert!(seen.starts_with("0 ") || seen.ends_with(" 0"), "rejected, running: {seen}\n{}", attempts(&f));
    };
    wait_for_job(&cluster, &id, 300, each, context);

    // Block 0 (finished) was skipped without a canary, once: it was neither rejected nor run again when
    // the last task of the array, whose SLURM_JOB_ID is the array's id, requeued itself.
    let (task0, task1) = (output(0), output(1));
    assert_eq!(task0.matches("blocks done:").count(), 1, "{}", context());
    assert!(task0.contains("already complete: 0;") && !task0.contains("not measured on this host"), "{}", context());
    assert_eq!(restarts(&cluster, &format!("{id}_0")), "0", "{}", context());
    // Block 1: rejected twice more, requeued alone each time, measured anyway on the third run.
    assert!(task1.contains("block 1: not measured on this host (attempt 3)"), "{}", context());
    assert!(task1.contains("block 1: not measured on this host (attempt 4)"), "{}", context());
    assert!(task1.contains("measured anyway after 3 rejections"), "{}", context());
    assert_eq!(restarts(&cluster, &format!("{id}_1")), "2", "{}", context());
    let expected = "0:1:done 1:1:abandoned 1:2:rejected 1:3:rejected 1:4:rejected 1:5:done";
    assert_eq!(attempts(&f), expected, "{}", context());
    assert_eq!(f.pg.sql("fleet", "SELECT count(*) FROM runs WHERE status = 'done'"), "4");
    assert_eq!(f.pg.sql("fleet", "SELECT count(DISTINCT (cell_id, repetition)) FROM runs"), "4");
}

#[test]
fn the_follower_waits_out_a_restart_of_its_store_and_finishes_every_block() {
    let Some(cluster) = TempSlurm::start_if_installed() else { return };
    let f = Fleet::start();
    let url = f.url.as_str();
    let file = &f.two_blocks("outage");
    let conf = cluster.conf();
    let mut submit = f.spawn(
        "outage",
        &["fleet", "slurm", file, "--hosts", "1", "--submit", "--db", url, "--store-wait", "3m"],
        &[("SLURM_CONF", &conf)],
    );
    let context = || format!("{}\n{}\n{}", f.read("outage.out"), f.read("outage.err"), cluster.logs());

    // The store goes down for 10 s as soon as block 0 is done: block 1's task cannot reach it (or loses
    // it mid-block), and the follower cannot read which blocks are complete.
    f.wait_for_block_0(&mut submit, context);
    f.pg.crash();
    std::thread::sleep(Duration::from_secs(10));
    f.pg.restart();

    let status = submit.wait_up_to(300, "the follower", context);
    let (out, err) = (f.read("outage.out"), f.read("outage.err"));
    eprintln!("the follower through a 10-s store restart:\n{err}");
    assert!(status.success(), "{}", context());
    assert!(err.contains("results store") && err.contains("waiting up to 180s"), "{}", context());
    assert!(err.contains("answer again after"), "{}", context());
    assert!(out.contains("ended: 2 of 2 block(s) complete"), "{}", context());
    // Nothing lost or counted twice: each block has one done attempt, each cell one run per block.
    let done = f.pg.sql(
        "fleet",
        "SELECT string_agg(block || ':' || status, ' ' ORDER BY block) FROM block_attempts WHERE status = 'done'",
    );
    assert_eq!(done, "0:done 1:done", "{}", context());
    assert_eq!(f.pg.sql("fleet", "SELECT count(*) FROM runs WHERE status = 'done'"), "4");
    assert_eq!(f.pg.sql("fleet", "SELECT count(DISTINCT (cell_id, repetition)) FROM runs"), "4");
    let running = f.pg.sql("fleet", "SELECT count(*) FROM block_attempts WHERE status = 'running'");
    assert_eq!(running, "0", "{}\n{}", attempts(&f), context());
}

#[test]
fn a_follower_whose_store_stays_down_gives_up_and_names_the_command_that_finishes() {
    let Some(cluster) = TempSlurm::start_if_installed() else { return };
    let f = Fleet::start();
    let url = f.url.as_str();
    let file = &f.two_blocks("giveup");
    let conf = cluster.conf();
    let args = ["fleet", "slurm", file, "--hosts", "1", "--submit", "--db", url, "--store-wait", "5s"];
    let mut submit = f.spawn("giveup", &args, &[("SLURM_CONF", &conf)]);
    let context = || format!("{}\n{}\n{}", f.read("giveup.out"), f.read("giveup.err"), cluster.logs());
    f.wait_for_block_0(&mut submit, context);
    // The store stays down: the follower gives up after --store-wait, naming what is incomplete.
    f.pg.crash();
    let status = submit.wait_up_to(120, "the follower", context);
    let err = f.read("giveup.err");
    eprintln!("the follower of a store that stays down:\n{err}");
    assert_eq!(status.code(), Some(1), "{}", context());
    assert!(
        err.contains("block 1 is incomplete: not known to be complete: nothing could be read for"),
        "{}",
        context()
    );
    let last = err.trim_end().lines().last().unwrap();
    // Block 1 is listed, and block 0 too when the follower had not read it as done before the crash.
    assert!(
        last.contains("block(s) incomplete (1); finish them with `")
            || last.contains("incomplete (0 1); finish them with `"),
        "{last}"
    );

    // The command it names finishes the job once the store is back: block 0 is skipped, 1 measured.
    f.pg.restart();
    let command = last.split('`').nth(1).unwrap();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..3], ["versus", "fleet", "slurm"], "{command}");
    assert!(words.windows(2).any(|w| w == ["--db", url]) && words.contains(&"--submit"), "{command}");
    let again = f.home.versus(&words[1..]).env("SLURM_CONF", &conf).output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
    assert!(again.status.success(), "{out}{err}\n{}", cluster.logs());
    assert!(out.contains("ended: 2 of 2 block(s) complete"), "{out}{err}");
    let done =
        "SELECT string_agg(block || ':' || attempt, ' ' ORDER BY block) FROM block_attempts WHERE status = 'done'";
    assert_eq!(f.pg.sql("fleet", done).split(' ').next(), Some("0:1"), "block 0 was measured once");
    assert_eq!(f.pg.sql("fleet", "SELECT count(*) FROM block_attempts WHERE status = 'done'"), "2");
    assert_eq!(f.pg.sql("fleet", "SELECT count(DISTINCT (cell_id, repetition)) FROM runs WHERE status = 'done'"), "4");
}
