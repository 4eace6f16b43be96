//! What a sandbox directory records about its server (`sandbox.json`), and how a record is checked
//! against the processes that are running.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::server::build::Flavor;
use crate::server::process;

/// What a sandbox directory records about its server (`sandbox.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInfo {
    /// Sandbox name.
    pub name: String,
    /// Name of the build it runs.
    pub build: String,
    /// Its flavor.
    pub flavor: Flavor,
    /// `SELECT VERSION()` of the running server.
    pub version: String,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// Unix socket.
    pub socket: PathBuf,
    /// Server process id.
    pub pid: u32,
    /// The sandbox directory.
    pub dir: PathBuf,
    /// The datadir.
    pub datadir: PathBuf,
    /// The generated option file.
    pub cnf: PathBuf,
    /// The server's error log.
    pub error_log: PathBuf,
    /// Benchmark user.
    pub user: String,
    /// Benchmark password (a sandbox-local secret; never copied into results).
    pub password: String,
    /// Benchmark database.
    pub database: String,
    /// When the server became ready, in seconds since the Unix epoch.
    pub started_at: u64,
    /// The OS account the server switches to (`user=`), when versus started it as root.
    #[serde(default)]
    pub server_user: Option<String>,
}

/// Reads `dir/sandbox.json`.
pub fn read_info(dir: &Path) -> Result<SandboxInfo> {
    let path = dir.join("sandbox.json");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::file(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::file(&path, format!("not a versus sandbox record: {e}")))
}

/// True when the process recorded in `info` is alive and is this sandbox's server.
pub fn is_our_server(info: &SandboxInfo) -> bool {
    info.pid != 0
        && process::is_alive(info.pid)
        && process::cmdline_contains(info.pid, &format!("--defaults-file={}", info.cnf.display()))
}

/// Stops any server still running on the option file of the sandbox directory `dir` (a versus that
/// was killed outright leaves its server behind, perhaps before it recorded it). Only processes given
/// exactly `--defaults-file=DIR/my.cnf` are stopped, by PID. Returns how many there were.
pub fn stop_leftover(dir: &Path) -> usize {
    let pids = process::with_argument(&format!("--defaults-file={}", dir.join("my.cnf").display()));
    for &pid in &pids {
        process::terminate(pid, None, Duration::from_secs(120));
    }
    pids.len()
}
