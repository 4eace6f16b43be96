//! `versus server …` as a user runs it: real sandboxes, one-line errors, nothing left running.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn versus(home: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("versus").unwrap();
    c.env("VERSUS_HOME", home).env_remove("RUST_BACKTRACE");
    c
}

fn one_line_error(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "expected a failure, got success: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("versus: error: "), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    err
}

#[test]
fn start_status_vars_stop_as_a_user() {
    let home = tempfile::tempdir().unwrap();
    versus(home.path()).args(["server", "fetch", "system"]).assert().success();
    versus(home.path()).args(["server", "list"]).assert().success().stdout(predicate::str::contains("system"));
    versus(home.path())
        .args(["server", "start", "system", "--name", "a", "--set", "innodb_flush_log_at_trx_commit=2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--no-defaults -h127.0.0.1 -P"));
    let status = versus(home.path()).args(["server", "status", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let pid = v[0]["pid"].as_u64().unwrap() as u32;
    assert_eq!(v[0]["running"], true);
    assert!(v[0]["version"].as_str().unwrap().contains("MariaDB"));
    let vars =
        versus(home.path()).args(["server", "vars", "a", "--json", "--like", "innodb_flush_log_at%"]).output().unwrap();
    let vars: serde_json::Value = serde_json::from_slice(&vars.stdout).unwrap();
    assert_eq!(vars["innodb_flush_log_at_trx_commit"], "2");

    let again = versus(home.path()).args(["server", "start", "system", "--name", "a"]).output().unwrap();
    assert!(one_line_error(&again).contains("already running"));

    versus(home.path()).args(["server", "stop", "a"]).assert().success().stdout(predicate::str::contains("a: stopped"));
    assert!(!versus::server::process::is_alive(pid), "server {pid} still running");
    versus(home.path()).args(["server", "status"]).assert().success().stdout(predicate::str::contains("stopped"));
}

#[test]
fn bad_input_gets_one_line_errors() {
    let home = tempfile::tempdir().unwrap();
    let out = versus(home.path()).args(["server", "start", "nope"]).output().unwrap();
    assert!(one_line_error(&out).contains("unknown build 'nope'"));
    versus(home.path())
        .args(["server", "fetch", "system"])
        .assert()
        .success()
        .stdout(predicate::str::contains("registered system"));
    // Fetching it again says once that it is already registered, not also "registered".
    let again = versus(home.path()).args(["server", "fetch", "system"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
    assert!(again.status.success() && stderr.contains("system is already registered"), "{stderr}");
    assert!(!stdout.contains("registered"), "a second message: {stdout}");
    let out = versus(home.path()).args(["server", "start", "system", "--set", "=1"]).output().unwrap();
    assert!(one_line_error(&out).contains("--set: '=1' has no option name"));
    let out = versus(home.path()).args(["server", "start", "system", "--set", "bogus_variable_q=1"]).output().unwrap();
    assert!(one_line_error(&out).contains("unknown variable 'bogus_variable_q=1'"));
    // A value left out is refused before the server starts, as its own --help says it needs one.
    let out = versus(home.path())
        .args(["server", "start", "system", "--name", "bare", "--set", "innodb_buffer_pool_size"])
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert!(
        err.contains(
            "--set: 'innodb_buffer_pool_size' has no value, and system takes one (--innodb-buffer-pool-size=#)"
        ),
        "{err}"
    );
    assert!(!home.path().join("sandboxes").join("bare").exists(), "nothing was created");
    let out = versus(home.path()).args(["server", "start", "system", "--config", "/nonexistent.cnf"]).output().unwrap();
    assert!(one_line_error(&out).contains("--config: /nonexistent.cnf is not a file"));
    let out = versus(home.path()).args(["server", "vars", "ghost"]).output().unwrap();
    assert!(one_line_error(&out).contains("no such sandbox"));
    let busy = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = versus(home.path()).args(["server", "start", "system", "--port", &port]).output().unwrap();
    assert!(one_line_error(&out).contains("is in use"));
}

#[test]
fn a_sandbox_another_command_is_working_on_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    versus(home.path()).args(["server", "fetch", "system"]).assert().success();
    // Another versus is in the middle of starting, stopping, saving or restoring `system`: it holds the
    // sandbox's lock (taken here the way versus takes it).
    let sandboxes = home.path().join("sandboxes");
    std::fs::create_dir_all(&sandboxes).unwrap();
    let file = std::fs::File::create(sandboxes.join("system.lock")).unwrap();
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).unwrap();
    let out = versus(home.path()).args(["server", "start", "system"]).output().unwrap();
    let err = one_line_error(&out);
    assert!(err.contains("another command is working on this sandbox"), "{err}");
    assert!(!sandboxes.join("system").join("data").exists(), "the refused start initialised a datadir");
    drop(held);
    versus(home.path()).args(["server", "start", "system"]).assert().success();
    let file = std::fs::File::open(sandboxes.join("system.lock")).unwrap();
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).unwrap();
    for args in [&["server", "stop", "system"][..], &["server", "snapshot", "system"], &["server", "restore", "system"]]
    {
        let err = one_line_error(&versus(home.path()).args(args).output().unwrap());
        assert!(err.contains("another command is working on this sandbox"), "{args:?}: {err}");
    }
    drop(held);
    versus(home.path()).args(["server", "stop", "system"]).assert().success();
}

#[test]
fn a_start_killed_while_initialising_is_recovered_by_the_next_start() {
    let home = tempfile::tempdir().unwrap();
    versus(home.path()).args(["server", "fetch", "system"]).assert().success();
    let bin = assert_cmd::cargo::cargo_bin("versus");
    let mut first = std::process::Command::new(&bin)
        .args(["server", "start", "system", "--name", "k"])
        .env("VERSUS_HOME", home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the install script runs (the record of the initialisation names its process group).
    let record = home.path().join("sandboxes/k/initialising");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&record).is_ok_and(|t| t.lines().next().is_some_and(|l| !l.is_empty())) {
        assert!(std::time::Instant::now() < deadline, "the initialisation never began");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    versus(home.path()).args(["server", "start", "system", "--name", "k"]).assert().success();
    assert!(!record.exists(), "the record of a finished initialisation is removed");
    let cnf = format!("--defaults-file={}", home.path().join("sandboxes/k/my.cnf").display());
    let status = versus(home.path()).args(["server", "status", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let server = v[0]["pid"].as_u64().unwrap() as u32;
    let others: Vec<u32> = versus::server::process::with_argument(&cnf).into_iter().filter(|&p| p != server).collect();
    assert!(others.is_empty(), "processes of the killed initialisation are left: {others:?}");
    versus(home.path()).args(["server", "stop", "k"]).assert().success();
}
