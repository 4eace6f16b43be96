//! Command-line parsing with sysbench's rules (options anywhere, `--name=value`, dashes and underscores
//! interchangeable, `on|off` booleans, `--config-file`) into typed, validated [`Options`].

use std::collections::BTreeMap;

use serde::Serialize;

pub use super::names::{Command, Test};
use super::spec::{self, Kind};
pub use super::values::flag;
use super::values::{bad, count, dashed, deprecated, int, list, num, raw, read_config_file, size, tls, unknown_option};
use crate::driver::{ConnectOptions, PsMode};
use crate::error::{Error, Result};

/// The `--rand-type` distributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    /// Uniform over the range.
    Uniform,
    /// Irwin–Hall approximation of a normal around the middle.
    Gaussian,
    /// sysbench 1.0's default: a hot window around the middle.
    Special,
    /// Pareto with `--rand-pareto-h`.
    Pareto,
    /// Bounded Zipf with `--rand-zipfian-exp`.
    Zipfian,
}

/// Random-number options.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RandOptions {
    /// Distribution of ids and k values.
    pub rand_type: RandType,
    /// Iterations of gaussian and of special's gaussian part.
    pub spec_iter: u32,
    /// Percentage of the range that is special.
    pub spec_pct: u32,
    /// Percentage of draws that hit the special values.
    pub spec_res: u32,
    /// Seed; 0 means from the clock.
    pub seed: u64,
    /// Pareto h.
    pub pareto_h: f64,
    /// Zipfian exponent.
    pub zipfian_exp: f64,
}

/// Which errors are retried instead of stopping the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IgnoreErrors {
    /// Every server error.
    All,
    /// These codes.
    Codes(Vec<u16>),
}

impl IgnoreErrors {
    /// True if `code` is ignorable.
    pub fn contains(&self, code: u16) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(c) => c.contains(&code),
        }
    }
}

/// Report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// sysbench's text layout.
    Text,
    /// One JSON document (see schemas/sysbench-report.schema.json).
    Json,
}

/// How `prepare` loads rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrepareMethod {
    /// LOAD DATA LOCAL INFILE when the server allows it, else INSERT.
    Auto,
    /// sysbench's 512 KiB multi-row INSERTs.
    Insert,
    /// LOAD DATA LOCAL INFILE only.
    Load,
}

/// Which MySQL protocol client runs the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// The lean client, falling back to the mysql crate where it cannot connect.
    Auto,
    /// The lean client only.
    Lean,
    /// The mysql crate only.
    Crate,
}

/// How the event-loop threads are scheduled (`--client-priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientPriority {
    /// The normal time-sharing scheduler, as every other process (the default: it wins, see BENCHMARKS.md).
    Normal,
    /// Real-time (SCHED_FIFO, priority 1), or fail when not permitted.
    Realtime,
}

/// Where the worker threads run (`--client-affinity`; the mechanism is [`crate::driver::follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientAffinity {
    /// With the server on this host (loopback TCP, a unix socket), each worker follows its server
    /// thread's CPU (the default: it wins, see BENCHMARKS.md).
    Follow,
    /// Wherever the scheduler puts them, as sysbench's threads.
    Off,
}

/// Options of the OLTP scripts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OltpOptions {
    /// Number of tables sbtest1..N.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u32,
    /// Width of range selects.
    pub range_size: u32,
    /// Point selects per transaction.
    pub point_selects: u32,
    /// Simple ranges per transaction.
    pub simple_ranges: u32,
    /// SUM ranges per transaction.
    pub sum_ranges: u32,
    /// ORDER BY ranges per transaction.
    pub order_ranges: u32,
    /// DISTINCT ranges per transaction.
    pub distinct_ranges: u32,
    /// Index updates per transaction.
    pub index_updates: u32,
    /// Non-index updates per transaction.
    pub non_index_updates: u32,
    /// DELETE+INSERT pairs per transaction.
    pub delete_inserts: u32,
    /// Run the four range kinds.
    pub range_selects: bool,
    /// AUTO_INCREMENT ids.
    pub auto_inc: bool,
    /// No BEGIN/COMMIT.
    pub skip_trx: bool,
    /// `KEY xid (id)` instead of a primary key.
    pub secondary: bool,
    /// Build `k_<i>` after loading.
    pub create_secondary: bool,
    /// Storage engine.
    pub storage_engine: String,
    /// Appended to CREATE TABLE.
    pub create_table_options: String,
    /// Reconnect every N events (0 = never).
    pub reconnect: u64,
    /// select_random_points: points per SELECT.
    pub random_points: u32,
    /// select_random_ranges: ranges per SELECT.
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each range.
    pub delta: u32,
}

/// Every option of a `versus sysbench` invocation, typed and validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Options {
    /// Worker threads.
    pub threads: u32,
    /// Event limit (0 = none).
    pub events: u64,
    /// Time limit in seconds (0 = none).
    pub time: u64,
    /// Warmup seconds before measuring.
    pub warmup_time: u64,
    /// Target events per second (0 = closed loop).
    pub rate: u64,
    /// Seconds between intermediate reports (0 = none).
    pub report_interval: u64,
    /// Seconds at which a cumulative report is printed and stats reset.
    pub report_checkpoints: Vec<u64>,
    /// Seconds after the time limit before a forced exit (None = off).
    pub forced_shutdown: Option<u64>,
    /// Debug output.
    pub debug: bool,
    /// Log verbosity 0..5.
    pub verbosity: u32,
    /// Percentile of the latency statistics (0 = off).
    pub percentile: u32,
    /// Print the latency histogram.
    pub histogram: bool,
    /// Random numbers.
    pub rand: RandOptions,
    /// Connection.
    pub connect: ConnectOptions,
    /// Ignorable errors.
    pub ignore_errors: IgnoreErrors,
    /// Pretend every statement succeeds without sending it.
    pub dry_run: bool,
    /// Workload.
    pub oltp: OltpOptions,
    /// Report format.
    pub format: Format,
    /// How prepare loads rows (same table contents either way).
    pub prepare_method: PrepareMethod,
    /// Protocol client.
    pub client: Client,
    /// OS threads multiplexing the connections (0 = one per connection).
    pub client_threads: u32,
    /// Client processes sharing the load (`--clients`); 1 runs it in this process.
    pub clients: u32,
    /// Where they run (`--clients-on`: local, slurm).
    pub clients_on: String,
    /// `--latency-log`: the file every measured event's latency goes to.
    pub latency_log: Option<std::path::PathBuf>,
    /// The id of this process's first worker thread among every client's threads (0 unless this
    /// process is one client of several).
    #[serde(skip)]
    pub first_thread: u32,
    /// Every client's threads together when this process is one client of several; 0 otherwise.
    #[serde(skip)]
    pub all_threads: u32,
    /// Scheduling of the event-loop threads.
    pub client_priority: ClientPriority,
    /// Where the worker threads run.
    pub client_affinity: ClientAffinity,
    /// Samples per second of the server's on-CPU stacks over the measured time (`--profile`,
    /// `--profile-hz`); `None`: not profiled.
    pub profile_hz: Option<u32>,
    /// With a profile, the server threads' off-CPU time too (`--profile-waits`).
    pub profile_waits: bool,
}

/// A parsed command line.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The test, if one was named.
    pub test: Option<Test>,
    /// The command, if one was named.
    pub command: Option<Command>,
    /// Typed options.
    pub options: Options,
    /// `--help` was given.
    pub help: bool,
    /// `--version` was given.
    pub version: bool,
    /// Deprecation warnings to print on stderr.
    pub warnings: Vec<String>,
    /// Options set explicitly (underscore names), for the JSON report.
    pub explicit: BTreeMap<String, String>,
}

/// Parses everything after `versus sysbench` (already translated from legacy forms).
pub fn parse(args: &[String]) -> Result<Invocation> {
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut words = Vec::new();
    for arg in args {
        if let Some(body) = arg.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let name = name.replace('-', "_");
            let spec = spec::find(&name).ok_or_else(|| unknown_option(&name))?;
            let value = match (value, spec.kind) {
                (Some(v), _) => v.to_string(),
                (None, Kind::Bool) => "on".to_string(),
                (None, _) if name == "forced_shutdown" => "5%".to_string(),
                (None, _) => {
                    return Err(Error::option(
                        format!("--{}", dashed(&name)),
                        format!("needs a value: --{}{}", dashed(&name), spec::format_of(spec.kind)),
                    ));
                }
            };
            values.insert(name, value);
        } else if arg.starts_with('-') && arg.len() > 1 {
            return Err(Error::option(arg.clone(), "invalid option; options are written --name=value"));
        } else {
            words.push(arg.clone());
        }
    }
    if words.len() > 2 {
        return Err(Error::Other(format!("unrecognized command line argument: {}", words[2])));
    }
    let test = words.first().map(|w| Test::parse(w)).transpose()?;
    let command = words.get(1).map(|w| Command::parse(w)).transpose()?;
    from_values(values, test, command)
}

/// The typed options of `values` (option names with underscores → their text, as `--name=value`
/// gives them; `--config-file` is read here): the parser behind [`parse`], used directly by
/// experiments, which hold typed values and need no command line.
pub fn from_values(
    mut values: BTreeMap<String, String>,
    test: Option<Test>,
    command: Option<Command>,
) -> Result<Invocation> {
    for name in values.keys() {
        if spec::find(name).is_none() {
            return Err(unknown_option(name));
        }
    }
    if let Some(file) = values.get("config_file").cloned() {
        for (k, v) in read_config_file(&file)? {
            values.entry(k).or_insert(v);
        }
    }
    if let Some(t) = test {
        for name in values.keys() {
            let s = spec::find(name).expect("checked above");
            if !t.accepts(s.scope) {
                return Err(Error::option(format!("--{}", dashed(name)), format!("is not an option of {}", t.name())));
            }
        }
    }
    let mut warnings = Vec::new();
    let options = build(&values, test, &mut warnings)?;
    Ok(Invocation {
        test,
        command,
        options,
        help: flag(&values, "help")?,
        version: flag(&values, "version")?,
        warnings,
        explicit: values,
    })
}

fn build(values: &BTreeMap<String, String>, test: Option<Test>, w: &mut Vec<String>) -> Result<Options> {
    let mut threads = int(values, "threads")?;
    if let Some(t) = deprecated(values, "num_threads", "threads", w)? {
        threads = t;
    }
    if threads == 0 || threads > 100_000 {
        return Err(bad("threads", raw(values, "threads"), "must be between 1 and 100000"));
    }
    let mut events = int(values, "events")?;
    if let Some(e) = deprecated(values, "max_requests", "events", w)? {
        events = e;
    }
    let mut time = int(values, "time")?;
    if let Some(t) = deprecated(values, "max_time", "time", w)? {
        time = t;
    }
    let mut rate = int(values, "rate")?;
    if let Some(r) = deprecated(values, "tx_rate", "rate", w)? {
        rate = r;
    }
    let percentile = int(values, "percentile")?;
    if percentile > 100 {
        return Err(bad("percentile", raw(values, "percentile"), "must be between 0 and 100"));
    }
    let histogram = flag(values, "histogram")?;
    if histogram && percentile == 0 {
        return Err(Error::option("--histogram", "cannot be used with --percentile=0"));
    }
    let rand_type = match raw(values, "rand_type") {
        "uniform" => RandType::Uniform,
        "gaussian" => RandType::Gaussian,
        "special" => RandType::Special,
        "pareto" => RandType::Pareto,
        "zipfian" => RandType::Zipfian,
        v => return Err(bad("rand_type", v, "expected uniform, gaussian, special, pareto or zipfian")),
    };
    let spec_res = int(values, "rand_spec_res")?;
    if spec_res > 100 {
        return Err(bad("rand_spec_res", raw(values, "rand_spec_res"), "must be at most 100"));
    }
    let pareto_h = num(values, "rand_pareto_h")?;
    if !(pareto_h > 0.0 && pareto_h < 1.0) {
        return Err(bad("rand_pareto_h", raw(values, "rand_pareto_h"), "must be between 0 and 1 (exclusive)"));
    }
    let rand = RandOptions {
        rand_type,
        spec_iter: int(values, "rand_spec_iter")?.clamp(1, 1000) as u32,
        spec_pct: int(values, "rand_spec_pct")?.min(100) as u32,
        spec_res: spec_res as u32,
        seed: int(values, "rand_seed")?,
        pareto_h,
        zipfian_exp: num(values, "rand_zipfian_exp")?,
    };
    match raw(values, "db_driver") {
        "mysql" => {}
        v => return Err(bad("db_driver", v, "versus supports only the mysql driver")),
    }
    let ps_mode = match raw(values, "db_ps_mode") {
        "auto" => PsMode::Auto,
        "disable" => PsMode::Disable,
        v => return Err(bad("db_ps_mode", v, "expected auto or disable")),
    };
    let mut ports = Vec::new();
    for p in list(values, "mysql_port") {
        ports.push(p.parse::<u16>().map_err(|_| bad("mysql_port", &p, "expected a TCP port number"))?);
    }
    let ignore = list(values, "mysql_ignore_errors");
    let ignore_errors = if ignore.iter().any(|c| c == "all") {
        IgnoreErrors::All
    } else {
        let mut codes = Vec::new();
        // "none" (common in scripts) ignores nothing, as in sysbench where it reads as error 0.
        for c in ignore.iter().filter(|c| *c != "none") {
            codes.push(
                c.parse::<u16>()
                    .map_err(|_| bad("mysql_ignore_errors", c, "expected error numbers, 'all' or 'none'"))?,
            );
        }
        IgnoreErrors::Codes(codes)
    };
    let mut oltp = OltpOptions {
        tables: count(values, "tables")?,
        table_size: count(values, "table_size")?,
        range_size: count(values, "range_size")?,
        point_selects: count(values, "point_selects")?,
        simple_ranges: count(values, "simple_ranges")?,
        sum_ranges: count(values, "sum_ranges")?,
        order_ranges: count(values, "order_ranges")?,
        distinct_ranges: count(values, "distinct_ranges")?,
        index_updates: count(values, "index_updates")?,
        non_index_updates: count(values, "non_index_updates")?,
        delete_inserts: count(values, "delete_inserts")?,
        range_selects: flag(values, "range_selects")?,
        auto_inc: flag(values, "auto_inc")?,
        skip_trx: flag(values, "skip_trx")?,
        secondary: flag(values, "secondary")?,
        create_secondary: flag(values, "create_secondary")?,
        storage_engine: raw(values, "mysql_storage_engine").to_string(),
        create_table_options: raw(values, "create_table_options").to_string(),
        reconnect: u64::from(count(values, "reconnect")?),
        random_points: count(values, "random_points")?,
        number_of_ranges: count(values, "number_of_ranges")?,
        delta: count(values, "delta")?,
    };
    if oltp.tables == 0 && test != Some(Test::BulkInsert) {
        return Err(bad("tables", raw(values, "tables"), "must be at least 1"));
    }
    if !oltp.storage_engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad("mysql_storage_engine", &oltp.storage_engine, "expected an engine name"));
    }
    if test == Some(Test::OltpPointSelect) {
        oltp.point_selects = 1;
    }
    // Validated as sysbench does; threads get the platform's default stack.
    size(values, "thread_stack_size")?;
    let forced_shutdown = match raw(values, "forced_shutdown") {
        "off" | "" => None,
        v if v.ends_with('%') => {
            let pct: u64 = v[..v.len() - 1].parse().map_err(|_| bad("forced_shutdown", v, "expected N or N%"))?;
            Some(time * pct / 100)
        }
        v => Some(v.parse().map_err(|_| bad("forced_shutdown", v, "expected N, N% or off"))?),
    };
    let mut checkpoints = Vec::new();
    for c in list(values, "report_checkpoints") {
        checkpoints.push(c.parse::<u64>().map_err(|_| bad("report_checkpoints", &c, "expected seconds"))?);
    }
    checkpoints.sort_unstable();
    let format = match raw(values, "format") {
        "text" => Format::Text,
        "json" => Format::Json,
        v => return Err(bad("format", v, "expected text or json")),
    };
    let prepare_method = match raw(values, "prepare_method") {
        "auto" => PrepareMethod::Auto,
        "insert" => PrepareMethod::Insert,
        "load" => PrepareMethod::Load,
        v => return Err(bad("prepare_method", v, "expected auto, insert or load")),
    };
    let client = match raw(values, "client") {
        "auto" => Client::Auto,
        "lean" => Client::Lean,
        "crate" => Client::Crate,
        v => return Err(bad("client", v, "expected auto, lean or crate")),
    };
    let client_priority = match raw(values, "client_priority") {
        "normal" => ClientPriority::Normal,
        "realtime" => ClientPriority::Realtime,
        v => return Err(bad("client_priority", v, "expected normal or realtime")),
    };
    let client_affinity = match raw(values, "client_affinity") {
        "follow" => ClientAffinity::Follow,
        "off" => ClientAffinity::Off,
        v => return Err(bad("client_affinity", v, "expected follow or off")),
    };
    let profile_hz = match int(values, "profile_hz")? {
        hz @ 1..=10_000 => flag(values, "profile")?.then_some(hz as u32),
        v => return Err(bad("profile_hz", &v.to_string(), "expected 1 to 10000 samples per second")),
    };
    let profile_waits = flag(values, "profile_waits")?;
    if profile_waits && profile_hz.is_none() {
        return Err(Error::option("--profile-waits", "waits are recorded with the profile; add --profile"));
    }
    let sockets = list(values, "mysql_socket");
    let stmt_cache_size = (oltp.tables as usize).saturating_mul(10).saturating_add(8);
    // `c=c+1` on the CHAR column only works without strict mode, as on the servers of the incupdate era.
    let init = if test == Some(Test::OltpIncUpdate) {
        vec![
            "SET SESSION sql_mode=REPLACE(REPLACE(@@sql_mode,'STRICT_TRANS_TABLES',''),'STRICT_ALL_TABLES','')"
                .to_string(),
        ]
    } else {
        Vec::new()
    };
    let client_threads = int(values, "client_threads")?.min(threads);
    let clients = super::clients::option(values, threads, rate, events, !checkpoints.is_empty())?;
    let os_threads = if client_threads == 0 { threads } else { client_threads };
    if let Some(limit) = machine_thread_limit()
        && os_threads as u64 > limit
    {
        return Err(bad(
            "threads",
            raw(values, "threads"),
            &format!(
                "{os_threads} worker threads are more than this machine lets a user start ({limit}: the lowest of RLIMIT_NPROC, kernel.threads-max and kernel.pid_max); use fewer threads, or --client-threads N to run the connections on N threads"
            ),
        ));
    }
    Ok(Options {
        threads: threads as u32,
        events,
        time,
        warmup_time: int(values, "warmup_time")?,
        rate,
        report_interval: int(values, "report_interval")?,
        report_checkpoints: checkpoints,
        forced_shutdown,
        debug: flag(values, "debug")?,
        verbosity: int(values, "verbosity")?.min(5) as u32,
        percentile: percentile as u32,
        histogram,
        rand,
        connect: ConnectOptions {
            hosts: list(values, "mysql_host"),
            ports,
            sockets,
            user: raw(values, "mysql_user").to_string(),
            password: raw(values, "mysql_password").to_string(),
            db: raw(values, "mysql_db").to_string(),
            tls: tls(values)?,
            compression: flag(values, "mysql_compression")?,
            ps_mode,
            stmt_cache_size,
            init,
            connect_timeout_secs: int(values, "thread_init_timeout")?,
        },
        ignore_errors,
        dry_run: flag(values, "mysql_dry_run")?,
        oltp,
        format,
        prepare_method,
        client,
        client_threads: client_threads as u32,
        clients,
        clients_on: super::clients::place(values)?,
        latency_log: super::clients::latency_log(values, clients)?,
        first_thread: 0,
        all_threads: 0,
        client_priority,
        client_affinity,
        profile_hz,
        profile_waits,
    })
}

impl Options {
    /// The OS threads that run the connections: the event loops (`--client-threads`), else one per
    /// connection.
    pub fn os_threads(&self) -> u32 {
        if self.client_threads == 0 { self.threads } else { self.client_threads }
    }

    /// Worker `tid`'s id among every client's threads, and their number: what a workload partitions
    /// its keys by.
    pub fn global_thread(&self, tid: usize) -> (u32, u32) {
        let all = if self.all_threads == 0 { self.threads } else { self.all_threads };
        (self.first_thread + tid as u32, all)
    }
}

impl Default for Options {
    fn default() -> Self {
        build(&BTreeMap::new(), None, &mut Vec::new()).expect("defaults are valid")
    }
}

/// The most threads this machine lets a user start: the lowest of the soft `RLIMIT_NPROC`, the
/// kernel's `threads-max` and `pid_max` (`None` when none of them can be read).
pub fn machine_thread_limit() -> Option<u64> {
    use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit};
    let mut limits = Vec::new();
    if let Ok((soft, _)) = getrlimit(Resource::RLIMIT_NPROC)
        && soft != RLIM_INFINITY
    {
        limits.push(soft);
    }
    for f in ["/proc/sys/kernel/threads-max", "/proc/sys/kernel/pid_max"] {
        if let Some(n) = std::fs::read_to_string(f).ok().and_then(|t| t.trim().parse().ok()) {
            limits.push(n);
        }
    }
    limits.into_iter().min()
}
