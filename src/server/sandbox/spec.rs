//! What to start: the build, its configuration, its account and where its files go.

use std::path::PathBuf;
use std::time::Duration;

use crate::server::build::Build;

/// The benchmark user created in every sandbox (sysbench's default user name).
pub const DEFAULT_USER: &str = "sbtest";
/// Its password.
pub const DEFAULT_PASSWORD: &str = "sbpass";
/// The database created in every sandbox.
pub const DEFAULT_DATABASE: &str = "sbtest";

/// What to start: a build, a configuration and where to keep the files.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    /// Sandbox name (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// The server build to run.
    pub build: Build,
    /// The sandbox directory: my.cnf, logs, socket, pid file and (by default) the datadir.
    pub dir: PathBuf,
    /// A base option file whose options come first.
    pub base_config: Option<PathBuf>,
    /// `name=value` (or bare `name`) options applied on top, as with `--set`.
    pub overrides: Vec<String>,
    /// TCP port on 127.0.0.1; a free one is picked when `None`.
    pub port: Option<u16>,
    /// The datadir; `dir/data` when `None`.
    pub datadir: Option<PathBuf>,
    /// Start from an empty datadir even if one exists.
    pub fresh: bool,
    /// Leave the server running after versus exits (for `versus server start`).
    pub detached: bool,
    /// Benchmark user name.
    pub user: String,
    /// Benchmark user password.
    pub password: String,
    /// Database created for the benchmark.
    pub database: String,
    /// How long to wait for the server to accept queries.
    pub ready_timeout: Duration,
    /// How long a clean shutdown may take before SIGKILL.
    pub stop_timeout: Duration,
    /// The CPUs the server runs on (`pin_cpus`); any CPU when empty.
    pub cpus: Vec<usize>,
}

impl SandboxSpec {
    /// A spec with the defaults: free port, `dir/data`, user `sbtest`/`sbpass`, database `sbtest`.
    pub fn new(name: impl Into<String>, build: Build, dir: impl Into<PathBuf>) -> Self {
        SandboxSpec {
            name: name.into(),
            build,
            dir: dir.into(),
            base_config: None,
            overrides: Vec::new(),
            port: None,
            datadir: None,
            fresh: false,
            detached: false,
            user: DEFAULT_USER.into(),
            password: DEFAULT_PASSWORD.into(),
            database: DEFAULT_DATABASE.into(),
            ready_timeout: Duration::from_secs(120),
            stop_timeout: Duration::from_secs(120),
            cpus: Vec::new(),
        }
    }
}
