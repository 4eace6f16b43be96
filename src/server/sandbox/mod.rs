//! Sandboxes: a server build started with a generated my.cnf on 127.0.0.1, in a directory of its own,
//! with a benchmark user and database, and stopped cleanly.
//!
//! A [`Sandbox`] started by the library is a guard: dropping it stops the server, and the kernel stops
//! the server if versus itself dies. `versus server start` detaches it instead, so it outlives the
//! command; the other `server` commands reopen it from its directory with [`Sandbox::open`].

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::interrupt;
use crate::owned;
use crate::server::admin;
use crate::server::build::Build;
use crate::server::config;
use crate::server::effective;
use crate::server::flavor::{self, InstancePaths};
use crate::server::lockdown::{self, Account};
use crate::server::process::{self, StopOutcome};
use crate::server::snapshot;

mod files;
mod record;
mod spec;

pub use files::adopt_datadir;
use files::{
    absolute, init_record, log_len, prepare_datadir, socket_path, spaceless_paths, summarize_output, write_init_record,
};
pub use record::{SandboxInfo, is_our_server, read_info, stop_leftover};
pub use spec::{DEFAULT_DATABASE, DEFAULT_PASSWORD, DEFAULT_USER, SandboxSpec};

/// A running (or stopped) sandboxed server.
#[derive(Debug)]
pub struct Sandbox {
    info: SandboxInfo,
    build: Build,
    paths: InstancePaths,
    child: Option<Child>,
    running: bool,
    owned: bool,
    auto_port: bool,
    stop_timeout: Duration,
    ready_timeout: Duration,
    ready_after: Duration,
    /// The spec it was started from; `None` for a sandbox reopened from its directory.
    spec: Option<SandboxSpec>,
    /// Requested values the server runs with differently, found when it started.
    adjusted: Vec<effective::Adjusted>,
    account: Account,
    root_password: Option<String>,
    /// Where the error log stood when this server was launched (0 for a reopened sandbox).
    log_from: u64,
}

impl Sandbox {
    /// Writes the option file, initialises the datadir if it is empty, starts the server, waits until it
    /// accepts queries and creates the benchmark user and database.
    pub fn start(spec: SandboxSpec) -> Result<Sandbox> {
        owned::check_name("--name", &spec.name)?;
        if spec.user == "root" || spec.user.is_empty() {
            return Err(Error::server(&spec.name, "the benchmark account cannot be root or empty"));
        }
        // Before anything is created: a bare option the server needs a value for would stop its start.
        crate::server::bare::check(&spec.build, &spec.overrides).map_err(|m| Error::option("--set", m))?;
        let dir = absolute(&spec.dir)?;
        // Nothing goes through a link to a place versus did not make (a datadir the user gave may be
        // reached through links of theirs above it).
        owned::check_dir(&dir)?;
        owned::create_dir_all(&dir)?;
        // Its files (error.log, mysqld.pid …) are written by versus and by the server, as root maybe.
        owned::check_entries(&dir)?;
        let datadir = match &spec.datadir {
            Some(d) => absolute(d)?,
            None => dir.join("data"),
        };
        if spec.datadir.is_some() {
            owned::check_links(&datadir)?;
        } else {
            owned::check_dir(&datadir)?;
        }
        let paths = InstancePaths {
            cnf: dir.join("my.cnf"),
            socket: socket_path(&dir),
            pid_file: dir.join("mysqld.pid"),
            error_log: dir.join("error.log"),
            tmpdir: dir.join("tmp"),
            files_dir: dir.join("files"),
            init_file: dir.join("init.sql"),
            datadir,
        };
        let l = &spec.build.layout;
        let datadir_parent = paths.datadir.parent().unwrap_or(&dir).to_path_buf();
        let parent = dir.parent().unwrap_or(&dir).to_path_buf();
        let account =
            Account::choose(&l.server, &[&l.plugin_dir, &l.messages_dir, &l.basedir, &parent, &datadir_parent]);
        let socket_dir = paths.socket.parent().unwrap_or(&dir).to_path_buf();
        for d in [&dir, &paths.tmpdir, &paths.files_dir, &socket_dir] {
            owned::check_dir(d)?;
            owned::create_dir_all(d)?;
            lockdown::private_dir(d)?;
            account.own(d)?;
        }
        let port = match spec.port {
            Some(p) => {
                if !port_is_free(p) {
                    return Err(Error::option(
                        "--port",
                        format!("port {p} is in use on 127.0.0.1; choose another or omit --port to pick a free one"),
                    ));
                }
                p
            }
            None => free_port()?,
        };
        let fresh_datadir =
            prepare_datadir(spec.fresh, &spec.build.name, &paths.datadir, &init_record(&dir), &paths.cnf)?;
        let root_password = lockdown::generate_password()?;
        lockdown::write_private(&lockdown::root_password_file(&dir), &(root_password.clone() + "\n"))?;
        let info = SandboxInfo {
            name: spec.name.clone(),
            build: spec.build.name.clone(),
            flavor: spec.build.flavor,
            version: spec.build.version_string.clone(),
            port,
            socket: paths.socket.clone(),
            pid: 0,
            dir: dir.clone(),
            datadir: paths.datadir.clone(),
            cnf: paths.cnf.clone(),
            error_log: paths.error_log.clone(),
            user: spec.user.clone(),
            password: spec.password.clone(),
            database: spec.database.clone(),
            started_at: 0,
            server_user: account.option().map(str::to_string),
        };
        let mut sb = Sandbox {
            info,
            build: spec.build.clone(),
            paths,
            child: None,
            running: false,
            owned: true,
            auto_port: spec.port.is_none(),
            stop_timeout: spec.stop_timeout,
            ready_timeout: spec.ready_timeout,
            ready_after: Duration::ZERO,
            spec: Some(spec.clone()),
            adjusted: Vec::new(),
            account,
            root_password: Some(root_password),
            log_from: 0,
        };
        if fresh_datadir {
            // Initialisation runs without the init file: the accounts it sets up do not exist yet.
            sb.write_config(&spec, false)?;
            sb.initialise()?;
        }
        sb.write_init_file(&spec)?;
        sb.write_config(&spec, true)?;
        sb.own_datadir()?;
        sb.launch(spec.detached)?;
        let mut conn = sb.connect_root()?;
        sb.info.version = admin::version(&mut conn)?;
        let requested = effective::requested(spec.base_config.as_deref(), &spec.overrides)?;
        if !requested.is_empty() {
            sb.adjusted = effective::adjusted(&requested, &admin::global_variables(&mut conn)?);
        }
        sb.save_info()?;
        if spec.detached {
            sb.owned = false;
            interrupt::unguard_pid(sb.info.pid);
        }
        Ok(sb)
    }

    /// Reopens the sandbox recorded in `dir`, running or not. It is not stopped when dropped.
    /// A `dir` that is a symbolic link to a place versus did not make is refused.
    pub fn open(dir: &Path, build: Build) -> Result<Sandbox> {
        owned::check_dir(dir)?;
        let info = read_info(dir)?;
        let account = Account::from_option(info.server_user.as_deref());
        let paths = InstancePaths {
            cnf: info.cnf.clone(),
            datadir: info.datadir.clone(),
            socket: info.socket.clone(),
            pid_file: dir.join("mysqld.pid"),
            error_log: info.error_log.clone(),
            tmpdir: dir.join("tmp"),
            files_dir: dir.join("files"),
            init_file: dir.join("init.sql"),
        };
        let running = is_our_server(&info);
        Ok(Sandbox {
            info,
            build,
            paths,
            child: None,
            running,
            owned: false,
            auto_port: false,
            stop_timeout: Duration::from_secs(120),
            ready_timeout: Duration::from_secs(120),
            ready_after: Duration::ZERO,
            spec: None,
            adjusted: Vec::new(),
            account,
            root_password: lockdown::read_root_password(dir),
            log_from: 0,
        })
    }

    /// The values of its config and `--set` options that the server clamped or adjusted when it started
    /// (empty for a reopened sandbox).
    pub fn adjusted(&self) -> &[effective::Adjusted] {
        &self.adjusted
    }

    /// What the sandbox directory records.
    pub fn info(&self) -> &SandboxInfo {
        &self.info
    }
    /// The build it runs.
    pub fn build(&self) -> &Build {
        &self.build
    }
    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.info.port
    }
    /// Unix socket path.
    pub fn socket(&self) -> &Path {
        &self.info.socket
    }
    /// Server process id (of the last start).
    pub fn pid(&self) -> u32 {
        self.info.pid
    }
    /// `SELECT VERSION()` as the server reported it.
    pub fn version(&self) -> &str {
        &self.info.version
    }
    /// The datadir.
    pub fn datadir(&self) -> &Path {
        &self.paths.datadir
    }
    /// The sandbox directory.
    pub fn dir(&self) -> &Path {
        &self.info.dir
    }
    /// The server's error log.
    pub fn error_log(&self) -> &Path {
        &self.paths.error_log
    }
    /// How long the last start took from launching the process to accepting queries.
    pub fn ready_after(&self) -> Duration {
        self.ready_after
    }
    /// True while the server process is alive (as far as the last check saw).
    pub fn is_running(&mut self) -> bool {
        if self.running {
            self.running = match self.child.as_mut() {
                Some(c) => matches!(c.try_wait(), Ok(None)),
                None => is_our_server(&self.info),
            };
        }
        self.running
    }

    /// `Ok` while the server is alive; otherwise an error with what its error log says stopped it.
    pub fn check_alive(&mut self) -> Result<()> {
        if self.is_running() {
            return Ok(());
        }
        let status = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
        let how = status.map(|s| format!(" ({s})")).unwrap_or_default();
        Err(Error::server(
            &self.info.name,
            format!(
                "the server died{how}; error log {}: {}",
                self.paths.error_log.display(),
                process::error_summary(&self.paths.error_log, self.log_from)
            ),
        ))
    }

    /// A root connection over the unix socket (root exists at 'localhost' only, with the sandbox's
    /// generated password).
    pub fn connect_root(&self) -> Result<mysql::Conn> {
        admin::connect_socket(&self.paths.socket, "root", self.root_password.as_deref())
    }

    /// The file holding root's password (0600 in the sandbox directory).
    pub fn root_password_file(&self) -> PathBuf {
        lockdown::root_password_file(&self.info.dir)
    }

    /// A connection as the benchmark user over TCP, in the benchmark database.
    pub fn connect(&self) -> Result<mysql::Conn> {
        admin::connect_tcp(self.info.port, &self.info.user, Some(&self.info.password), Some(&self.info.database))
    }

    /// Shell commands that connect to this sandbox with the build's client.
    pub fn connect_hint(&self) -> String {
        use crate::shell::quote;
        let client = self.build.client().map(|p| p.display().to_string()).unwrap_or_else(|| "mysql".into());
        let client = quote(&client);
        let root_password = match &self.root_password {
            Some(_) => format!(" -p\"$(cat {})\"", quote(&self.root_password_file().display().to_string())),
            None => String::new(),
        };
        format!(
            "{client} --no-defaults -h127.0.0.1 -P{} -u{} -p{} {}\n{client} --no-defaults -S {} -uroot{root_password}",
            self.info.port,
            quote(&self.info.user),
            quote(&self.info.password),
            quote(&self.info.database),
            quote(&self.info.socket.display().to_string())
        )
    }

    /// Stops the server: SIGTERM, wait, SIGKILL after the stop timeout.
    pub fn stop(&mut self) -> Result<StopOutcome> {
        let pid = self.info.pid;
        if !self.is_running() {
            self.running = false;
            return Ok(StopOutcome::NotRunning);
        }
        let outcome = process::terminate(pid, self.child.as_mut(), self.stop_timeout);
        interrupt::unguard_pid(pid);
        self.running = false;
        self.child = None;
        Ok(outcome)
    }

    /// Starts the stopped server again with the same option file and port (for example after
    /// [`Sandbox::restore`]) and returns how long it took to accept queries.
    pub fn restart(&mut self) -> Result<Duration> {
        if self.is_running() {
            return Err(Error::server(&self.info.name, "already running; stop it first"));
        }
        owned::check_entries(&self.info.dir)?;
        self.own_datadir()?;
        self.launch(!self.owned)?;
        if !self.owned {
            interrupt::unguard_pid(self.info.pid);
        }
        let mut conn = self.connect_root()?;
        self.info.version = admin::version(&mut conn)?;
        self.save_info()?;
        Ok(self.ready_after)
    }

    /// Copies the stopped server's datadir to `dest` and returns the bytes copied.
    pub fn snapshot(&mut self, dest: &Path) -> Result<u64> {
        if self.is_running() {
            return Err(Error::server(&self.info.name, "is running; stop it before taking a snapshot"));
        }
        snapshot::save(&self.paths.datadir, dest)
    }

    /// Replaces the stopped server's datadir with the snapshot at `src`.
    pub fn restore(&mut self, src: &Path) -> Result<()> {
        if self.is_running() {
            return Err(Error::server(&self.info.name, "is running; stop it before restoring a snapshot"));
        }
        snapshot::restore(src, &self.paths.datadir)
    }

    /// Leaves the server running when this value is dropped (it stays stoppable by PID).
    pub fn detach(mut self) -> SandboxInfo {
        self.owned = false;
        interrupt::unguard_pid(self.info.pid);
        self.info.clone()
    }

    fn write_config(&self, spec: &SandboxSpec, with_init_file: bool) -> Result<()> {
        let mut required = flavor::sandbox_options(&self.build, &self.paths, self.info.port, self.account.option());
        if with_init_file {
            required.push(("init-file".into(), Some(self.paths.init_file.display().to_string())));
        }
        let text =
            config::render(&spec.name, &spec.build.name, spec.base_config.as_deref(), &required, &spec.overrides)?;
        let text = flavor::options::adapt(&self.build, &text, &self.paths.cnf).map_err(Error::Other)?;
        lockdown::write_private(&self.paths.cnf, &text)?;
        self.account.own(&self.paths.cnf)
    }

    /// The accounts' set-up, run by the server at every start (a restored datadir brings the accounts of
    /// the sandbox it was copied from).
    fn write_init_file(&self, spec: &SandboxSpec) -> Result<()> {
        // A backquoted identifier has no escape for a line break, and the file is one statement a line.
        for (flag, v) in [("--mysql-user", &spec.user), ("--mysql-db", &spec.database)] {
            if let Some(c) = v.chars().find(|c| c.is_control()) {
                // Error::option escapes the control characters of the message: one line.
                let c = c.escape_default();
                return Err(Error::option(
                    flag,
                    format!("'{v}' has a control character ({c}); give a name without one"),
                ));
            }
        }
        let accounts = flavor::Accounts {
            root_password: self.root_password.as_deref().unwrap_or_default(),
            user: &spec.user,
            password: &spec.password,
            database: &spec.database,
        };
        // Kept out of the binary log: replicas would apply it at each start of their primary (root's
        // password among it) and lose their own.
        let mut sql = vec!["SET SESSION sql_log_bin = 0".to_string()];
        sql.extend(flavor::bootstrap_sql(self.build.flavor, self.build.version, &accounts));
        lockdown::write_private(&self.paths.init_file, &(sql.join(";\n") + ";\n"))?;
        self.account.own(&self.paths.init_file)
    }

    /// The datadir: 0700, and the server's account's (a datadir restored by versus is root's).
    fn own_datadir(&self) -> Result<()> {
        owned::check_links(&self.paths.datadir)?;
        if self.paths.datadir.is_dir() {
            lockdown::private_dir(&self.paths.datadir)?;
            self.account.own_tree(&self.paths.datadir)?;
        }
        Ok(())
    }

    fn initialise(&self) -> Result<()> {
        let mut cmd = flavor::init_command(&self.build, &self.paths, self.account.option());
        let offset = log_len(&self.paths.error_log);
        let links = spaceless_paths(&mut cmd)?;
        let record = init_record(&self.info.dir);
        write_init_record(&record, &self.paths.datadir, None)?;
        let mut command = cmd.to_command();
        // The install script dies with versus, in a process group of its own: what it leaves running
        // when versus is killed is found by that group at the next start (files::prepare_datadir).
        process::isolate(&mut command, true);
        let out =
            command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().and_then(|child| {
                let _ = write_init_record(&record, &self.paths.datadir, Some(child.id()));
                child.wait_with_output()
            });
        if let Some(dir) = links {
            owned::remove(&dir)?;
        }
        let out =
            out.map_err(|e| Error::server(&self.info.name, format!("cannot run {}: {e}", cmd.program.display())))?;
        if !out.status.success() || !self.paths.datadir.join("mysql").is_dir() {
            let mut why = process::error_summary(&self.paths.error_log, offset);
            if why == "the error log is empty" {
                let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
                why = summarize_output(&text);
            }
            return Err(Error::server(&self.info.name, format!("initialising the datadir failed: {why}")));
        }
        let marker = serde_json::json!({ "build": self.build.name, "version": self.build.version_string });
        let path = self.paths.datadir.join("versus.json");
        std::fs::write(&path, marker.to_string() + "\n").map_err(|e| Error::file(&path, e))?;
        owned::mark(&self.paths.datadir)?;
        owned::remove_file(&record)
    }

    fn launch(&mut self, detached: bool) -> Result<()> {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            match (self.launch_once(detached), self.spec.clone()) {
                (Err(e), Some(spec)) if self.auto_port && attempt < ATTEMPTS && e.to_string().contains("in use") => {
                    self.info.port = free_port()?;
                    self.write_config(&spec, true)?;
                }
                (other, _) => return other,
            }
        }
        unreachable!("the last attempt returns")
    }

    fn launch_once(&mut self, detached: bool) -> Result<()> {
        interrupt::check()?;
        let _ = owned::remove_file(&self.paths.socket);
        let offset = log_len(&self.paths.error_log);
        self.log_from = offset;
        let out_path = self.info.dir.join("server.out");
        let out = owned::open_write(&out_path, 0o644, true)?;
        let err = out.try_clone().map_err(|e| Error::file(&out_path, e))?;
        let line = flavor::start_command(&self.build, &self.paths);
        let mut cmd = line.to_command();
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        // Started under the server's account rather than switching to it itself (`user=`): a switch of
        // credentials clears the parent-death signal that ties a guarded server to versus.
        if let Some((uid, gid)) = self.account.ids() {
            use std::os::unix::process::CommandExt;
            cmd.uid(uid).gid(gid);
        }
        process::isolate(&mut cmd, !detached);
        super::affinity::pin_child(&mut cmd, self.spec.as_ref().map_or(&[][..], |s| &s.cpus))?;
        let started = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| Error::server(&self.info.name, format!("cannot run {}: {e}", line.program.display())))?;
        self.info.pid = child.id();
        tracing::debug!("sandbox {}: started {:?} as PID {}", self.info.name, cmd, self.info.pid);
        interrupt::guard_pid(self.info.pid, stop_guarded);
        self.child = Some(child);
        self.running = true;
        let deadline = started + self.ready_timeout;
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.running = false;
                interrupt::unguard_pid(self.info.pid);
                let why = process::error_summary(&self.paths.error_log, offset);
                let why = if why.contains("Address already in use") || why.contains("Bind on TCP/IP port") {
                    format!("port {} is in use: {why}", self.info.port)
                } else {
                    why
                };
                return Err(Error::server(&self.info.name, format!("failed to start ({status}): {why}")));
            }
            if let Err(e) = interrupt::check() {
                self.stop()?;
                return Err(e);
            }
            if self.paths.socket.exists() && self.connect_root().is_ok() {
                self.ready_after = started.elapsed();
                self.info.started_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
                return Ok(());
            }
            if Instant::now() > deadline {
                self.stop()?;
                return Err(Error::server(
                    &self.info.name,
                    format!(
                        "did not accept connections within {} s; error log {}: {}",
                        self.ready_timeout.as_secs(),
                        self.paths.error_log.display(),
                        process::error_summary(&self.paths.error_log, offset)
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn save_info(&self) -> Result<()> {
        let path = self.info.dir.join("sandbox.json");
        let text = serde_json::to_string_pretty(&self.info).expect("sandbox info serialises");
        lockdown::write_private(&path, &(text + "\n"))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.owned && self.running {
            let _ = self.stop();
        }
    }
}

/// True when nothing listens on 127.0.0.1:`port`.
pub fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| Error::Other(format!("cannot find a free port: {e}")))?;
    l.local_addr().map(|a| a.port()).map_err(|e| Error::Other(format!("cannot find a free port: {e}")))
}

/// How a second Ctrl-C stops a guarded server: SIGTERM, then SIGKILL after 20 s.
fn stop_guarded(pid: u32) {
    super::process::terminate(pid, None, std::time::Duration::from_secs(20));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_in_use_is_seen() {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        assert!(!port_is_free(l.local_addr().unwrap().port()));
        assert!(port_is_free(free_port().unwrap()));
    }
}
