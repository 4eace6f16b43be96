//! Shared fixtures for the integration tests: real servers in temporary sandboxes.
#![allow(dead_code)]

pub mod counters;
pub mod disk;
pub mod experiment;
pub mod home;
pub mod mirror;
pub mod processes;
pub mod reports;

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair};

use versus::server::fetch::{self, FetchOptions};
use versus::server::{Build, Home, Sandbox, SandboxSpec};

/// The distribution's MariaDB under /usr as a build (the tests' default server).
pub fn system_build() -> Build {
    let home = tempfile::tempdir().expect("temp dir");
    fetch::fetch(&Home::at(home.path()), "system", &FetchOptions::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("the tests need the distribution's MariaDB (apt-get install mariadb-server): {e}"))
}

/// A build fetched from the distribution's archives (`mariadb-11.8`, `mysql-9.7` …), fetched once into a
/// home shared by all test processes (`$VERSUS_TEST_BUILDS`, default /tmp/versus-test-builds) and
/// reused afterwards. A file lock keeps concurrent tests from fetching the same line twice.
pub fn fetched_build(line: &str) -> Build {
    let root = std::env::var_os("VERSUS_TEST_BUILDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("versus-test-builds"));
    std::fs::create_dir_all(&root).expect("test builds dir");
    let lock = std::fs::File::create(root.join(".lock")).expect("lock file");
    let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).expect("flock");
    let opts = FetchOptions { name: Some(line.to_string()), force: false, ..Default::default() };
    fetch::fetch(&Home::at(&root), line, &opts, &mut |l| eprintln!("{l}"))
        .unwrap_or_else(|e| panic!("fetching {line} for the tests failed: {e}"))
}

/// A sandbox of `build` in a fresh temporary directory; the directory lives as long as the guard.
pub struct TempSandbox {
    pub sandbox: Sandbox,
    pub dir: tempfile::TempDir,
}

impl std::ops::Deref for TempSandbox {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl std::ops::DerefMut for TempSandbox {
    fn deref_mut(&mut self) -> &mut Sandbox {
        &mut self.sandbox
    }
}

/// Starts `build` with `overrides` in a temporary sandbox directory.
pub fn start(build: Build, overrides: &[&str]) -> TempSandbox {
    let dir = tempfile::Builder::new().prefix("versus-test-").tempdir().expect("temp dir");
    let mut spec = SandboxSpec::new("test", build, dir.path().join("sb"));
    spec.overrides = overrides.iter().map(|s| s.to_string()).collect();
    let sandbox = Sandbox::start(spec).unwrap_or_else(|e| panic!("sandbox did not start: {e}"));
    TempSandbox { sandbox, dir }
}

/// A running server for workload tests: the distribution's MariaDB in a temporary sandbox, with user
/// `sbtest`/`sbpass` and database `sbtest`, sized for small benchmark tables.
pub struct TestServer {
    pub host: String,
    pub port: u16,
    pub socket: PathBuf,
    pub user: String,
    pub password: String,
    pub db: String,
    sandbox: TempSandbox,
}

/// Starts a fresh [`TestServer`]; panics (test setup failure) when it cannot.
pub fn start_server() -> TestServer {
    start_server_of(system_build(), &["innodb_log_file_size=64M"])
}

/// A [`TestServer`] of `build`, with `extra` settings besides the small ones every server line knows
/// (MySQL 8.0.30 and later has no `innodb_log_file_size`, so that one is the caller's).
pub fn start_server_of(build: Build, extra: &[&str]) -> TestServer {
    let mut overrides = vec!["innodb_buffer_pool_size=128M", "innodb_flush_log_at_trx_commit=2", "max_connections=500"];
    overrides.extend_from_slice(extra);
    let sandbox = start(build, &overrides);
    TestServer {
        host: "127.0.0.1".into(),
        port: sandbox.port(),
        socket: sandbox.socket().to_path_buf(),
        user: sandbox.info().user.clone(),
        password: sandbox.info().password.clone(),
        db: sandbox.info().database.clone(),
        sandbox,
    }
}

impl TestServer {
    /// Runs statements as root.
    pub fn root_exec(&self, stmts: &[&str]) {
        use mysql::prelude::Queryable;
        let mut c = self.root_conn();
        for s in stmts {
            c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    /// A root connection (over the socket).
    pub fn root_conn(&self) -> mysql::Conn {
        self.sandbox.connect_root().expect("root connection")
    }

    /// root's password (root connects over the socket only).
    pub fn root_password(&self) -> String {
        std::fs::read_to_string(self.sandbox.root_password_file()).expect("root.password").trim().to_string()
    }

    /// The server's PID.
    pub fn pid(&self) -> u32 {
        self.sandbox.pid()
    }

    /// The sandbox behind it.
    pub fn sandbox(&mut self) -> &mut Sandbox {
        &mut self.sandbox
    }
}

fn test_ca(name: &str) -> (Certificate, KeyPair) {
    let key = KeyPair::generate().expect("key");
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    (p.self_signed(&key).expect("CA certificate"), key)
}

fn test_leaf(dir: &Path, name: &str, names: &[&str], issuer: &(Certificate, KeyPair)) {
    let key = KeyPair::generate().expect("key");
    let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("params");
    p.distinguished_name.push(DnType::CommonName, format!("versus test {name}"));
    let cert = p.signed_by(&key, &issuer.0, &issuer.1).expect("certificate");
    std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).expect("write certificate");
    std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).expect("write key");
}

/// Writes a test CA (`ca.pem`), a server certificate for `server_names` (`server.pem`, `server-key.pem`)
/// and a client certificate (`client.pem`, `client-key.pem`) signed by it, and an unrelated CA
/// (`other-ca.pem`) into `dir`.
pub fn write_test_pki(dir: &Path, server_names: &[&str]) {
    let root = test_ca("versus test CA");
    std::fs::write(dir.join("ca.pem"), root.0.pem()).expect("write CA");
    std::fs::write(dir.join("other-ca.pem"), test_ca("some other CA").0.pem()).expect("write CA");
    test_leaf(dir, "server", server_names, &root);
    test_leaf(dir, "client", &[], &root);
}

/// Server settings that serve the certificate written by [`write_test_pki`] into `dir`.
pub fn tls_overrides(dir: &Path) -> Vec<String> {
    [("ssl_ca", "ca.pem"), ("ssl_cert", "server.pem"), ("ssl_key", "server-key.pem")]
        .iter()
        .map(|(k, f)| format!("{k}={}", dir.join(f).display()))
        .collect()
}

/// `versus sysbench ARGS`, stopped after 5 minutes.
pub fn versus_sysbench(args: &[&str]) -> std::process::Output {
    let mut c = assert_cmd::Command::cargo_bin("versus").expect("versus binary");
    c.arg("sysbench").args(args).timeout(std::time::Duration::from_secs(300));
    c.output().expect("run versus")
}

/// A finished command's stdout, then its stderr, as text.
pub fn output_text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Asserts that `versus sysbench ARGS` fails with a one-line error that contains `needle`, without a panic.
pub fn sysbench_fails_with(args: &[&str], needle: &str) {
    let o = versus_sysbench(args);
    let t = output_text(&o);
    assert!(!o.status.success(), "{args:?} should fail:\n{t}");
    assert!(t.contains(needle), "{args:?}: expected '{needle}' in:\n{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1, "one-line error expected:\n{t}");
}

/// Where `doc` breaks schemas/sysbench-report.schema.json (empty when it is valid).
pub fn sysbench_schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schemas/sysbench-report.schema.json")).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    validator.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect()
}

/// An experiment against an external server (so that no sandbox is needed), named `name`: one
/// target `ext` at 127.0.0.1:`port` as `sbtest` (password from SAFETY_TEST_PW), oltp_point_select.
pub fn external_experiment(name: &str, port: u16) -> String {
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
