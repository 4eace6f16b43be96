//! Honest outcomes, as a user meets them: failed work never reads as success (exit status, stored
//! status `failed` or `partial`), nothing measured is lost when the store cannot take it, every problem
//! of an experiment is listed before anything runs, and output to a closed pipe ends quietly.

mod common;

use common::disk::SmallDisk;

use common::external_experiment;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn versus(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
    c.args(args).env("VERSUS_HOME", home).env_remove("VERSUS_DB").env_remove("RUST_BACKTRACE").stdin(Stdio::null());
    c
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_measured_run_the_store_cannot_take_is_kept_in_a_recovery_file_and_imported_later() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let spill = t.path().join("tmp");
    std::fs::create_dir_all(&spill).unwrap();
    let disk = SmallDisk::mount(&t.path().join("disk"), "4m");
    let db = disk.dir.join("results.db");
    let file = t.path().join("full.toml");
    let text = external_experiment("full", server.port).replace("duration = \"1s\"", "duration = \"4s\"");
    std::fs::write(&file, text.replace("prewarm = false", "prewarm = false\nrepetitions = 1")).unwrap();
    let child = versus(&home, &["run", file.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .env("SAFETY_TEST_PW", &server.password)
        .env("TMPDIR", &spill)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let running = db.exists()
            && versus::store::Store::open(&db).is_ok_and(|s| {
                s.runs(1).is_ok_and(|r| r.first().is_some_and(|r| r.status == versus::store::Status::Running))
            });
        if running {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let filler = disk.fill("filler");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("versus: error: run 1 was measured but not stored"), "{err}");
    let saved: Vec<PathBuf> = std::fs::read_dir(&spill)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".recovery.json"))
        .collect();
    assert_eq!(saved.len(), 1, "the full disk took no recovery file, the temporary directory did: {err}");
    assert!(last.contains(&format!("versus import {}", saved[0].display())), "{last}");
    assert_eq!(mode(&saved[0]), 0o600);

    // Space again. A command that only reads the store names the file and the exact command (quoted
    // for a shell), and imports nothing.
    std::fs::OpenOptions::new().write(true).open(&filler).unwrap().set_len(0).unwrap();
    let dbs = db.to_str().unwrap();
    let read = versus(&home, &["runs", "1", "--db", dbs]).env("TMPDIR", &spill).output().unwrap();
    assert!(read.status.success(), "{}", stderr(&read));
    let notice = format!("`versus import {}` stores it", saved[0].display());
    assert!(stderr(&read).contains(&notice), "{}", stderr(&read));
    let store = versus::store::Store::open(&db).unwrap();
    assert_eq!(store.runs(1).unwrap()[0].status, versus::store::Status::Running);
    drop(store);

    // The next command that writes to the store imports it, exactly what was measured, once.
    let resume = versus(&home, &["run", "--resume-id", "1", "--db", dbs])
        .env("SAFETY_TEST_PW", &server.password)
        .env("TMPDIR", &spill)
        .output()
        .unwrap();
    let err = stderr(&resume);
    assert!(resume.status.success(), "{err}");
    assert!(err.contains(&format!("versus: imported run 1 of experiment 1 from {}", saved[0].display())), "{err}");
    let imported = PathBuf::from(format!("{}.imported", saved[0].display()));
    assert!(!saved[0].exists() && imported.exists(), "the imported file is renamed, not deleted");
    let store = versus::store::Store::open(&db).unwrap();
    let run = &store.runs(1).unwrap()[0];
    assert_eq!(run.status, versus::store::Status::Done, "{run:?}");
    let recovered: serde_json::Value = serde_json::from_slice(&std::fs::read(&imported).unwrap()).unwrap();
    let tps = recovered["result"]["summary"]["tps"].as_f64().unwrap();
    assert!(tps > 0.0 && run.summary.as_ref().unwrap().tps == tps, "{tps} {run:?}");
    assert!(!store.run(run.id).unwrap().unwrap().intervals.is_empty());
    assert_eq!(store.experiment(1).unwrap().unwrap().status, versus::store::Status::Done);
    let quiet = versus(&home, &["runs", "--db", dbs]).env("TMPDIR", &spill).output().unwrap();
    assert!(!stderr(&quiet).contains("recovery"), "nothing is pending any more: {}", stderr(&quiet));
    let again = versus(&home, &["import", imported.to_str().unwrap(), "--db", dbs]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("stored already"), "{}", stderr(&again));
    drop(store);

    // A store that cannot be written (here: on a read-only file system) can still be read.
    disk.read_only();
    for (args, shown) in [(&["runs"][..], "full"), (&["runs", "1"], "ext"), (&["show", "1"], "transactions:")] {
        let mut all = args.to_vec();
        all.extend(["--db", db.to_str().unwrap()]);
        let out = versus(&home, &all).output().unwrap();
        assert!(out.status.success(), "{args:?} on a read-only store: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(shown), "{args:?}: {text}");
    }
}

#[test]
fn a_bad_experiment_lists_every_problem_and_runs_nothing() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let file = t.path().join("bad.toml");
    std::fs::write(
        &file,
        r#"
name = "bad"
threads = [1]
[[targets]]
name = "a"
build = "not-registered"
set = { bind-addr = "0.0.0.0", data = "/tmp" }
[[targets]]
name = "ext"
address = "127.0.0.1:3306"
password_env = "SAFETY_TEST_UNSET_PW"
[[workloads]]
test = "oltp_nope"
[[workloads]]
test = "oltp_point_select"
options = { tabels = 2 }
"#,
    )
    .unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["run", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = versus(&home, &args).env_remove("SAFETY_TEST_UNSET_PW").output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.starts_with("versus: error: ") && err.contains("6 problems, nothing was run"), "{err}");
        for needle in [
            "unknown test 'oltp_nope'",
            "--tabels: unknown option",
            "unknown build 'not-registered'",
            "'bind-addr' is read by the server as 'bind-address'",
            "SAFETY_TEST_UNSET_PW, which is not set",
            "'data' is read by the server as 'datadir'",
        ] {
            assert!(err.contains(needle), "{needle} is not listed:\n{err}");
        }
    }
    assert!(!home.join("results.db").exists(), "nothing was stored");
}

#[test]
fn a_series_whose_runs_failed_exits_non_zero() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let fetch = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(fetch.status.success(), "{}", stderr(&fetch));
    let out = versus(
        &home,
        &[
            "series",
            "system",
            "system:no_such_option_xyz=1",
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
        ],
    )
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("versus: error: 2 of 4 runs failed"), "{err}");
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> std::fs::File {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    std::fs::File::from(write)
}

#[test]
fn closed_output_and_bad_command_lines_end_quietly_or_with_one_line() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    for args in [&["runs"][..], &["server", "list"], &["--help"], &["run", "--help"], &["sysbench", "--help"]] {
        let out = versus(&home, args).stdout(closed_pipe()).output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        assert!(matches!(out.status.code(), Some(0 | 141)), "{args:?}: {:?} {err}", out.status);
    }
    for (args, needle) in [
        (&["series", "--threads", "abc", "a", "b"][..], "invalid value 'abc' for '--threads <N>'"),
        (&["runs", "--bogus"], "unexpected argument '--bogus'"),
        (&["server", "start"], "required arguments were not provided: <BUILD>"),
    ] {
        let out = versus(&home, args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("versus: error: ") && err.contains(needle), "{args:?}: {err}");
    }
    for args in [&["--help"][..], &["--version"], &["run", "--help"]] {
        let out = versus(&home, args).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn an_experiment_with_some_runs_failed_is_partial_and_one_with_all_failed_is_failed() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    // Target "bad" logs in with a wrong password: its runs fail, "ext"'s are done.
    let bad = format!(
        "[[targets]]\nname = \"bad\"\naddress = \"127.0.0.1:{}\"\nuser = \"sbtest\"\npassword_env = \"SAFETY_TEST_BAD_PW\"\n\
         database = \"sbtest\"\n",
        server.port
    );
    let mixed = external_experiment("mixed", server.port).replace("[[workloads]]", &format!("{bad}[[workloads]]"));
    let mixed = mixed.replace("prewarm = false", "prewarm = false\nrepetitions = 1");
    let only_bad = mixed.replace("name = \"mixed\"", "name = \"allbad\"").replace("name = \"ext\"", "name = \"ext0\"");
    let only_bad = only_bad.replace("password_env = \"SAFETY_TEST_PW\"", "password_env = \"SAFETY_TEST_BAD_PW\"");
    for (name, text, status) in [("mixed", &mixed, "partial"), ("allbad", &only_bad, "failed")] {
        let file = t.path().join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = versus(&home, &["run", file.to_str().unwrap()])
            .env("SAFETY_TEST_PW", &server.password)
            .env("SAFETY_TEST_BAD_PW", "not-the-password")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let last = err.trim_end().lines().last().unwrap_or_default();
        assert!(last.contains("runs failed; experiment") && last.contains(&format!("stored as {status};")), "{last}");
    }
    let store = versus::store::Store::open(home.join("results.db")).unwrap();
    assert_eq!(store.experiment(1).unwrap().unwrap().status, versus::store::Status::Partial);
    assert_eq!(store.experiment(2).unwrap().unwrap().status, versus::store::Status::Failed);
    let list = versus(&home, &["runs"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let shows =
        |name: &str, status: &str| list.lines().any(|l| l.contains(name) && l.split_whitespace().any(|w| w == status));
    assert!(shows("mixed", "partial") && shows("allbad", "failed"), "{list}");
    let one = versus(&home, &["runs", "1"]).output().unwrap();
    let one = String::from_utf8_lossy(&one.stdout).into_owned();
    assert!(one.lines().next().is_some_and(|l| l.contains("partial") && l.contains("1 done, 1 failed")), "{one}");
    let json = versus(&home, &["report", "1", "--format", "json"]).output().unwrap();
    assert!(json.status.success(), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["experiments"][0]["status"], "partial", "{v}");
}

#[test]
fn every_printing_command_ends_quietly_on_a_closed_pipe() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let two = external_experiment("pipe", server.port).replace(
        "[[workloads]]",
        &format!(
            "[[targets]]\nname = \"ext2\"\naddress = \"127.0.0.1:{}\"\nuser = \"sbtest\"\npassword_env = \
             \"SAFETY_TEST_PW\"\ndatabase = \"sbtest\"\n[[workloads]]",
            server.port
        ),
    );
    let file = t.path().join("pipe.toml");
    // Both targets are one server: each prepares the tables again over the other's.
    let two = two.replace("database = \"sbtest\"\n", "database = \"sbtest\"\nreplace_tables = true\n");
    std::fs::write(&file, two.replace("prewarm = false", "prewarm = false\nrepetitions = 2")).unwrap();
    let run = versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let commands: &[&[&str]] = &[
        &["runs"],
        &["runs", "1"],
        &["show", "1"],
        &["compare", "1"],
        &["report", "1", "--format", "markdown"],
        &["report", "1", "--format", "json"],
        &["report", "1", "--format", "csv"],
        &["report", "1", "--format", "html"],
        &["diff-vars", "ext", "ext2", "--from", "1"],
        &["diff-vars", "ext", "ext2", "--from", "1", "--format", "json", "--all"],
        &["series", "ext", "ext2", "--from", "1"],
        &["series", "ext", "ext2", "--from", "1", "--format", "markdown"],
        &["server", "list"],
        &["--help"],
        &["run", "--help"],
        &["sysbench", "--help"],
        &["script", "--help"],
    ];
    for args in commands {
        // Open, the command prints something: a closed pipe is then a real test of its output.
        let open = versus(&home, args).output().unwrap();
        assert!(open.status.success() && !open.stdout.is_empty(), "{args:?}: {:?} {}", open.status, stderr(&open));
        let out = versus(&home, args).stdout(closed_pipe()).output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("error"), "{args:?}: {err}");
        assert!(matches!(out.status.code(), Some(0 | 141)), "{args:?}: {:?} {err}", out.status);
    }
}

/// diff-vars exits 0 when it compared the two targets (whether or not variables differ: the differences
/// are its answer, as for `git diff`), 1 with one line when it could not compare them.
#[test]
fn diff_vars_exits_zero_when_it_compared_and_one_when_it_could_not() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let fetch = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(fetch.status.success(), "{}", stderr(&fetch));
    // MariaDB's sync_binlog is 0 by default: setting 0 changes nothing, 1 changes it; both are answers.
    for (b, rows) in [("system:sync_binlog=0", &[][..]), ("system:sync_binlog=1", &["sync_binlog"])] {
        let out = versus(&home, &["diff-vars", "system", b, "--format", "json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{b}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<&str> = json["rows"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
        assert_eq!(names, rows, "{json}");
    }
    let broken = versus(&home, &["diff-vars", "system", "system:no_such_option_xyz=1"]).output().unwrap();
    let err = stderr(&broken);
    assert_eq!(broken.status.code(), Some(1), "{err}");
    assert!(broken.stdout.is_empty(), "nothing is printed as if compared");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("versus: error: ") && last.contains("no_such_option_xyz"), "{err}");
    let unknown = versus(&home, &["diff-vars", "system", "nosuchbuild"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert_eq!(
        stderr(&unknown).lines().count(),
        1,
        "no server starts for a build that is not there: {}",
        stderr(&unknown)
    );
    let left: Vec<_> = std::fs::read_dir(home.join("explain"))
        .map(|d| d.flatten().map(|e| e.file_name()).filter(|n| n != versus::owned::MARKER).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "no work dir is left: {left:?}");
}

/// The prepared data's size (tables × table-size × a row's bytes, a snapshot and a copy of it) is
/// checked against the free space of the home's file system before anything is made.
#[test]
fn an_experiment_too_big_for_the_disk_is_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&t.path().join("disk"), "64m");
    let home = disk.dir.join("home");
    let fetch = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(fetch.status.success(), "{}", stderr(&fetch));
    let file = t.path().join("big.toml");
    let text = "name = \"big\"\nthreads = [1]\nduration = \"1s\"\n[[targets]]\nname = \"a\"\nbuild = \"system\"\n\
                [[workloads]]\ntest = \"oltp_point_select\"\noptions = { tables = 4, table-size = 1000000 }\n";
    std::fs::write(&file, text).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["run", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = versus(&home, &args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        // 2 × (200 MiB + 4 000 000 rows × 300 bytes) ≈ 2.6 GiB, against less than 64 MiB.
        assert!(err.contains("the prepared data needs about 2.6 GiB in") && err.contains("but only 0.1 GiB"), "{err}");
        assert!(err.contains("smaller table-size"), "{err}");
    }
    assert!(!home.join("results.db").exists() && !home.join("experiments").join("big").exists(), "nothing was made");
}
