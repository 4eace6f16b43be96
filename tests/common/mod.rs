//! Temporary test-server fixture: a fresh system MariaDB in a tempdir, until versus::server::sandbox is
//! merged (the lead replaces the body, keeping this interface).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server with a user `sbtest`/`sbpass` and a database `sbtest`.
pub struct TestServer {
    pub host: String,
    pub port: u16,
    pub socket: PathBuf,
    pub user: String,
    pub password: String,
    pub db: String,
    child: Child,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0").local_addr().expect("local addr").port()
}

/// Starts a fresh server; panics (test setup failure) when it cannot.
pub fn start_server() -> TestServer {
    let dir = tempfile::Builder::new().prefix("vs-sb").tempdir_in("/tmp").expect("tempdir");
    let data = dir.path().join("data");
    let socket = dir.path().join("mysqld.sock");
    let st = Command::new("/usr/bin/mariadb-install-db")
        .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
        .arg(format!("--datadir={}", data.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run mariadb-install-db");
    assert!(st.success(), "mariadb-install-db failed");
    let port = free_port();
    let child = Command::new("/usr/sbin/mariadbd")
        .arg("--no-defaults")
        .arg("--user=root")
        .arg(format!("--datadir={}", data.display()))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--port={port}"))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--pid-file={}", dir.path().join("mysqld.pid").display()))
        .arg(format!("--log-error={}", dir.path().join("error.log").display()))
        .arg("--innodb-buffer-pool-size=128M")
        .arg("--innodb-log-file-size=64M")
        .arg("--innodb-flush-log-at-trx-commit=2")
        .arg("--max-connections=500")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mariadbd");
    let log = dir.path().join("error.log");
    let mut server = TestServer {
        host: "127.0.0.1".into(),
        port,
        socket,
        user: "sbtest".into(),
        password: "sbpass".into(),
        db: "sbtest".into(),
        child,
        _dir: dir,
    };
    if !server.wait_ready(Duration::from_secs(60)) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        panic!("mariadbd did not become ready on port {port}; error log:\n{text}");
    }
    server.root_exec(&[
        "CREATE USER 'sbtest'@'%' IDENTIFIED BY 'sbpass'",
        "CREATE USER 'sbtest'@'localhost' IDENTIFIED BY 'sbpass'",
        "GRANT ALL ON *.* TO 'sbtest'@'%'",
        "GRANT ALL ON *.* TO 'sbtest'@'localhost'",
        "CREATE DATABASE sbtest",
    ]);
    server
}

impl TestServer {
    fn root_opts(&self) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some("root"))
            .prefer_socket(false)
            .into()
    }

    fn wait_ready(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if mysql::Conn::new(self.root_opts()).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Runs statements as root.
    pub fn root_exec(&self, stmts: &[&str]) {
        use mysql::prelude::Queryable;
        let mut c = mysql::Conn::new(self.root_opts()).expect("root connection");
        for s in stmts {
            c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    /// A root connection.
    pub fn root_conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.root_opts()).expect("root connection")
    }

    /// The server's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
