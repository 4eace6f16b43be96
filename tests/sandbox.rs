//! Sandboxes against real servers: start, overrides, death detection, snapshots, clean stops.

mod common;

use mysql::prelude::Queryable;
use versus::server::process;

#[test]
fn starts_with_user_database_and_override_then_stops() {
    let mut sb = common::start(common::system_build(), &["innodb_flush_log_at_trx_commit=2"]);
    assert!(sb.version().contains("MariaDB"), "{}", sb.version());
    let mut conn = sb.connect().expect("benchmark user connects over TCP");
    let v: Option<String> = conn.query_first("SELECT @@innodb_flush_log_at_trx_commit").unwrap();
    assert_eq!(v.as_deref(), Some("2"));
    let db: Option<String> = conn.query_first("SELECT DATABASE()").unwrap();
    assert_eq!(db.as_deref(), Some("sbtest"));
    let bind: Option<String> = conn.query_first("SELECT @@bind_address").unwrap();
    assert_eq!(bind.as_deref(), Some("127.0.0.1"));
    drop(conn);
    let pid = sb.pid();
    assert!(process::is_alive(pid));
    sb.stop().unwrap();
    assert!(!process::is_alive(pid), "server {pid} still running after stop");
}

#[test]
fn a_killed_server_is_reported_with_its_error_log() {
    let mut sb = common::start(common::system_build(), &[]);
    let pid = sb.pid();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sb.check_alive().is_ok() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let err = sb.check_alive().unwrap_err().to_string();
    assert!(err.starts_with("server test: the server died (signal: 9"), "{err}");
    assert!(err.contains("error.log"), "{err}");
    assert!(err.contains("ready for connections"), "the tail of the error log is shown: {err}");
}

#[test]
fn dropping_the_guard_stops_the_server() {
    let sb = common::start(common::system_build(), &[]);
    let pid = sb.pid();
    drop(sb);
    assert!(!process::is_alive(pid), "server {pid} survived its guard");
}

#[test]
fn a_rejected_option_fails_with_the_servers_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = versus::server::SandboxSpec::new("bad", common::system_build(), dir.path().join("sb"));
    spec.overrides = vec!["no_such_variable_xyz=1".into()];
    let err = versus::server::Sandbox::start(spec).unwrap_err().to_string();
    assert!(err.contains("unknown variable 'no_such_variable_xyz=1'"), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
}

#[test]
fn snapshot_restore_brings_the_data_back_quickly() {
    let mut sb = common::start(common::system_build(), &[]);
    {
        let mut c = sb.connect().unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB").unwrap();
        c.query_drop("INSERT INTO t VALUES (1, 'kept'), (2, 'kept')").unwrap();
    }
    sb.stop().unwrap();
    let snap = sb.dir().parent().unwrap().join("snap");
    sb.snapshot(&snap).unwrap();
    sb.restart().unwrap();
    sb.connect().unwrap().query_drop("DELETE FROM t").unwrap();
    sb.stop().unwrap();
    sb.restore(&snap).unwrap();
    let ready = sb.restart().unwrap();
    eprintln!("restore-to-ready: start took {:.2} s", ready.as_secs_f64());
    let n: Option<i64> = sb.connect().unwrap().query_first("SELECT COUNT(*) FROM t WHERE v = 'kept'").unwrap();
    assert_eq!(n, Some(2));
    assert!(sb.snapshot(&snap).unwrap_err().to_string().contains("stop it before"));
}

#[test]
fn a_port_in_use_and_a_foreign_datadir_are_refused() {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut spec = versus::server::SandboxSpec::new("p", common::system_build(), dir.path().join("sb"));
    spec.port = Some(l.local_addr().unwrap().port());
    let err = versus::server::Sandbox::start(spec).unwrap_err().to_string();
    assert!(err.starts_with("--port: port ") && err.contains("is in use"), "{err}");

    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("precious.txt"), "x").unwrap();
    let mut spec = versus::server::SandboxSpec::new("d", common::system_build(), dir.path().join("sb2"));
    spec.datadir = Some(foreign.clone());
    let err = versus::server::Sandbox::start(spec).unwrap_err().to_string();
    assert!(err.contains("not empty"), "{err}");
    assert!(foreign.join("precious.txt").exists());
}
