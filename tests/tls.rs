//! TLS: `--mysql-ssl` (sysbench 1.0's on/off and master's modes), `--mysql-ssl-ca/-cert/-key` and sysbench
//! 1.0's certificate files in the current directory, against a sandbox that serves a test CA's
//! certificate and has users that require TLS and a client certificate.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use mysql::prelude::Queryable;
use rcgen::{BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair};

fn versus_in(dir: &Path, args: &[String]) -> Output {
    let mut c = Command::cargo_bin("versus").expect("versus binary");
    c.current_dir(dir).arg("sysbench").args(args).timeout(Duration::from_secs(120));
    c.output().expect("run versus")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn ca(name: &str) -> (Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    (p.self_signed(&key).unwrap(), key)
}

/// Writes `<name>.pem` and `<name>-key.pem`: a certificate for `names`, signed by `issuer`.
fn leaf(dir: &Path, name: &str, names: &[&str], issuer: &(Certificate, KeyPair)) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.distinguished_name.push(DnType::CommonName, format!("versus test {name}"));
    let cert = p.signed_by(&key, &issuer.0, &issuer.1).unwrap();
    std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
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
    let root = ca("versus test CA");
    std::fs::write(dir.join("ca.pem"), root.0.pem()).unwrap();
    std::fs::write(dir.join("other-ca.pem"), ca("some other CA").0.pem()).unwrap();
    // The server's certificate names localhost only, so that VERIFY_IDENTITY can be seen to check it.
    leaf(dir, "server", &["localhost"], &root);
    leaf(dir, "client", &[], &root);
    let f = |name: &str| dir.join(name).display().to_string();
    let s = common::start(
        common::system_build(),
        &[
            &format!("ssl_ca={}", f("ca.pem")),
            &format!("ssl_cert={}", f("server.pem")),
            &format!("ssl_key={}", f("server-key.pem")),
            "innodb_buffer_pool_size=128M",
        ],
    );
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
        let mut v: Vec<String> = vec![
            "oltp_point_select".into(),
            format!("--mysql-host={host}"),
            format!("--mysql-port={}", s.port()),
            format!("--mysql-user={user}"),
            format!("--mysql-password={}", if user == "x509" { "x509pass" } else { "tlspass" }),
            "--mysql-db=sbtest".into(),
            "--tables=1".into(),
            "--table-size=100".into(),
            "--time=0".into(),
            "--events=20".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push("run".into());
        v
    };
    let plain_dir = tempfile::tempdir().unwrap();
    let run = |host: &str, user: &str, extra: &[&str]| versus_in(plain_dir.path(), &args(host, user, extra));
    let prep = versus_in(
        plain_dir.path(),
        &[
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", s.port()),
            format!("--mysql-user={}", info.user),
            format!("--mysql-password={}", info.password),
            "--tables=1".into(),
            "--table-size=100".into(),
            "prepare".into(),
        ],
    );
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
    let s = common::start_server();
    let mut c = s.root_conn();
    let have: Option<(String, String)> = c.query_first("SHOW GLOBAL VARIABLES LIKE 'have_ssl'").unwrap();
    assert_ne!(have.map(|v| v.1).as_deref(), Some("YES"), "this test needs a server without TLS");
    let args = |mode: &str| -> Vec<String> {
        vec![
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", s.port),
            format!("--mysql-user={}", s.user),
            format!("--mysql-password={}", s.password),
            "--tables=1".into(),
            "--table-size=100".into(),
            format!("--mysql-ssl={mode}"),
            "--time=0".into(),
            "--events=20".into(),
        ]
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
