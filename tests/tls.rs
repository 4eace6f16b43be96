//! TLS: `--mysql-ssl` (sysbench 1.0's on/off and master's modes), `--mysql-ssl-ca/-cert/-key` and sysbench
//! 1.0's certificate files in the current directory, against a sandbox that serves a test CA's
//! certificate and has users that require TLS and a client certificate.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use common::output_text as text;
use mysql::prelude::Queryable;

fn versus_in(dir: &Path, args: &[String]) -> Output {
    let mut c = Command::cargo_bin("versus").expect("versus binary");
    c.current_dir(dir).arg("sysbench").args(args).timeout(Duration::from_secs(120));
    c.output().expect("run versus")
}

/// `oltp_point_select` on one 100-row table at `host` and the sandbox's port as `user`, then `rest`.
fn point_select(port: u16, host: &str, user: &str, password: &str, rest: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "oltp_point_select".into(),
        format!("--mysql-host={host}"),
        format!("--mysql-port={port}"),
        format!("--mysql-user={user}"),
        format!("--mysql-password={password}"),
        "--tables=1".into(),
        "--table-size=100".into(),
    ];
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

fn ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what} failed:\n{}", text(o));
    assert!(text(o).contains("transactions:"), "{what}: no report:\n{}", text(o));
}

fn fails(o: &Output, what: &str, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{what} should fail:\n{}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "{what}: not one line:\n{err}");
    assert!(err.contains(needle), "{what}: expected '{needle}' in:\n{err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn ssl_modes_verification_and_client_certificates() {
    let pki = tempfile::tempdir().unwrap();
    let dir = pki.path();
    // The server's certificate names localhost only, so that VERIFY_IDENTITY can be seen to check it.
    common::write_test_pki(dir, &["localhost"]);
    let f = |name: &str| dir.join(name).display().to_string();
    let mut overrides = common::tls_overrides(dir);
    overrides.push("innodb_buffer_pool_size=128M".into());
    let s = common::start(common::system_build(), &overrides.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let mut rootc = s.connect_root().expect("root connection");
    for q in [
        "CREATE USER tls@'127.0.0.1' IDENTIFIED BY 'tlspass' REQUIRE SSL",
        "GRANT ALL ON sbtest.* TO tls@'127.0.0.1'",
        "CREATE USER x509@'127.0.0.1' IDENTIFIED BY 'x509pass' REQUIRE X509",
        "GRANT ALL ON sbtest.* TO x509@'127.0.0.1'",
    ] {
        rootc.query_drop(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let info = s.info();
    let args = |host: &str, user: &str, extra: &[&str]| -> Vec<String> {
        let password = if user == "x509" { "x509pass" } else { "tlspass" };
        let rest: Vec<&str> =
            ["--time=0", "--events=20"].into_iter().chain(extra.iter().copied()).chain(["run"]).collect();
        point_select(s.port(), host, user, password, &rest)
    };
    let plain_dir = tempfile::tempdir().unwrap();
    let run = |host: &str, user: &str, extra: &[&str]| versus_in(plain_dir.path(), &args(host, user, extra));
    let prep =
        versus_in(plain_dir.path(), &point_select(s.port(), "127.0.0.1", &info.user, &info.password, &["prepare"]));
    assert!(prep.status.success(), "{}", text(&prep));
    let accepts = |c: &mut mysql::Conn| -> u64 {
        let v: Option<(String, u64)> = c.query_first("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'").unwrap();
        v.expect("Ssl_accepts").1
    };
    let before = accepts(&mut rootc);

    fails(&run("127.0.0.1", "tls", &[]), "plain connection of a REQUIRE SSL user", "Access denied");
    ok(&run("127.0.0.1", "tls", &["--mysql-ssl=REQUIRED"]), "REQUIRED");
    ok(&run("127.0.0.1", "tls", &["--mysql-ssl"]), "--mysql-ssl without a value (1.0's on)");
    ok(&run("127.0.0.1", "tls", &["--mysql-ssl=preferred"]), "PREFERRED with a TLS server");
    assert!(accepts(&mut rootc) >= before + 3, "the server saw no TLS handshakes");

    let ca_opt = format!("--mysql-ssl-ca={}", f("ca.pem"));
    let other_ca = format!("--mysql-ssl-ca={}", f("other-ca.pem"));
    ok(&run("127.0.0.1", "tls", &["--mysql-ssl=VERIFY_CA", &ca_opt]), "VERIFY_CA with the right CA");
    fails(&run("127.0.0.1", "tls", &["--mysql-ssl=VERIFY_CA", &other_ca]), "VERIFY_CA, wrong CA", "certificate");
    ok(&run("127.0.0.1", "tls", &["--mysql-ssl=REQUIRED", &other_ca]), "REQUIRED does not verify");
    ok(&run("localhost", "tls", &["--mysql-ssl=VERIFY_IDENTITY", &ca_opt]), "VERIFY_IDENTITY, name in certificate");
    fails(
        &run("127.0.0.1", "tls", &["--mysql-ssl=VERIFY_IDENTITY", &ca_opt]),
        "VERIFY_IDENTITY, address not in the certificate",
        "certificate",
    );

    let cert = format!("--mysql-ssl-cert={}", f("client.pem"));
    let key = format!("--mysql-ssl-key={}", f("client-key.pem"));
    fails(&run("127.0.0.1", "x509", &["--mysql-ssl=on"]), "REQUIRE X509 without a certificate", "Access denied");
    ok(&run("127.0.0.1", "x509", &["--mysql-ssl=on", &cert, &key]), "client certificate from options");

    // sysbench 1.0: --mysql-ssl=on takes cacert.pem, client-cert.pem and client-key.pem from the current
    // directory.
    let legacy = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("ca.pem"), legacy.path().join("cacert.pem")).unwrap();
    std::fs::copy(dir.join("client.pem"), legacy.path().join("client-cert.pem")).unwrap();
    std::fs::copy(dir.join("client-key.pem"), legacy.path().join("client-key.pem")).unwrap();
    ok(
        &versus_in(legacy.path(), &args("127.0.0.1", "x509", &["--mysql-ssl=on"])),
        "1.0's files in the current directory",
    );

    fails(
        &run("127.0.0.1", "tls", &["--mysql-ssl=on", "--client=lean"]),
        "the lean client asked for TLS",
        "--client=auto",
    );
    fails(&run("127.0.0.1", "tls", &["--mysql-ssl=sometimes"]), "bad mode", "--mysql-ssl");
    fails(&run("127.0.0.1", "tls", &["--mysql-ssl=on", &cert]), "certificate without key", "--mysql-ssl-key");
    fails(&run("127.0.0.1", "tls", &["--mysql-ssl-ca=/nonexistent/ca.pem"]), "missing file", "--mysql-ssl-ca");
}

#[test]
fn preferred_falls_back_to_plain_without_server_tls() {
    // MariaDB 11.4+ makes itself a certificate unless told not to.
    let s = common::start(common::system_build(), &["ssl=0", "innodb_buffer_pool_size=128M"]);
    let mut c = s.connect_root().expect("root connection");
    let have: Option<(String, String)> = c.query_first("SHOW GLOBAL VARIABLES LIKE 'have_ssl'").unwrap();
    assert_ne!(have.map(|v| v.1).as_deref(), Some("YES"), "ssl=0 left TLS on");
    let info = s.info();
    let args = |mode: &str| -> Vec<String> {
        let ssl = format!("--mysql-ssl={mode}");
        point_select(s.port(), "127.0.0.1", &info.user, &info.password, &[&ssl, "--time=0", "--events=20"])
    };
    let cwd = tempfile::tempdir().unwrap();
    let with = |mode: &str, cmd: &str| {
        let mut a = args(mode);
        a.push(cmd.into());
        versus_in(cwd.path(), &a)
    };
    assert!(with("off", "prepare").status.success());
    ok(&with("PREFERRED", "run"), "PREFERRED without server TLS");
    fails(&with("REQUIRED", "run"), "REQUIRED without server TLS", "TLS");
}
