//! `versus sysbench` against every server line this machine can run: MariaDB 10.5, 10.11 (the
//! distribution's), 11.8 and MySQL 9.7 (caching_sha2_password), over TCP, over the unix socket and over TLS.

mod common;

use std::process::Command;

use versus::server::Build;

fn sysbench(args: &[String]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_versus")).arg("sysbench").args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn exercise(build: Build) {
    let name = build.name.clone();
    let pki = tempfile::tempdir().expect("temp dir");
    common::write_test_pki(pki.path(), &["localhost"]);
    let overrides = common::tls_overrides(pki.path());
    let sb = common::start(build, &overrides.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let info = sb.info().clone();
    let tcp = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", info.port),
        format!("--mysql-user={}", info.user),
        format!("--mysql-password={}", info.password),
        format!("--mysql-db={}", info.database),
    ];
    let socket = vec![
        format!("--mysql-socket={}", info.socket.display()),
        format!("--mysql-user={}", info.user),
        format!("--mysql-password={}", info.password),
        format!("--mysql-db={}", info.database),
    ];
    let with = |conn: &[String], rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["oltp_read_write".into(), "--tables=1".into(), "--table-size=1000".into()];
        v.extend(conn.iter().cloned());
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let (ok, out) = sysbench(&with(&tcp, &["--threads=2", "prepare"]));
    assert!(ok, "{name}: prepare over TCP failed:\n{out}");
    for (how, conn) in [("TCP", &tcp), ("socket", &socket)] {
        let (ok, out) = sysbench(&with(conn, &["--threads=2", "--events=200", "--time=0", "run"]));
        assert!(ok, "{name}: run over {how} failed:\n{out}");
        let line = out.lines().find(|l| l.trim_start().starts_with("transactions:")).unwrap_or("");
        assert!(line.contains("200"), "{name} over {how}: {line}\n{out}");
    }
    // TLS over TCP, the server's certificate verified against the test CA.
    let ca = format!("--mysql-ssl-ca={}", pki.path().join("ca.pem").display());
    let (ok, out) = sysbench(&with(&tcp, &["--mysql-ssl=VERIFY_CA", &ca, "--events=50", "--time=0", "run"]));
    assert!(ok, "{name}: run over TLS failed:\n{out}");
    let (ok, out) = sysbench(&with(&tcp, &["cleanup"]));
    assert!(ok, "{name}: cleanup failed:\n{out}");
}

#[test]
fn mariadb_10_11_of_the_distribution() {
    exercise(common::system_build());
}

#[test]
fn mariadb_10_5() {
    exercise(common::fetched_build("mariadb-10.5"));
}

#[test]
fn mariadb_11_8() {
    exercise(common::fetched_build("mariadb-11.8"));
}

#[test]
fn mysql_9_7_with_caching_sha2_password() {
    exercise(common::fetched_build("mysql-9.7"));
}
