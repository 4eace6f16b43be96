//! `versus ibench`: the Insert Benchmark against a running server, and `versus ibench compare` over
//! saved JSON results.

use crate::profile::summary;
use crate::workload::ibench::profiled::ProfiledSteps;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand, ValueEnum};

use super::output_file::OutputFile;
use crate::driver::mysql::MysqlDriver;
use crate::driver::{ConnectOptions, Driver, PsMode};
use crate::error::{Error, Result};
use crate::workload::ibench::{
    self, IbenchResult, IntervalLine, Options, ServerProbe, Skipped, Step, StepObserver, StepResult,
};

/// `versus ibench`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, allow_negative_numbers = true)]
pub struct IbenchArgs {
    #[command(subcommand)]
    command: Option<IbenchCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum IbenchCommand {
    /// The Small Datum tables (absolute, relative to the first, achieved insert rates, efficiency,
    /// response times) over results saved with `--format json` or `--output`.
    Compare(CompareArgs),
}

/// Output of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RunFormat {
    /// Progress lines and a text report.
    Text,
    /// The result as JSON on standard output (progress on standard error).
    Json,
}

/// Output of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompareFormat {
    /// Terminal tables.
    Text,
    /// Markdown tables.
    Markdown,
    /// A self-contained HTML page with the reference's colours.
    Html,
    /// The comparison model as JSON.
    Json,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// Result files written by `versus ibench --format json` (or `--output`); the first is the base.
    #[arg(value_name = "RESULT.json", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// text, markdown, html or json.
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    /// Colour the terminal tables (backgrounds as in the reference's HTML report).
    #[arg(long)]
    color: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Server host.
    #[arg(long, default_value = "127.0.0.1", help_heading = "Connection")]
    host: String,
    /// Server port.
    #[arg(long, default_value_t = 3306, help_heading = "Connection")]
    port: u16,
    /// Unix socket (instead of host and port).
    #[arg(long, help_heading = "Connection")]
    socket: Option<String>,
    /// User.
    #[arg(long, default_value = "sbtest", help_heading = "Connection")]
    user: String,
    /// Password [default: $VERSUS_IBENCH_PASSWORD, else none].
    #[arg(long, env = "VERSUS_IBENCH_PASSWORD", hide_env_values = true, help_heading = "Connection")]
    password: Option<String>,
    /// Process id of the server, for its CPU, context switches, I/O and RSS [default: from @@pid_file
    /// when the server runs on this machine].
    #[arg(long, help_heading = "Connection")]
    server_pid: Option<u32>,
    /// Clients (each with an inserter, a deleter and a query connection).
    #[arg(long, default_value_t = 1)]
    clients: i64,
    /// All clients share one table instead of one table each.
    #[arg(long)]
    shared_table: bool,
    /// Rows per client loaded by l.i0.
    #[arg(long, default_value_t = 10_000_000)]
    rows: i64,
    /// Rows per client inserted and deleted by l.i1.
    #[arg(long, default_value_t = 16_000_000)]
    rows_i1: i64,
    /// Rows per client inserted and deleted by l.i2.
    #[arg(long, default_value_t = 4_000_000)]
    rows_i2: i64,
    /// Seconds per query step (each client inserts seconds × rate rows).
    #[arg(long, default_value_t = 1800)]
    query_seconds: i64,
    /// Target inserts/s per client of the query-step pairs (qrN and qpN).
    #[arg(long, value_delimiter = ',', default_value = "100,500,1000")]
    rates: Vec<i64>,
    /// Steps to run, in order: all, load, queries, or names (l.i0,l.x,l.i1,l.i2,cleanup,qr100,qp100 …).
    #[arg(long, default_value = "all")]
    steps: String,
    /// Base seed; every step and client derives its own, so two servers see the same rows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seconds the cleanup waits [default: 60 + 1 per million rows loaded, at most 1200].
    #[arg(long)]
    cleanup_seconds: Option<i64>,
    /// Rows per INSERT in l.i0 and l.x.
    #[arg(long, default_value_t = 100, help_heading = "Data")]
    rpc_load: i64,
    /// Rows per statement in l.i1.
    #[arg(long, default_value_t = 50, help_heading = "Data")]
    rpc_write1: i64,
    /// Rows per statement in l.i2.
    #[arg(long, default_value_t = 5, help_heading = "Data")]
    rpc_write2: i64,
    /// Rows per statement of the background writes in query steps.
    #[arg(long, default_value_t = 50, help_heading = "Data")]
    rpc_query: i64,
    /// Storage engine.
    #[arg(long, default_value = "innodb", help_heading = "Data")]
    engine: String,
    /// Text appended to CREATE TABLE.
    #[arg(long, default_value = "", help_heading = "Data")]
    engine_options: String,
    /// Shortest `data` value.
    #[arg(long, default_value_t = 10, help_heading = "Data")]
    data_length_min: i64,
    /// Longest `data` value.
    #[arg(long, default_value_t = 20, help_heading = "Data")]
    data_length_max: i64,
    /// Leave FORCE INDEX out of the range queries.
    #[arg(long, help_heading = "Data")]
    no_force_index: bool,
    /// Count the rows after every write step (outside the measured time).
    #[arg(long)]
    count_rows: bool,
    /// Seconds between progress lines.
    #[arg(long, default_value_t = 1)]
    report_interval: i64,
    /// Label of this server in comparisons [default: its version].
    #[arg(long)]
    label: Option<String>,
    /// text, or json (the result on standard output).
    #[arg(long, value_enum, default_value = "text")]
    format: RunFormat,
    /// Also write the result as JSON to this file (for `versus ibench compare`).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
    /// Sample the server's on-CPU stacks over each step and print its CPU per operation and top
    /// functions after the report (a server on this host; needs perf).
    #[arg(long, help_heading = "Profile")]
    profile: bool,
    /// Samples per second of --profile (1 to 10000).
    #[arg(long, default_value_t = crate::profile::DEFAULT_HZ, help_heading = "Profile")]
    profile_hz: u32,
    /// With --profile: also where the server's threads waited off the CPU (root).
    #[arg(long, help_heading = "Profile")]
    profile_waits: bool,
}

impl RunArgs {
    /// The server process to profile and how, checked before anything runs; `None` without --profile.
    fn profiling(&self, probe: &LocalServerProbe) -> Result<Option<u32>> {
        if !self.profile {
            if self.profile_waits {
                return Err(Error::option("--profile-waits", "waits are recorded with the profile; add --profile"));
            }
            return Ok(None);
        }
        if !(1..=10_000).contains(&self.profile_hz) {
            return Err(Error::option("--profile-hz", format!("{} is out of range; use 1 to 10000", self.profile_hz)));
        }
        crate::profile::availability().map_err(|e| Error::option("--profile", e))?;
        probe.pid.map(Some).ok_or_else(|| {
            Error::option(
                "--profile",
                "the server's process is not known: it is not on this host, or its pid file cannot be read; give \
                 --server-pid, or leave --profile out",
            )
        })
    }

    fn options(&self) -> Result<Options> {
        let count = |flag: &str, v: i64| -> Result<u64> {
            u64::try_from(v)
                .map_err(|_| Error::option(flag, format!("{v} is out of range; a row count cannot be negative")))
        };
        let clients = u32::try_from(self.clients)
            .map_err(|_| Error::option("--clients", format!("{} is out of range; use 1 to 1024", self.clients)))?;
        let mut o = Options {
            clients,
            shared_table: self.shared_table,
            rows_load: count("--rows", self.rows)?,
            rows_write1: count("--rows-i1", self.rows_i1)?,
            rows_write2: count("--rows-i2", self.rows_i2)?,
            query_seconds: self.query_seconds,
            rates: self.rates.clone(),
            rpc_load: self.rpc_load,
            rpc_write1: self.rpc_write1,
            rpc_write2: self.rpc_write2,
            rpc_query: self.rpc_query,
            seed: self.seed,
            cleanup_seconds: self.cleanup_seconds,
            engine: self.engine.clone(),
            engine_options: self.engine_options.clone(),
            data_length_min: self.data_length_min,
            data_length_max: self.data_length_max,
            force_index: !self.no_force_index,
            count_rows: self.count_rows,
            report_interval: self.report_interval,
            ..Options::default()
        };
        o.validate()?;
        o.steps = ibench::parse_steps(&self.steps, &o.rates)?;
        o.validate()?;
        Ok(o)
    }

    fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            hosts: vec![self.host.clone()],
            ports: vec![self.port],
            sockets: self.socket.iter().cloned().collect(),
            user: self.user.clone(),
            password: self.password.clone().unwrap_or_default(),
            db: String::new(),
            ps_mode: PsMode::Disable,
            ..ConnectOptions::default()
        }
    }
}

/// An admin connection for status counters, and the server's pid when it is local.
struct LocalServerProbe {
    conn: Option<mysql::Conn>,
    pid: Option<u32>,
}

impl LocalServerProbe {
    fn new(a: &RunArgs) -> LocalServerProbe {
        let mut b = mysql::OptsBuilder::new()
            .user(Some(a.user.clone()))
            .pass(a.password.clone())
            .tcp_connect_timeout(Some(std::time::Duration::from_secs(5)));
        b = match &a.socket {
            Some(s) => b.socket(Some(s.clone())),
            None => b.ip_or_hostname(Some(a.host.clone())).tcp_port(a.port).prefer_socket(false),
        };
        let mut conn = mysql::Conn::new(b).ok();
        let local = a.socket.is_some() || crate::server::process::is_local_host(&a.host);
        let pid = a.server_pid.or_else(|| {
            use mysql::prelude::Queryable;
            let c = conn.as_mut().filter(|_| local)?;
            crate::server::process::server_pid_from_pid_file(|q| c.query_first(q).ok().flatten()).ok()
        });
        LocalServerProbe { conn, pid }
    }
}

impl ServerProbe for LocalServerProbe {
    fn server_pid(&mut self) -> Option<u32> {
        self.pid
    }
    fn global_status(&mut self) -> Option<Vec<(String, String)>> {
        crate::server::admin::global_status(self.conn.as_mut()?).ok()
    }
    fn check_alive(&mut self) -> std::result::Result<(), String> {
        match self.pid {
            Some(pid) if !crate::server::process::is_alive(pid) => Err(format!("process {pid} is gone")),
            _ => Ok(()),
        }
    }
}

/// Prints progress: the interval lines of each step, then one line per finished step.
struct StepLines {
    to_stderr: bool,
    quiet: bool,
}

impl StepLines {
    fn line(&self, s: &str) {
        if self.quiet {
            return;
        }
        if self.to_stderr {
            eprintln!("{s}");
        } else {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(o, "{s}");
            let _ = o.flush();
        }
    }
}

impl StepObserver for StepLines {
    fn step_started(&mut self, step: Step) {
        if step != Step::Cleanup {
            self.line(&ibench::report::interval_header(step));
        }
    }
    fn interval(&mut self, _step: Step, l: &IntervalLine) {
        self.line(&ibench::report::interval_text(l));
    }
    fn note(&mut self, step: Step, text: &str) {
        self.line(&format!("{step}: {text}"));
    }
    fn step_done(&mut self, r: &StepResult) {
        let mut s = format!("{}: {:?} in {:.1} s", r.step, r.status, r.seconds).to_lowercase();
        if let Some(l) = ibench::report::sla_line(r) {
            s = format!("{s}; {}", l.trim_start_matches(&r.step.name()).trim());
        }
        if let Some(e) = &r.error {
            s = format!("{s}: {e}");
        }
        self.line(&s);
    }
    fn step_skipped(&mut self, k: &Skipped) {
        self.line(&format!("{}: {}", k.step, k.reason));
    }
}

fn write_out(s: &str) -> Result<()> {
    super::output::print(s)
}

/// The line `versus ibench` starts with: the steps and the estimated time (the defaults take hours).
fn banner(o: &Options) -> String {
    let steps: Vec<String> = o.selected_steps().iter().map(|s| s.to_string()).collect();
    format!(
        "Insert Benchmark: {} step(s) ({}), {} client(s): about {} (a rough estimate; --rows, --rows-i1, \
         --rows-i2 and --query-seconds size it)",
        steps.len(),
        steps.join(", "),
        o.clients,
        crate::experiment::progress::human(o.estimate())
    )
}

/// Runs `versus ibench`; the exit code is 0, 1 when a step failed, 130 when interrupted.
pub fn run(args: IbenchArgs) -> Result<i32> {
    if let Some(IbenchCommand::Compare(c)) = args.command {
        return compare(c);
    }
    let a = args.run;
    let opts = a.options()?;
    let out = match &a.output {
        Some(path) => Some(OutputFile::check("--output", path, &[])?),
        None => None,
    };
    let driver: Arc<dyn Driver> = Arc::new(MysqlDriver::new(a.connect_options()));
    let mut probe = LocalServerProbe::new(&a);
    let json = a.format == RunFormat::Json;
    let profiling = a.profiling(&probe)?;
    let mut progress = StepLines { to_stderr: json, quiet: a.quiet };
    progress.line(&banner(&opts));
    crate::interrupt::install();
    let (stop, label) = (crate::interrupt::flag(), a.label.as_deref());
    let (r, profiles) = match profiling {
        Some(pid) => {
            let mut obs = ProfiledSteps::new(&mut progress, pid, a.profile_hz, a.profile_waits);
            let r = ibench::run(&opts, driver, &mut probe, &mut obs, stop, label)?;
            (r, obs.done)
        }
        None => (ibench::run(&opts, driver, &mut probe, &mut progress, stop, label)?, Vec::new()),
    };
    if let Some(out) = &out {
        out.write(to_json(&r)?.as_bytes())?;
    }
    if json && profiles.is_empty() {
        write_out(&format!("{}\n", to_json(&r)?))?;
    } else if json {
        let encode = |e: serde_json::Error| Error::Other(format!("cannot encode the result as JSON: {e}"));
        let mut doc = serde_json::to_value(&r).map_err(encode)?;
        let steps: Vec<serde_json::Value> = profiles
            .iter()
            .map(|(step, p)| {
                let mut v = serde_json::json!({ "step": step.name() });
                match p {
                    Ok(p) => summary::json(p, &mut v),
                    Err(e) => v["error"] = serde_json::json!(e.to_string()),
                }
                v
            })
            .collect();
        doc["server_profiles"] = serde_json::Value::Array(steps);
        write_out(&format!("{}\n", serde_json::to_string_pretty(&doc).map_err(encode)?))?;
    } else {
        let color = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
        write_out(&format!("\n{}", ibench::report::run_text(&r, color)))?;
        for (step, p) in &profiles {
            match p {
                Ok(p) => write_out(&format!(
                    "\nStep {} (per operation of the step: an inserted row, or a query):\n{}",
                    step.name(),
                    summary::text(p)
                ))?,
                // A step shorter than a few samples (often l.x) has none; the others go on.
                Err(e) => write_out(&format!("\nStep {}: no profile ({e})\n", step.name()))?,
            }
        }
    }
    // The results are out; profiling that was asked for and gave nothing fails the command.
    if !profiles.is_empty()
        && profiles.iter().all(|(_, p)| p.is_err())
        && let Some((step, Err(e))) = profiles.into_iter().next()
    {
        return Err(Error::Other(format!("no step was profiled; step {}: {e}", step.name())));
    }
    Ok(if r.interrupted {
        130
    } else if r.failed() {
        1
    } else {
        0
    })
}

fn to_json(r: &IbenchResult) -> Result<String> {
    serde_json::to_string_pretty(r).map_err(|e| Error::Other(format!("cannot encode the result as JSON: {e}")))
}

/// The page of `versus ibench compare --format html`: the comparison `t` of `results` read from `files`.
fn html_page(t: &ibench::compare::Comparison, files: &[PathBuf], results: &[IbenchResult]) -> Result<String> {
    use crate::workload::ibench::page::{Page, Source, page, timelines};
    let mut sources = Vec::new();
    for ((label, path), r) in t.sides.iter().zip(files).zip(results) {
        sources.push(Source {
            label: label.clone(),
            server_version: r.server_version.clone(),
            file: path.display().to_string(),
            options: serde_json::to_string_pretty(&r.options).map_err(|e| Error::Other(e.to_string()))?,
        });
    }
    Ok(page(&Page {
        comparison: t,
        sources,
        timelines: timelines(&results.iter().collect::<Vec<_>>()),
        versus_version: env!("CARGO_PKG_VERSION").to_string(),
    }))
}

fn compare(c: CompareArgs) -> Result<i32> {
    let mut sides = Vec::new();
    let mut results = Vec::new();
    for path in &c.files {
        let text = crate::input::read_text(path)?;
        let r: IbenchResult = serde_json::from_str(&text).map_err(|e| {
            Error::file(
                path,
                format!("not a `versus ibench --format json` result: {}", e.to_string().replace('\n', " ")),
            )
        })?;
        let mut side = ibench::compare::SideInput::of(&r);
        let base = side.label.clone();
        let n = sides
            .iter()
            .filter(|s: &&ibench::compare::SideInput| s.label == base || s.label.starts_with(&format!("{base}#")))
            .count();
        if n > 0 {
            side.label = format!("{base}#{}", n + 1);
        }
        sides.push(side);
        results.push(r);
    }
    let t = ibench::compare::build(&sides);
    let text = match c.format {
        CompareFormat::Text => ibench::report::comparison_text(&t, c.color),
        CompareFormat::Markdown => ibench::report::comparison_markdown(&t),
        CompareFormat::Html => html_page(&t, &c.files, &results)?,
        CompareFormat::Json => serde_json::to_string_pretty(&t).map_err(|e| Error::Other(e.to_string()))? + "\n",
    };
    write_out(&text)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_gives_the_estimate_of_the_multi_hour_defaults() {
        let b = banner(&Options::default());
        assert!(b.starts_with("Insert Benchmark: 11 step(s) (l.i0, l.x, l.i1, l.i2, cleanup, qr100"), "{b}");
        assert!(
            b.contains(&format!("about {} ", crate::experiment::progress::human(Options::default().estimate()))),
            "{b}"
        );
        assert!(b.contains(" h "), "hours: {b}");
    }
}
