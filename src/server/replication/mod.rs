//! Replication topologies: a primary sandbox with N replica sandboxes on 127.0.0.1, each a locked-down
//! sandbox of its own, replicating asynchronously (or semi-synchronously) by GTID; their state, their
//! exact lag by heartbeat, the time they take to catch up, and a check that their data equals the
//! primary's.
//!
//! The statements differ per family and version; they come from
//! [`Dialect`](crate::server::flavor::replication::Dialect), never from branches here.

mod catchup;
mod checksum;
mod heartbeat;
mod record;
mod status;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::server::Build;
use crate::server::admin;
use crate::server::flavor::replication::{Dialect, SourceLink};
use crate::server::lockdown;
use crate::server::sandbox::{Sandbox, SandboxSpec};

pub use catchup::{CatchUp, catch_up};
pub use checksum::{DataCheck, TableDifference, compare_data};
pub use heartbeat::{HEARTBEAT_DATABASE, Heartbeat, heartbeat_lag, probe_lag};
pub use record::{ReplicaRecord, TopologyRecord, forget, read_record, replica_name};
pub use status::{ReplicaState, replica_state};

/// The replication account versus creates on a primary (its password is generated at every start and
/// kept nowhere but in the replicas' connection settings).
pub const REPLICATION_USER: &str = "versus_repl";

/// How long a replica may take to connect and start applying before the start is given up.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);

/// What to start: a primary as [`SandboxSpec`] describes it, and its replicas.
#[derive(Debug, Clone)]
pub struct TopologySpec {
    /// The primary; the replicas take its build, base config, `--set` options and timeouts.
    pub primary: SandboxSpec,
    /// How many replicas (1 or more).
    pub replicas: usize,
    /// Semi-synchronous commits on the primary (acknowledged by a replica before they return).
    pub semi_sync: bool,
    /// Seconds each replica holds transactions back (`MASTER_DELAY`/`SOURCE_DELAY`), by replica; a
    /// missing entry is 0.
    pub delays: Vec<u32>,
    /// Options for the replicas only (`name=value` or a bare name, as `--replica-set`), after the
    /// primary's `--set` options (an applier's threads, for example).
    pub replica_overrides: Vec<String>,
    /// The build the replicas run, when it is not the primary's (a newer version of its family: the
    /// upgrade question).
    pub replica_build: Option<Build>,
    /// Start every member from the datadir in place (the primary's, and `data` in each
    /// [`TopologySpec::replica_dir`]), which the caller restored from one copy of the data, instead of
    /// from empty ones. A replica's `auto.cnf` is removed first, so that MySQL gives it a server UUID of
    /// its own.
    pub keep_data: bool,
}

impl TopologySpec {
    /// A primary with `replicas` asynchronous replicas, none delayed.
    pub fn new(primary: SandboxSpec, replicas: usize) -> Self {
        TopologySpec {
            primary,
            replicas,
            semi_sync: false,
            delays: Vec::new(),
            replica_overrides: Vec::new(),
            replica_build: None,
            keep_data: false,
        }
    }

    /// The sandbox directory of replica `i` (1-based): beside the primary's, named by [`replica_name`].
    pub fn replica_dir(&self, i: usize) -> PathBuf {
        let parent = self.primary.dir.parent().unwrap_or(Path::new("."));
        parent.join(replica_name(&self.primary.name, i))
    }

    /// Why this topology cannot run (one line naming the flag at fault and what would work), checked
    /// before anything starts.
    pub fn check(&self) -> Result<()> {
        if self.replicas == 0 {
            return Err(Error::option("--replicas", "a topology needs at least one replica"));
        }
        if self.replicas > 9 {
            return Err(Error::option("--replicas", format!("{} is too many; give 1 to 9", self.replicas)));
        }
        let last = replica_name(&self.primary.name, self.replicas);
        if crate::owned::check_name("--name", &last).is_err() {
            let room = 80 - (last.len() - self.primary.name.len());
            return Err(Error::option(
                "--name",
                format!("the replicas' names ({last} …) would be too long; give a name of at most {room} characters"),
            ));
        }
        if self.delays.len() > self.replicas {
            return Err(Error::option("--replica-delay", "more delays than replicas"));
        }
        for o in &self.replica_overrides {
            crate::server::config::parse_override(o).map_err(|e| match e {
                Error::Option { message, .. } => Error::option("--replica-set", message),
                other => other,
            })?;
        }
        if let Some(why) = Dialect::refusal(&self.primary.build, self.semi_sync) {
            let flag = if self.semi_sync && Dialect::refusal(&self.primary.build, false).is_none() {
                "--semi-sync"
            } else {
                "--replicas"
            };
            return Err(Error::option(flag, why));
        }
        if let Some(b) = &self.replica_build {
            let why = Dialect::cross_version_refusal(&self.primary.build, b)
                .or_else(|| Dialect::refusal(b, self.semi_sync))
                .map(|why| format!("{why} (replica build {})", b.name));
            if let Some(why) = why {
                return Err(Error::option("--replica-build", why));
            }
        }
        Ok(())
    }
}

/// A running primary with its replicas. Started by the library it is a guard (dropping it stops every
/// server); [`Topology::detach`] leaves them running.
#[derive(Debug)]
pub struct Topology {
    primary: Sandbox,
    replicas: Vec<Sandbox>,
    record: TopologyRecord,
}

impl Topology {
    /// Starts the primary and its replicas from empty datadirs, creates the replication account and the
    /// heartbeat table, attaches every replica by GTID and waits until each applies what the primary
    /// has. Refuses a topology the build cannot run before starting anything.
    pub fn start(spec: TopologySpec) -> Result<Topology> {
        spec.check()?;
        let dialect = Dialect::of(spec.primary.build.flavor, spec.primary.build.version);
        let replica_build = spec.replica_build.clone().unwrap_or_else(|| spec.primary.build.clone());
        let replica_dialect = Dialect::of(replica_build.flavor, replica_build.version);
        if spec.keep_data {
            for i in 1..=spec.replicas {
                let data = spec.replica_dir(i).join("data");
                let uuid = data.join("auto.cnf");
                if uuid.exists() {
                    crate::owned::remove_file(&uuid)?;
                }
                if let Some(b) = &spec.replica_build {
                    crate::server::sandbox::adopt_datadir(&data, b)?;
                }
            }
        }
        let mut primary_spec = spec.primary.clone();
        primary_spec.fresh = !spec.keep_data;
        primary_spec.overrides.extend(dialect.server_options(1, true, spec.semi_sync));
        let mut primary = Sandbox::start(primary_spec)?;
        let mut replicas: Vec<Sandbox> = Vec::new();
        for i in 1..=spec.replicas {
            let mut r = spec.primary.clone();
            r.name = replica_name(&spec.primary.name, i);
            r.build = replica_build.clone();
            r.dir = spec.replica_dir(i);
            r.port = None;
            r.datadir = None;
            r.fresh = !spec.keep_data;
            r.overrides.extend(spec.replica_overrides.iter().cloned());
            r.overrides.extend(replica_dialect.server_options(1 + i as u32, false, spec.semi_sync));
            match Sandbox::start(r) {
                Ok(sb) => replicas.push(sb),
                Err(e) => {
                    // Detached servers are no guards: what started so far is stopped here.
                    for sb in replicas.iter_mut().chain(std::iter::once(&mut primary)) {
                        let _ = sb.stop();
                    }
                    return Err(e);
                }
            }
        }
        let record = TopologyRecord {
            primary: spec.primary.name.clone(),
            semi_sync: spec.semi_sync,
            replicas: replicas
                .iter()
                .enumerate()
                .map(|(i, r)| ReplicaRecord {
                    name: r.info().name.clone(),
                    dir: r.dir().to_path_buf(),
                    server_id: 2 + i as u32,
                    delay_s: spec.delays.get(i).copied().unwrap_or(0),
                    build: spec.replica_build.as_ref().map(|b| b.name.clone()),
                })
                .collect(),
        };
        let mut topology = Topology { primary, replicas, record };
        // Recorded first: `server stop` finds the replicas even if versus dies while wiring them.
        if let Err(e) =
            record::write_record(topology.primary.dir(), &topology.record).and_then(|_| topology.wire(&dialect))
        {
            let _ = topology.stop();
            return Err(e);
        }
        Ok(topology)
    }

    /// Reopens the topology recorded in the primary's sandbox directory `dir` (running or not); it is
    /// not stopped when dropped. `build` finds a build by name: the primary's and the replicas'.
    pub fn open(dir: &Path, build: &dyn Fn(&str) -> Result<Build>) -> Result<Topology> {
        let record = read_record(dir)?;
        let info = crate::server::sandbox::read_info(dir)?;
        let primary = Sandbox::open(dir, build(&info.build)?)?;
        let replicas = record
            .replicas
            .iter()
            .map(|r| Sandbox::open(&r.dir, build(r.build.as_deref().unwrap_or(&info.build))?))
            .collect::<Result<_>>()?;
        Ok(Topology { primary, replicas, record })
    }

    fn wire(&self, dialect: &Dialect) -> Result<()> {
        let password = lockdown::generate_password()?;
        let mut p = self.primary.connect_root()?;
        for s in dialect.create_account(REPLICATION_USER, &password) {
            admin::exec(&mut p, &s)?;
        }
        // The replicas start after the primary's own set-up (its accounts), which they have themselves.
        let position = query_text(&mut p, dialect.primary_position())?;
        // `have_ssl` is YES, DISABLED or NO; a server without the variable (MySQL 8.4+) has TLS.
        let tls: Option<(String, String)> =
            p.query_first("SHOW GLOBAL VARIABLES LIKE 'have_ssl'").map_err(|e| admin::sql_error("have_ssl", e))?;
        let source_tls = tls.is_none_or(|(_, v)| v.eq_ignore_ascii_case("YES"));
        let schemas = schema_defaults(&mut p)?;
        for (r, rec) in self.replicas.iter().zip(&self.record.replicas) {
            let dialect = Self::dialect_of(r);
            let mut c = r.connect_root()?;
            // Each sandbox made its own benchmark database at its start; a replica of a newer version
            // would give it its own version's default character set (MariaDB 11 utf8mb4 where 10.11
            // has latin1), and tables created on the primary would then differ on it.
            for (schema, charset, collation) in &schemas {
                let sql = format!(
                    "ALTER DATABASE `{}` CHARACTER SET {charset} COLLATE {collation}",
                    schema.replace('`', "``")
                );
                if query_text(
                    &mut c,
                    &format!(
                        "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = {}",
                        crate::server::flavor::quote_string(schema)
                    ),
                )? == "1"
                {
                    admin::exec(&mut c, "SET SESSION sql_log_bin = 0")?;
                    admin::exec(&mut c, &sql)?;
                }
            }
            for s in dialect.start_after(&position) {
                admin::exec(&mut c, &s)?;
            }
            let link = SourceLink {
                port: self.primary.port(),
                user: REPLICATION_USER,
                password: &password,
                delay_s: rec.delay_s,
                source_tls,
            };
            admin::exec(&mut c, &dialect.change_source(&link))?;
            admin::exec(&mut c, &dialect.start_replica())?;
        }
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        for r in &self.replicas {
            let mut c = r.connect_root()?;
            loop {
                let s = replica_state(&mut c, &Self::dialect_of(r))?;
                if s.io_running == "Yes" && s.sql_running == "Yes" {
                    break;
                }
                if !s.last_error.is_empty() || Instant::now() > deadline {
                    let why = if s.last_error.is_empty() { "no error reported".to_string() } else { s.last_error };
                    return Err(Error::server(
                        &r.info().name,
                        format!(
                            "replication did not start within {} s (receiver {}, applier {}): {why}",
                            ATTACH_TIMEOUT.as_secs(),
                            s.io_running,
                            s.sql_running
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // Created once every replica is connected: a semi-synchronous primary would otherwise wait out
        // its timeout for an acknowledgement. Every replica has it before the topology is handed over.
        heartbeat::create_table(&mut p, self.primary_server_id())?;
        let timeout = ATTACH_TIMEOUT + Duration::from_secs(self.record.max_delay() as u64);
        for c in catch_up(self, timeout)? {
            if !c.reached {
                return Err(Error::server(&c.replica, "did not catch up with the primary after it started"));
            }
        }
        Ok(())
    }

    /// The primary.
    pub fn primary(&self) -> &Sandbox {
        &self.primary
    }

    /// The primary, to stop or restart it.
    pub fn primary_mut(&mut self) -> &mut Sandbox {
        &mut self.primary
    }

    /// The replicas, in order.
    pub fn replicas(&self) -> &[Sandbox] {
        &self.replicas
    }

    /// What is recorded about the topology.
    pub fn record(&self) -> &TopologyRecord {
        &self.record
    }

    /// The primary's `server_id` (the heartbeat row's key).
    pub fn primary_server_id(&self) -> u32 {
        1
    }

    /// The replication statements of the primary.
    pub fn dialect(&self) -> Dialect {
        Self::dialect_of(&self.primary)
    }

    /// The replication statements of replica `i` (0-based), whose build may be newer than the primary's.
    pub fn replica_dialect(&self, i: usize) -> Dialect {
        Self::dialect_of(&self.replicas[i])
    }

    fn dialect_of(s: &Sandbox) -> Dialect {
        Dialect::of(s.build().flavor, s.build().version)
    }

    /// Each replica's state now: threads, the server's Seconds_Behind, the last error.
    pub fn states(&self) -> Result<Vec<ReplicaState>> {
        self.replicas.iter().map(|r| replica_state(&mut r.connect_root()?, &Self::dialect_of(r))).collect()
    }

    /// The replicas, to stop, kill or restart one.
    pub fn replicas_mut(&mut self) -> &mut [Sandbox] {
        &mut self.replicas
    }

    /// Stops every server: the replicas first, then the primary.
    pub fn stop(&mut self) -> Result<()> {
        for r in &mut self.replicas {
            r.stop()?;
        }
        self.primary.stop()?;
        Ok(())
    }

    /// Leaves every server running when this value is dropped.
    pub fn detach(self) -> TopologyRecord {
        for r in self.replicas {
            r.detach();
        }
        self.primary.detach();
        self.record
    }
}

/// The default character set and collation of every database on the server behind `conn` outside the
/// system schemas and versus's own.
fn schema_defaults(conn: &mut mysql::Conn) -> Result<Vec<(String, String, String)>> {
    let sql = format!(
        "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA \
         WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', '{HEARTBEAT_DATABASE}')"
    );
    conn.query(&sql).map_err(|e| admin::sql_error(&sql, e))
}

/// The first value of the first row of `sql`, as text (empty for NULL or no row).
pub fn query_text(conn: &mut mysql::Conn, sql: &str) -> Result<String> {
    let v: Option<Option<String>> = conn.query_first(sql).map_err(|e| admin::sql_error(sql, e))?;
    Ok(v.flatten().unwrap_or_default())
}
