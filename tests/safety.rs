//! Safe by default, as a user meets it: versus deletes only what it made (victim files survive every
//! way a name or a path reaches a removal), and names that would become paths are checked or made safe.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn versus(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
    c.args(args).env("VERSUS_HOME", home).env_remove("VERSUS_DB").env_remove("RUST_BACKTRACE").stdin(Stdio::null());
    c
}

/// A directory holding a file the user cares about.
fn victim(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious.txt"), b"the user's data").unwrap();
    dir
}

fn assert_survived(dir: &Path) {
    assert_eq!(
        std::fs::read(dir.join("precious.txt")).unwrap_or_else(|e| panic!("{} was deleted: {e}", dir.display())),
        b"the user's data"
    );
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An experiment against an external server (so that no sandbox is needed), named `name`.
fn external_experiment(name: &str, port: u16) -> String {
    format!(
        r#"
name = {name:?}
threads = [1]
duration = "1s"
prewarm = false
[[targets]]
name = "ext"
address = "127.0.0.1:{port}"
user = "sbtest"
password_env = "SAFETY_TEST_PW"
database = "sbtest"
[[workloads]]
test = "oltp_point_select"
options = {{ tables = 1, table-size = 100 }}
"#
    )
}

#[test]
fn experiment_names_that_look_like_paths_never_reach_the_users_files() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let absolute = victim(t.path(), "absolute");
    let above = victim(t.path(), "above");
    let names = [absolute.display().to_string(), "../../above".to_string(), "with a space".into(), "x".repeat(300)];
    for (i, name) in names.iter().enumerate() {
        let file = t.path().join(format!("exp{i}.toml"));
        std::fs::write(&file, external_experiment(name, server.port)).unwrap();
        server.root_exec(&["DROP TABLE IF EXISTS sbtest.sbtest1"]);
        let out =
            versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
        assert!(out.status.success(), "{name:?}: {}", stderr(&out));
        let list = versus(&home, &["runs", name]).output().unwrap();
        assert!(String::from_utf8_lossy(&list.stdout).contains("done"), "{name:?} is kept as the label");
    }
    assert_survived(&absolute);
    assert_survived(&above);
    // Work directories stay inside the home, one per name.
    for e in std::fs::read_dir(home.join("experiments")).into_iter().flatten().flatten() {
        assert!(e.path().starts_with(home.join("experiments")), "{}", e.path().display());
    }
}

#[test]
fn fresh_never_empties_a_datadir_versus_did_not_make() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let out = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let data = victim(t.path(), "mydata");
    let out =
        versus(&home, &["server", "start", "system", "--name", "f", "--datadir", data.to_str().unwrap(), "--fresh"])
            .output()
            .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.starts_with("versus: error: ") && err.contains("not made by versus"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_survived(&data);

    // A datadir versus initialised may be renewed with --fresh; the directory the user gave stays.
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for _ in 0..2 {
        let out = versus(
            &home,
            &["server", "start", "system", "--name", "g", "--datadir", empty.to_str().unwrap(), "--fresh"],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let stop = versus(&home, &["server", "stop", "g"]).output().unwrap();
        assert!(stop.status.success(), "{}", stderr(&stop));
    }
    assert!(empty.join("mysql").is_dir());
}

#[test]
fn sandbox_build_and_snapshot_names_are_checked_before_anything_is_touched() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let above = victim(t.path(), "above");
    let cases: [&[&str]; 6] = [
        &["server", "start", "system", "--name", "../../above"],
        &["server", "start", "../above"],
        &["server", "stop", "../../above"],
        &["server", "snapshot", "x", "--as", "../../above"],
        &["server", "restore", "../../above"],
        &["server", "fetch", "system", "--name", "../above"],
    ];
    for args in cases {
        let out = versus(&home, args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("is not a valid name") || err.contains("no such sandbox"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert_survived(&above);
}

#[test]
fn a_home_the_user_made_keeps_the_users_files_where_versus_would_write() {
    let t = tempfile::tempdir().unwrap();
    // VERSUS_HOME is a directory of the user's, with their own `snapshots/mine` in it.
    let home = t.path().join("work");
    let theirs = victim(&home.join("snapshots"), "mine");
    let out = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = versus(&home, &["server", "start", "system", "--name", "s"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stop = versus(&home, &["server", "stop", "s"]).output().unwrap();
    assert!(stop.status.success(), "{}", stderr(&stop));
    let out = versus(&home, &["server", "snapshot", "s", "--as", "mine"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("versus did not create it") && err.trim_end().lines().count() == 1, "{err}");
    assert_survived(&theirs);
    // Snapshots versus made are replaced as before.
    for _ in 0..2 {
        let out = versus(&home, &["server", "snapshot", "s"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = versus(&home, &["server", "restore", "s", "--no-start"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}
