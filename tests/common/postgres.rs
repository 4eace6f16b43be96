//! A throwaway PostgreSQL cluster for tests: initdb in a temp dir, the server on a free port of
//! 127.0.0.1 with its socket in that dir, stopped (by the PID in its pid file) when dropped, also when
//! the test fails. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
//! user that Debian's package creates.

#![allow(dead_code)]
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A running test cluster.
pub struct TempPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The directory of the newest installed PostgreSQL's programs (Debian: /usr/lib/postgresql/N/bin).
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed: run scripts/install-deps.sh --tests")
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p)| p.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop().expect("no initdb under /usr/lib/postgresql").1
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl TempPostgres {
    /// Initialises and starts a cluster with a trusted superuser `versus` and a database `versus`.
    pub fn start() -> TempPostgres {
        let dir = tempfile::Builder::new().prefix("versus-pg-").tempdir().unwrap();
        let as_postgres = nix::unistd::geteuid().is_root();
        if as_postgres {
            let st = Command::new("chown").args(["postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(st.success(), "chown of the test cluster dir failed");
        }
        let pg = TempPostgres { dir, bin: bin_dir(), port: free_port(), as_postgres };
        let data = pg.data();
        pg.run("initdb", &["-D", path(&data), "-U", "versus", "--auth=trust", "--no-sync", "-E", "UTF8"]);
        pg.restart();
        pg.run("createdb", &["-h", "127.0.0.1", "-p", &pg.port.to_string(), "-U", "versus", "versus"]);
        pg
    }

    /// Starts the server (again, after [`TempPostgres::crash`]) on its port.
    pub fn restart(&self) {
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -c port={} -k {} -c fsync=off -c max_connections=40",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log");
        self.run("pg_ctl", &["-D", path(&self.data()), "-o", &opts, "-l", path(&log), "-w", "-t", "60", "start"]);
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: every session is cut at once,
    /// nothing is flushed; the next start recovers from the write-ahead log).
    pub fn crash(&self) {
        self.run("pg_ctl", &["-D", path(&self.data()), "-m", "immediate", "-w", "-t", "60", "stop"]);
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the cluster's programs (as `postgres` when we are root) and checks it succeeded.
    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let out = if self.as_postgres {
            Command::new("runuser").args(["-u", "postgres", "--"]).arg(&exe).args(args).output()
        } else {
            Command::new(&exe).args(args).output()
        }
        .unwrap();
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}\n{log}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL of database `db` (created on first use).
    pub fn url(&self, db: &str) -> String {
        if db != "versus" {
            self.sql("versus", &format!("CREATE DATABASE {db}"));
        }
        format!("postgres://versus@127.0.0.1:{}/{db}", self.port)
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs `sql` in database `db` with psql; returns its unaligned output.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "versus"])
            .args(["-p", &self.port.to_string(), "-d", db, "-c", sql])
            .output()
            .unwrap();
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The postmaster's PID, from its pid file.
    fn pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let Some(pid) = self.pid() else { return };
        let pid = nix::unistd::Pid::from_raw(pid);
        // SIGINT is PostgreSQL's "fast" shutdown: sessions are ended, the cluster is consistent.
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let deadline = Instant::now() + Duration::from_secs(20);
        while nix::sys::signal::kill(pid, None).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if nix::sys::signal::kill(pid, None).is_ok() {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}
