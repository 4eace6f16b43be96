use super::experiment::sync_nosync;
use super::postgres::TempPostgres;
use versus::store::{Location, Store};

/// Two configs, two blocks of one second each.
fn tiny() -> String {
    sync_nosync("tiny", "threads = [1]\nduration = \"1s\"\nwarmup = \"0s\"\nrepetitions = 2\n", 500)
}

/// `versus ARGS` with its own home; returns (exit code, stdout, stderr).
fn versus(home: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_versus"));
    c.args(args).env("VERSUS_HOME", home).env_remove("VERSUS_DB").stdin(std::process::Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(r: (i32, String, String), what: &str) -> String {
    assert_eq!(r.0, 0, "{what} failed: {}{}", r.1, r.2);
    r.1
}

#[test]
fn every_command_works_against_postgres_and_copies_compare_the_same() {
    let pg = TempPostgres::start();
    let url = pg.url("team");
    let home = tempfile::Builder::new().prefix("versus-pgcli-").tempdir().unwrap();
    let h = home.path();
    ok(versus(h, &["server", "fetch", "system"], &[]), "server fetch");
    let file = h.join("tiny.toml");
    std::fs::write(&file, tiny()).unwrap();
    let file = file.to_str().unwrap();

    let out = ok(versus(h, &["run", file, "--db", &url], &[]), "run --db postgres://");
    assert!(out.contains("stored in postgres://versus@127.0.0.1"), "{out}");
    // VERSUS_DB names the store as well as --db does.
    let runs = ok(versus(h, &["runs", "tiny"], &[("VERSUS_DB", &url)]), "runs");
    assert_eq!(runs.lines().filter(|l| l.contains(" done ")).count(), 4, "{runs}");
    let list = ok(versus(h, &["runs", "--db", &url], &[]), "runs (list)");
    assert!(list.contains("tiny"), "{list}");
    let first_run = pg.sql("team", "SELECT min(id) FROM runs");
    let show = ok(versus(h, &["show", &first_run, "--db", &url], &[]), "show");
    assert!(show.contains("transactions:"), "{show}");

    // This host's noise band, measured into PostgreSQL (VERSUS_DB), is the one compare then uses.
    let (class, band) = calibrate(&pg, h, &url);
    eprintln!("calibrated tps band on {class}: {band:?}");

    let compare = ok(versus(h, &["compare", "tiny", "--db", &url, "--color", "never"], &[]), "compare");
    assert!(compare.contains("nosync") && compare.contains("sync"), "{compare}");
    if band.is_some() {
        assert!(compare.contains(&format!("calibrated by `versus calibrate` on host class {class}")), "{compare}");
    }
    let reports = ["md", "html", "json", "csv"].map(|ext| {
        let path = h.join(format!("tiny.{ext}"));
        ok(versus(h, &["report", "tiny", "--db", &url, "-o", path.to_str().unwrap()], &[]), "report");
        std::fs::read_to_string(&path).unwrap()
    });
    assert!(reports[1].starts_with("<!DOCTYPE html>") && reports[1].contains("nosync"), "{}", reports[1]);
    let json: serde_json::Value = serde_json::from_str(&reports[2]).unwrap();
    let ratios = json["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1, "{json}");
    assert_eq!(json["noise_band"].as_f64(), Some(band.unwrap_or(0.02)), "{}", json["noise_band_source"]);
    assert!(reports[3].lines().count() > 1 && reports[3].contains("nosync"), "{}", reports[3]);
    let vars = ok(
        versus(h, &["diff-vars", "system/sync", "system/nosync", "--from", "tiny", "--db", &url], &[]),
        "diff-vars --from",
    );
    assert!(vars.contains("innodb_flush_log_at_trx_commit"), "{vars}");
    let series = ok(versus(h, &["series", "--from", "tiny", "--db", &url], &[]), "series --from");
    assert!(series.contains("nosync"), "{series}");
    explain_and_advise(&pg, h, &url, (!class.is_empty()).then_some(class.as_str()));

    // PostgreSQL -> SQLite -> a second PostgreSQL database: the same comparison everywhere.
    let experiments = pg.sql("team", "SELECT count(*) FROM experiments");
    let all_runs = pg.sql("team", "SELECT count(*) FROM runs");
    let file_db = h.join("copy.db");
    let file_db = file_db.to_str().unwrap();
    let out = ok(versus(h, &["store", "copy", "--from", &url, "--to", file_db], &[]), "store copy to SQLite");
    assert!(out.contains(&format!("{experiments} experiments added")), "{out}");
    assert!(out.contains(&format!("{all_runs} runs copied")), "{out}");
    let again = ok(versus(h, &["store", "copy", "--from", &url, "--to", file_db], &[]), "store copy again");
    let unchanged = format!("0 experiments added, {experiments} already there; 0 runs copied, {all_runs} unchanged");
    assert!(again.contains(&unchanged), "{again}");
    let url2 = pg.url("second");
    ok(versus(h, &["store", "copy", "--from", file_db, "--to", &url2], &[]), "store copy to PostgreSQL");
    for db in [file_db, url2.as_str()] {
        let other = ok(versus(h, &["compare", "tiny", "--db", db, "--color", "never"], &[]), "compare on the copy");
        assert_eq!(other, compare, "compare on {db}");
        for (ext, original) in ["md", "json", "csv"].iter().zip([&reports[0], &reports[2], &reports[3]]) {
            let path = h.join(format!("copy.{ext}"));
            ok(versus(h, &["report", "tiny", "--db", db, "-o", path.to_str().unwrap()], &[]), "report on the copy");
            assert_eq!(&std::fs::read_to_string(&path).unwrap(), original, "report .{ext} on {db}");
        }
    }

    // An unreachable store: one line naming it (never its password), a non-zero exit, nothing run.
    let dead = format!("postgres://versus:s3cret@127.0.0.1:{}/team", free_port());
    let (code, stdout, stderr) = versus(h, &["run", file, "--db", &dead], &[]);
    assert_ne!(code, 0);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot reach the results store") && !stderr.contains("s3cret"), "{stderr}");
    assert!(stderr.contains(&dead.replace(":s3cret@", ":<redacted>@")), "the store's address: {stderr}");
    assert!(!stdout.contains("stored in"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // The store dies while a run measures: the run goes to a recovery file, `versus import` puts it
    // into PostgreSQL once it is back, and `--resume-id` runs the rest.
    import_after_the_store_died(&pg, h);
}

/// `versus calibrate` into PostgreSQL through VERSUS_DB and `calibrate --list`: returns this host's
/// class and the tps band stored (None when the A/A interval was too wide to store one, which the
/// command then says).
fn calibrate(pg: &TempPostgres, h: &std::path::Path, url: &str) -> (String, Option<f64>) {
    let args = ["calibrate", "system", "--workload", "oltp_point_select", "--tables", "1", "--table-size", "500"];
    let extra = ["--threads", "1", "--duration", "1s", "--repetitions", "3"];
    let all: Vec<&str> = args.iter().chain(&extra).copied().collect();
    let (code, out, err) = versus(h, &all, &[("VERSUS_DB", url)]);
    // The A/A runs are stored in PostgreSQL whatever their noise.
    assert_eq!(pg.sql("team", "SELECT count(*) FROM experiments WHERE name = 'calibrate'"), "1", "{out}{err}");
    let calibrated = code == 0 || (code == 1 && err.contains("nothing was calibrated"));
    assert!(calibrated && !err.contains("panicked"), "calibrate: {out}{err}");
    let stored = pg.sql("team", "SELECT count(*) FROM noise_calibrations WHERE metric = 'tps'");
    let list = ok(versus(h, &["calibrate", "--list", "--db", url], &[]), "calibrate --list");
    if stored == "0" {
        // On a loaded host 1-s runs can be too noisy for a band: the command says so (exit 1 when no
        // metric got one; other metrics' bands may still be stored and listed).
        assert!(
            err.contains("not stored: oltp_point_select") && err.contains("thr tps: the A/A interval"),
            "{out}{err}"
        );
        let others = pg.sql("team", "SELECT count(*) FROM noise_calibrations");
        assert!(others != "0" || list.contains("no calibrations stored"), "{list}");
        return (String::new(), None);
    }
    assert_eq!(stored, "1", "{out}{err}");
    let class = pg.sql("team", "SELECT host_class FROM noise_calibrations WHERE metric = 'tps'");
    assert!(out.contains(&format!("stored for host class {class}")), "{out}{err}");
    assert!(list.contains(&class) && list.contains("oltp_point_select"), "{list}");
    let band = pg.sql("team", "SELECT band FROM noise_calibrations WHERE metric = 'tps'");
    (class, Some(band.parse().unwrap()))
}

/// `versus explain` measuring into PostgreSQL, the same with --resume (every step found there, nothing
/// measured again), and `versus advise --from` a stored experiment (a dry run, then measuring); both
/// use the band calibrated on host class `class` (when one was stored) and say so.
fn explain_and_advise(pg: &TempPostgres, h: &std::path::Path, url: &str, class: Option<&str>) {
    let calibrated = |what: &str, v: &serde_json::Value| {
        if let Some(class) = class {
            let source = v["noise_band_source"].as_str().unwrap_or_default();
            let expected = format!("calibrated by `versus calibrate` on host class {class}");
            assert!(source.starts_with(&expected), "{what}: {source}");
        }
    };
    let explain: Vec<&str> = [
        "explain",
        "system",
        "system:innodb_flush_log_at_trx_commit=0",
        "--workload",
        "oltp_point_select",
        "--tables",
        "1",
        "--table-size",
        "500",
        "--threads",
        "1",
        "--duration",
        "1s",
        "--repetitions",
        "2",
        "--format",
        "json",
        "--db",
        url,
    ]
    .into();
    let before = pg.sql("team", "SELECT count(*) FROM runs");
    let first: serde_json::Value = serde_json::from_str(&ok(versus(h, &explain, &[]), "explain")).unwrap();
    let steps = first["experiments"].as_array().unwrap();
    assert!(!steps.is_empty(), "{first}");
    calibrated("explain", &first);
    let measured = pg.sql("team", "SELECT count(*) FROM runs").parse::<u64>().unwrap() - before.parse::<u64>().unwrap();
    assert!(measured >= 4, "A and B twice each: {measured} runs");
    eprintln!("explain: {} step(s), {measured} runs", steps.len());
    for step in steps {
        let id = step[0].as_i64().unwrap();
        let done = pg.sql("team", &format!("SELECT status FROM experiments WHERE id = {id}"));
        assert_eq!(done, "done", "step {step}");
    }
    let resume: Vec<&str> = explain.iter().copied().chain(["--resume"]).collect();
    let again: serde_json::Value = serde_json::from_str(&ok(versus(h, &resume, &[]), "explain --resume")).unwrap();
    assert_eq!(again["experiments"], first["experiments"], "{again}");
    assert_eq!(again["gap"], first["gap"]);
    let after = pg.sql("team", "SELECT count(*) FROM runs");
    assert_eq!(after.parse::<u64>().unwrap(), before.parse::<u64>().unwrap() + measured, "nothing measured again");

    let advise = [
        "advise",
        "--from",
        "tiny",
        "--target",
        "system/nosync",
        "--dry-run",
        "--budget",
        "4m",
        "--duration",
        "2s",
        // Two screening repetitions, as tests/advise.rs's tiny advice: with the default 4 the advice
        // took up to its whole budget on a loaded host (220 s for this test once, 120 s otherwise).
        "--screen-repetitions",
        "2",
        "--format",
        "json",
    ];
    let out = ok(versus(h, &advise, &[("VERSUS_DB", url)]), "advise --from --dry-run");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(d["workload"].as_str().unwrap().contains("oltp_point_select"), "{d}");
    assert!(d["result"].is_null(), "a dry run measures nothing: {d}");
    assert_eq!(pg.sql("team", "SELECT count(*) FROM runs"), after, "a dry run stores nothing");

    // The same advice measured: every experiment it ran is in PostgreSQL, finished, and readable by
    // `versus compare` there.
    let measure: Vec<&str> = advise.iter().copied().filter(|a| *a != "--dry-run").chain(["--name", "pgadv"]).collect();
    let out = ok(versus(h, &measure, &[("VERSUS_DB", url)]), "advise --from (measuring)");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let (elapsed, budget) = (r["elapsed_s"].as_u64().unwrap(), r["budget_s"].as_u64().unwrap());
    assert!(elapsed <= budget, "{elapsed} s of a {budget} s budget");
    calibrated("advise", &r);
    let experiments = r["experiments"].as_array().unwrap();
    assert_eq!(experiments.first().map(|e| &e[1]), Some(&serde_json::json!("pgadv-probe")), "{r}");
    for e in experiments {
        let id = e[0].as_i64().unwrap();
        let status = pg.sql("team", &format!("SELECT status FROM experiments WHERE id = {id}"));
        let runs = pg.sql("team", &format!("SELECT count(*) FROM runs WHERE experiment_id = {id} AND status = 'done'"));
        assert!(status == "done" && runs.parse::<u64>().unwrap() > 0, "advise step {e}: {status}, {runs} runs");
    }
    let probe = ok(versus(h, &["compare", "pgadv-probe", "--db", url, "--color", "never"], &[]), "compare probe");
    assert!(probe.contains("oltp_point_select"), "{probe}");
    eprintln!("advise into PostgreSQL: {} experiment(s) in {elapsed} s", experiments.len());
}

/// `versus quickstart --db postgres://…`: the README's default job, stored in PostgreSQL, its report
/// written from there.
#[test]
fn the_quick_start_stores_into_postgres() {
    let pg = TempPostgres::start();
    let url = pg.url("team");
    let home = tempfile::Builder::new().prefix("versus-pgqs-").tempdir().unwrap();
    let h = home.path();
    // The built-in job, shortened by its own flags (the README runs it whole: scripts/quickstart.sh).
    let args = ["quickstart", "--db", &url, "--duration", "1s", "--repetitions", "1"];
    let out = ok(versus(h, &args, &[]), "quickstart --db postgres://");
    assert!(out.contains("HTML report: ") && out.contains("results: postgres://versus@127.0.0.1"), "{out}");
    assert_eq!(pg.sql("team", "SELECT count(*) FROM runs WHERE status = 'done'"), "4", "2 configs × 2 threads × 1");
    let stored = pg.sql("team", "SELECT definition FROM experiments");
    assert!(stored.contains("duration = \"1s\"") && stored.contains("repetitions = 1"), "{stored}");
    let html = std::fs::read_to_string(h.join("quickstart").join("report.html")).unwrap();
    assert!(html.contains("relaxed") && html.contains("durable"), "the report");
    let compare = ok(versus(h, &["compare", "quickstart", "--db", &url, "--color", "never"], &[]), "compare");
    assert!(compare.contains("relaxed"), "{compare}");
}

/// A run whose store dies while it measures: the recovery file that the error names, imported into
/// PostgreSQL once it is back with the command the error gives, then the rest run by `--resume-id`.
fn import_after_the_store_died(pg: &TempPostgres, h: &std::path::Path) {
    let url = pg.url("lost");
    let file = h.join("lost.toml");
    std::fs::write(&file, tiny().replace("name = \"tiny\"", "name = \"lost\"")).unwrap();
    // A recovery file of a PostgreSQL store goes to the temporary directory: this one.
    let tmp = h.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut task = std::process::Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["run", file.to_str().unwrap(), "--db", &url])
        .env("VERSUS_HOME", h)
        .env("TMPDIR", &tmp)
        .env_remove("VERSUS_DB")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
    loop {
        let tables = pg.sql("lost", "SELECT count(*) FROM pg_tables WHERE tablename = 'runs'");
        if tables == "1" && pg.sql("lost", "SELECT count(*) FROM runs WHERE status = 'running'") == "1" {
            break;
        }
        assert!(task.try_wait().unwrap().is_none(), "the run ended before one was measuring");
        assert!(std::time::Instant::now() < deadline, "no run started in 240 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    pg.crash();
    let out = task.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let line = err.lines().find(|l| l.contains("was measured but not stored")).unwrap_or_else(|| panic!("{err}"));
    let commands: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
    assert_eq!(commands.len(), 2, "{line}");
    assert!(commands[0].starts_with("versus import ") && commands[0].ends_with(&format!("--db {url}")), "{line}");
    assert!(commands[1].starts_with("versus run --resume-id ") && commands[1].ends_with(&format!("--db {url}")));
    pg.restart();
    assert_eq!(pg.sql("lost", "SELECT count(*) FROM runs WHERE status = 'done'"), "0", "{err}");

    let import: Vec<&str> = commands[0].split_whitespace().skip(1).collect();
    let imported = ok(versus(h, &import, &[]), "import");
    assert!(imported.contains("stored in postgres://versus@127.0.0.1"), "{imported}");
    let measured = "SELECT count(*) FROM runs r WHERE r.status = 'done' AND r.tps > 0 \
                    AND EXISTS (SELECT 1 FROM intervals i WHERE i.run_id = r.id)";
    assert_eq!(pg.sql("lost", measured), "1", "the recovered run, with its measurement");
    let (code, _, again) = versus(h, &import, &[]);
    assert_ne!(code, 0, "a second import is refused: {again}");
    assert_eq!(pg.sql("lost", "SELECT count(*) FROM runs WHERE status = 'done'"), "1");

    let resume: Vec<&str> = commands[1].split_whitespace().skip(1).collect();
    ok(versus(h, &resume, &[]), "run --resume-id");
    assert_eq!(pg.sql("lost", measured), "4");
    assert_eq!(pg.sql("lost", "SELECT status FROM experiments"), "done");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn two_block_tasks_write_into_postgres_at_once_and_blocks_are_idempotent() {
    let pg = TempPostgres::start();
    let url = pg.url("fleet");
    let plan_id = versus::experiment::blocks::plan_id(&versus::experiment::ExperimentFile::parse(&tiny()).unwrap());
    // Two workers, each with a home of its own, as two hosts of a fleet.
    let homes: Vec<tempfile::TempDir> =
        (0..2).map(|_| tempfile::Builder::new().prefix("versus-worker-").tempdir().unwrap()).collect();
    for h in &homes {
        ok(versus(h.path(), &["server", "fetch", "system"], &[]), "server fetch");
        std::fs::write(h.path().join("tiny.toml"), tiny()).unwrap();
    }
    let tasks: Vec<std::process::Child> = homes
        .iter()
        .enumerate()
        .map(|(k, h)| {
            std::process::Command::new(env!("CARGO_BIN_EXE_versus"))
                .args(["run", h.path().join("tiny.toml").to_str().unwrap(), "--block", &k.to_string()])
                .args(["--plan-id", &plan_id])
                .env("VERSUS_HOME", h.path())
                .env("VERSUS_DB", &url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for t in tasks {
        let out = t.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let h = homes[0].path();
    let file = h.join("tiny.toml");
    let file = file.to_str().unwrap();
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM experiments"), "1", "both tasks share one experiment");
    assert_eq!(pg.sql("fleet", "SELECT uid FROM experiments"), plan_id);
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM runs WHERE status = 'done'"), "4");
    assert_eq!(
        pg.sql(
            "fleet",
            "SELECT string_agg(block || ':' || attempt || ':' || status, ' ' ORDER BY block) FROM block_attempts"
        ),
        "0:1:done 1:1:done"
    );
    assert_eq!(
        pg.sql(
            "fleet",
            "SELECT count(*) FROM runs r JOIN block_attempts a ON a.id = r.attempt_id WHERE a.block = r.repetition - 1"
        ),
        "4"
    );
    assert_eq!(pg.sql("fleet", "SELECT status FROM experiments"), "done");

    // Run again (a scheduler's at-least-once delivery): nothing happens.
    let again = ok(versus(h, &["run", file, "--block", "0", "--db", &url], &[]), "block 0 again");
    assert!(again.contains("already complete: 0"), "{again}");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM block_attempts"), "2");

    // A file changed since submission (edited after the job took its plan id, or a forged id), or a
    // block outside the plan: exit code 3, one line, nothing run.
    let edited = h.join("edited.toml");
    std::fs::write(&edited, tiny().replace("duration = \"1s\"", "duration = \"2s\"")).unwrap();
    let edited = edited.to_str().unwrap();
    for (f, id) in [(edited, plan_id.as_str()), (file, "p-0000000000000000")] {
        let (code, _, err) = versus(h, &["run", f, "--block", "1", "--plan-id", id, "--db", &url], &[]);
        assert_eq!(code, 3, "{err}");
        assert!(
            err.contains("the experiment file changed since the job was submitted") && err.trim().lines().count() == 1,
            "{err}"
        );
    }
    let (code, _, err) = versus(h, &["run", file, "--block", "7", "--db", &url], &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--block: the plan has 2 block(s), 0..1"), "{err}");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM block_attempts"), "2");

    // A worker that cannot reach the store: one line naming it (never its password), a non-zero exit
    // that is not the "do not retry" code, and nothing written anywhere.
    let dead = format!("postgres://versus:s3cret@127.0.0.1:{}/fleet", free_port());
    let (code, stdout, err) = versus(h, &["run", file, "--block", "1", "--plan-id", &plan_id, "--db", &dead], &[]);
    assert!(code != 0 && code != 3, "{code}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cannot reach the results store") && !err.contains("s3cret"), "{err}");
    assert!(!err.contains("panicked") && !stdout.contains("blocks done"), "{stdout}{err}");
    assert_eq!(pg.sql("fleet", "SELECT count(*) FROM block_attempts"), "2");

    let compare = ok(versus(h, &["compare", "tiny", "--db", &url, "--color", "never"], &[]), "compare");
    assert!(compare.contains("nosync"), "{compare}");
}

#[test]
fn store_copy_reads_a_read_only_source_and_names_the_flag_of_a_store_it_cannot_open() {
    let t = tempfile::tempdir().unwrap();
    let disk = super::disk::SmallDisk::mount(&t.path().join("ro"), "16m");
    let source = disk.dir.join("results.db");
    super::fill(&mut Store::open(&source).unwrap());
    disk.read_only();
    let copy = |from: &std::path::Path, to: &std::path::Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_versus"))
            .args(["store", "copy", "--from"])
            .arg(from)
            .arg("--to")
            .arg(to)
            .env("VERSUS_HOME", t.path().join("home"))
            .env_remove("VERSUS_DB")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dest = t.path().join("copy.db");
    let (code, out, err) = copy(&source, &dest);
    assert_eq!(code, Some(0), "a read-only source is only read: {err}");
    assert!(out.contains("2 experiments added"), "{out}");
    assert_eq!(
        super::contents(&Store::open(&dest).unwrap()),
        super::contents(&Store::connect_read(&Location::Sqlite(source.clone())).unwrap())
    );
    // A destination that cannot be written is named, with the flag that chose it.
    let (code, _, err) = copy(&dest, &disk.dir.join("new.db"));
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("versus: error: ") && err.contains("new.db") && err.contains("--to"), "{err}");
    assert!(!err.contains("--db"), "store copy has no --db: {err}");
}
