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
    common::processes::kill9(pid);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sb.check_alive().is_ok() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let err = sb.check_alive().unwrap_err().to_string();
    assert!(err.starts_with("server test: the server died (signal: 9"), "{err}");
    assert!(err.contains("error.log"), "{err}");
    assert!(err.contains("ready for connections"), "the tail of the error log is shown: {err}");
    // A server that logged why it stopped: that is shown, not its first lines or what came after.
    let mut log = std::fs::OpenOptions::new().append(true).open(sb.error_log()).unwrap();
    std::io::Write::write_all(&mut log, b"t 0 [ERROR] mariadbd got signal 11 ;\nSorry, we probably made a mistake\n")
        .unwrap();
    let err = sb.check_alive().unwrap_err().to_string();
    assert!(err.ends_with("error.log: mariadbd got signal 11 ;"), "{err}");
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

#[test]
fn two_versions_side_by_side_each_report_their_own_version() {
    let newer = common::fetched_build("mariadb-11.8");
    let a = common::start(common::system_build(), &[]);
    let b = common::start(newer.clone(), &["innodb_flush_log_at_trx_commit=2"]);
    assert_ne!(a.port(), b.port());
    let va: Option<String> = a.connect().unwrap().query_first("SELECT VERSION()").unwrap();
    let vb: Option<String> = b.connect().unwrap().query_first("SELECT VERSION()").unwrap();
    assert!(va.as_deref().unwrap().starts_with("10.11."), "{va:?}");
    assert!(vb.as_deref().unwrap().starts_with(&newer.version_string), "{vb:?} vs {}", newer.version_string);
    let f: Option<String> = b.connect().unwrap().query_first("SELECT @@innodb_flush_log_at_trx_commit").unwrap();
    assert_eq!(f.as_deref(), Some("2"));
}

#[test]
fn mysql_9_7_with_caching_sha2_over_tcp_and_a_quick_restart_from_snapshot() {
    let build = common::fetched_build("mysql-9.7");
    let mut sb = common::start(build, &["skip-log-bin"]);
    let mut c = sb.connect().expect("caching_sha2_password user over plain TCP");
    let plugin: Option<String> = sb
        .connect_root()
        .expect("root over the socket with the sandbox's password")
        .query_first("SELECT plugin FROM mysql.user WHERE user = 'sbtest' AND host = '%'")
        .unwrap();
    assert_eq!(plugin.as_deref(), Some("caching_sha2_password"));
    let priv_dir: Option<String> = c.query_first("SELECT @@secure_file_priv").unwrap();
    assert!(priv_dir.as_deref().unwrap().ends_with("/files/"), "{priv_dir:?}");
    let x: Option<String> =
        c.query_first("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'mysqlx'").unwrap();
    assert!(matches!(x.as_deref(), None | Some("DISABLED")), "the X plugin must be off: {x:?}");
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    drop(c);
    sb.stop().unwrap();
    let snap = sb.dir().parent().unwrap().join("snap");
    sb.snapshot(&snap).unwrap();
    sb.restore(&snap).unwrap();
    let ready = sb.restart().unwrap();
    eprintln!("MySQL 9.7 snapshot-restore start to ready: {:.2} s", ready.as_secs_f64());
    let n: Option<i64> = sb.connect().unwrap().query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(0));
}

#[test]
fn a_pinned_server_and_all_its_threads_run_on_its_cpus_only() {
    let allowed = versus::server::affinity::allowed().unwrap();
    let cpus = vec![*allowed.last().unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let mut spec = versus::server::SandboxSpec::new("pinned", common::system_build(), dir.path().join("sb"));
    spec.cpus = cpus.clone();
    let mut sb = versus::server::Sandbox::start(spec).unwrap();
    let tasks: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", sb.pid()))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    assert!(tasks.len() > 1, "mariadbd runs several threads: {tasks:?}");
    for tid in tasks {
        assert_eq!(versus::server::affinity::of_process(tid), Some(cpus.clone()), "thread {tid}");
    }
    // versus itself is not pinned by starting a pinned server.
    assert_eq!(versus::server::affinity::allowed().unwrap(), allowed);
    sb.stop().unwrap();
}

/// Values built into SQL as string literals (the init file's passwords, one statement a line) stay one
/// line and read back from the server as exactly themselves, whatever characters they hold.
#[test]
fn sql_string_literals_read_back_from_the_server_as_themselves() {
    let server = common::start_server();
    let mut c = server.root_conn();
    let hostile = [
        "plain",
        "it's",
        "a\\b",
        "line\nbreak\r\n",
        "nul\0byte",
        "ctrl-z\u{1a}",
        "tab\tand `back` \"quotes\" $x ;DROP TABLE t; --",
        "\\'; SELECT 1; --",
        "é ü 漢字 \u{2028}",
        "",
    ];
    for s in hostile {
        let lit = versus::server::flavor::quote_string(s);
        assert!(!lit.contains(['\n', '\r', '\0']), "{lit:?}");
        let back: Option<Vec<u8>> = c.query_first(format!("SELECT CAST({lit} AS BINARY)")).unwrap();
        assert_eq!(back.as_deref(), Some(s.as_bytes()), "{s:?} as {lit:?}");
    }
}
