//! The user's own SQL as a workload, pgbench-style: `versus script FILE.sql [FILE2.sql@W …] [options]
//! prepare|run` against any server, and `[[workloads]] script = "app.sql"` in experiments.
//!
//! - [`parse`]: the file — an optional `-- @setup`, transactions (`-- @transaction`, `-- @weight`),
//!   statements with `:variables`, `\set` and `\sleep`; errors name the file, line and column.
//! - [`expr`], [`random`]: `\set` expressions and pgbench's distributions.
//! - [`run`]: the clients, on sysbench's loop (limits, `--rate`, warm-up, intervals, `--mysql-ignore-errors`),
//!   with per-statement latency histograms and per-transaction counts.
//! - [`plan`]: `EXPLAIN FORMAT=JSON` of each statement and the shape that says whether a plan changed.
//! - [`experiment`]: the [`crate::workload::Workload`] of experiments; [`stored`]: per-statement
//!   comparisons from stored runs for `versus compare` and `versus report`.

pub mod eval;
pub mod experiment;
pub mod expr;
pub mod hash;
pub mod parse;
pub mod plan;
pub mod random;
pub mod run;
pub mod section;
pub mod stored;
pub mod value;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use experiment::{KIND, add_figures};
pub use parse::{Script, ScriptError};

use crate::error::{Error, Result};
use crate::workload::sysbench::options::{self, Options};
use crate::workload::sysbench::runner::{self, Source};
use crate::workload::sysbench::{Interval, IntervalObserver, profiled, report, spec};

/// The sysbench options that do not apply to a script.
const NOT_FOR_SCRIPTS: &[&str] = &[
    "rand_type",
    "rand_spec_iter",
    "rand_spec_pct",
    "rand_spec_res",
    "rand_pareto_h",
    "rand_zipfian_exp",
    "client_threads",
    "prepare_method",
    "format",
];

/// A parsed `versus script` command line.
#[derive(Debug)]
pub struct Invocation {
    /// The files with their weights.
    pub files: Vec<(PathBuf, u32)>,
    /// `--define NAME=VALUE`.
    pub defines: Vec<(String, expr::Value)>,
    /// The command (`prepare`, `run`), if given.
    pub command: Option<String>,
    /// Typed options.
    pub options: Options,
    /// `--help`.
    pub help: bool,
}

/// Parses everything after `versus script`.
pub fn parse_args(args: &[String]) -> Result<Invocation> {
    let mut files = Vec::new();
    let mut defines = Vec::new();
    let mut command = None;
    let mut rest = Vec::new();
    let mut help = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let define = if a == "-D" || a == "--define" {
            i += 1;
            Some(args.get(i).cloned().ok_or_else(|| Error::option(a.clone(), "needs NAME=VALUE"))?)
        } else {
            a.strip_prefix("--define=").or_else(|| a.strip_prefix("-D")).map(str::to_string)
        };
        if let Some(d) = define {
            let (n, v) =
                d.split_once('=').ok_or_else(|| Error::option("--define", format!("'{d}' is not NAME=VALUE")))?;
            let value = define_value(n, v)?;
            defines.push((n.to_string(), value));
        } else if a == "--help" || a == "-h" {
            help = true;
        } else if let Some(o) = a.strip_prefix("--") {
            let name = o.split('=').next().unwrap_or(o).replace('-', "_");
            let name = if name == "ignore_errors" { "mysql_ignore_errors".to_string() } else { name };
            if NOT_FOR_SCRIPTS.contains(&name.as_str())
                || spec::find(&name).is_some_and(|s| s.group == spec::Group::Script)
            {
                return Err(Error::option(format!("--{}", name.replace('_', "-")), "does not apply to a script"));
            }
            let value = o.split_once('=').map(|(_, v)| format!("={v}")).unwrap_or_default();
            rest.push(format!("--{name}{value}"));
        } else if matches!(a.as_str(), "prepare" | "run") && i == args.len() - 1 {
            command = Some(a.clone());
        } else {
            files.push(parse::file_and_weight(a).map_err(Error::Other)?);
        }
        i += 1;
    }
    let inv = options::parse(&rest)?;
    Ok(Invocation { files, defines, command, options: inv.options, help })
}

/// The value of `--define NAME=VALUE`: digits alone are a 64-bit integer (refused beyond its range, never
/// rounded through a double), anything else a finite double.
fn define_value(name: &str, v: &str) -> Result<expr::Value> {
    let t = v.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
        return t.parse::<i64>().map(expr::Value::Int).map_err(|_| {
            Error::option("--define", format!("{name}: {t} is out of the integer range ({} to {})", i64::MIN, i64::MAX))
        });
    }
    match t.parse::<f64>() {
        Ok(d) if d.is_finite() => Ok(expr::Value::Double(d)),
        _ => Err(Error::option("--define", format!("{name}: '{v}' is not a number"))),
    }
}

/// Reads the files of `inv` into one script (transactions of every file, statements numbered in order).
pub fn load(inv: &Invocation) -> Result<Script> {
    let mut all: Option<Script> = None;
    for (path, weight) in &inv.files {
        let (s, _) = parse::load(path, *weight, &inv.defines).map_err(|e| Error::Other(e.to_string()))?;
        all = Some(match all {
            None => s,
            Some(a) => merge(a, s),
        });
    }
    all.ok_or_else(|| Error::Other("versus script: name a SQL file, e.g. versus script app.sql run".into()))
}

/// `b` appended to `a`: its variables mapped onto `a`'s slots, its statements renumbered after `a`'s.
fn merge(mut a: Script, b: Script) -> Script {
    let map: Vec<usize> = b
        .vars
        .iter()
        .map(|v| match a.vars.iter().position(|x| x == v) {
            Some(i) => i,
            None => {
                a.vars.push(v.clone());
                a.vars.len() - 1
            }
        })
        .collect();
    let (n_setup, n_stmts, n_tx, n_files) = (a.setup.len(), a.statements.len(), a.transactions.len(), a.files.len());
    a.files.extend(b.files.iter().cloned());
    let moved = |l: parse::Loc| parse::Loc { file: l.file + n_files, ..l };
    let remap_steps = |steps: Vec<parse::ScriptStep>, offset: usize| -> Vec<parse::ScriptStep> {
        steps
            .into_iter()
            .map(|s| match s {
                parse::ScriptStep::Set { slot, expr, loc } => {
                    parse::ScriptStep::Set { slot: map[slot], expr: remap(expr, &map), loc: moved(loc) }
                }
                parse::ScriptStep::Sleep { expr, unit_us, loc } => {
                    parse::ScriptStep::Sleep { expr: remap(expr, &map), unit_us, loc: moved(loc) }
                }
                parse::ScriptStep::Sql(i) => parse::ScriptStep::Sql(i + offset),
                // Branch targets are positions in the same list, which moves as a whole.
                parse::ScriptStep::Branch { cond, otherwise, loc } => {
                    parse::ScriptStep::Branch { cond: remap(cond, &map), otherwise, loc: moved(loc) }
                }
                j @ parse::ScriptStep::Jump { .. } => j,
            })
            .collect()
    };
    for mut st in b.setup {
        st.params = st.params.iter().map(|p| map[*p]).collect();
        st.loc = moved(st.loc);
        a.setup.push(st);
    }
    a.setup_steps.extend(remap_steps(b.setup_steps, n_setup));
    for mut st in b.statements {
        st.params = st.params.iter().map(|p| map[*p]).collect();
        st.number += n_stmts;
        st.loc = moved(st.loc);
        st.transaction = st.transaction.map(|t| t + n_tx);
        a.statements.push(st);
    }
    for mut t in b.transactions {
        t.steps = remap_steps(t.steps, n_stmts);
        t.loc = moved(t.loc);
        a.transactions.push(t);
    }
    for (slot, v) in b.defines {
        if !a.defines.iter().any(|(s, _)| *s == map[slot]) {
            a.defines.push((map[slot], v));
        }
    }
    a
}

fn remap(e: expr::Expr, map: &[usize]) -> expr::Expr {
    use expr::Expr;
    match e {
        Expr::Var(s) => Expr::Var(map[s]),
        Expr::Neg(x) => Expr::Neg(Box::new(remap(*x, map))),
        Expr::Not(x) => Expr::Not(Box::new(remap(*x, map))),
        Expr::BitNot(x) => Expr::BitNot(Box::new(remap(*x, map))),
        Expr::Bin(op, x, y) => Expr::Bin(op, Box::new(remap(*x, map)), Box::new(remap(*y, map))),
        Expr::Call(f, args) => Expr::Call(f, args.into_iter().map(|x| remap(x, map)).collect()),
        c => c,
    }
}

/// The command line of a run, for people (passwords left out).
pub fn command_line(file: &Path, o: &Options) -> String {
    let mut s = format!("versus script {} --threads={} --time={}", file.display(), o.threads, o.time);
    if o.warmup_time > 0 {
        let _ = write!(s, " --warmup-time={}", o.warmup_time);
    }
    if o.rate > 0 {
        let _ = write!(s, " --rate={}", o.rate);
    }
    if o.rand.seed != 0 {
        let _ = write!(s, " --rand-seed={}", o.rand.seed);
    }
    if let options::IgnoreErrors::Codes(c) = &o.ignore_errors
        && !c.is_empty()
    {
        let codes: Vec<String> = c.iter().map(|x| x.to_string()).collect();
        let _ = write!(s, " --ignore-errors={}", codes.join(","));
    } else if o.ignore_errors == options::IgnoreErrors::All {
        s.push_str(" --ignore-errors=all");
    }
    let _ = write!(
        s,
        " --mysql-host={} --mysql-port={} --mysql-user={} --mysql-db={} run",
        o.connect.hosts.join(","),
        o.connect.ports.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(","),
        o.connect.user,
        o.connect.db
    );
    s
}

/// General help of `versus script`.
pub fn help() -> String {
    "Usage:\n  versus script FILE.sql [FILE2.sql@WEIGHT ...] [options] prepare|run\n\n\
     prepare runs the files' -- @setup sections; run runs their transactions.\n\n\
     Options: sysbench's general, random-seed and database options (see 'versus sysbench --help'):\n\
     \x20 --threads=N --time=N --events=N --warmup-time=N --rate=N --report-interval=N --percentile=N\n\
     \x20 --rand-seed=N --mysql-host=... --mysql-port=... --mysql-user=... --mysql-password=... --mysql-db=...\n\
     \x20 --db-ps-mode=auto|disable (prepared statements, or text)  --ignore-errors=CODES|all\n\
     \x20 --define NAME=VALUE (-D NAME=VALUE): a variable every transaction may use\n\n\
     The file format is described in docs/workloads.md.\n"
        .to_string()
}

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

struct Text {
    pct: u32,
}

impl IntervalObserver for Text {
    fn started(&mut self) {
        out("Threads started!\n\n");
    }
    fn interval(&mut self, i: &Interval) {
        out(&report::interval_line(i, self.pct));
    }
}

/// Entry point of `versus script ARGS...`; returns the process exit code.
pub fn main(args: Vec<String>) -> Result<i32> {
    let inv = parse_args(&args)?;
    if inv.help || inv.files.is_empty() {
        out(&help());
        return Ok(if inv.help { 0 } else { 1 });
    }
    let script = Arc::new(load(&inv)?);
    let Some(command) = inv.command.as_deref() else {
        return Err(Error::Other("versus script: a command is required: prepare or run".into()));
    };
    let mut o = inv.options;
    o.connect.stmt_cache_size = script.statements.len() + 8;
    match command {
        "prepare" => {
            out(&format!("{}\n", report::version_line()));
            let driver = crate::workload::sysbench::driver_for(&o);
            let mut conn = driver.connect().map_err(|e| crate::workload::sysbench::prepare::sql_error("connect", e))?;
            if script.setup.is_empty() {
                out("The script has no -- @setup section: nothing to prepare.\n");
                return Ok(0);
            }
            run::setup(&script, conn.as_mut(), if o.rand.seed == 0 { 1 } else { o.rand.seed }, &|l| {
                out(&format!("{l}\n"))
            })?;
            Ok(0)
        }
        _ => run_command(&script, &o),
    }
}

fn run_command(script: &Arc<Script>, o: &Options) -> Result<i32> {
    if o.clients > 1 {
        return Err(Error::option("--clients", "versus script runs from one client process; leave --clients out"));
    }
    out(&report::preamble(o));
    out("Initializing worker threads...\n\n");
    crate::interrupt::install();
    let stop = crate::interrupt::flag();
    let events = run::events(script.clone(), o.threads as usize, stop.clone(), o.rand.seed);
    let driver = crate::workload::sysbench::driver_for(o);
    let mut profiler = profiled::prepare(o, driver.as_ref())?;
    let mut obs = Text { pct: o.percentile };
    let source = Source::Custom(events.factory());
    let watch = crate::sampler::client_load::Watch::start();
    let result = match profiler.as_mut() {
        Some(p) => runner::run_source(source, o, driver, stop, &mut p.observing(&mut obs))?,
        None => runner::run_source(source, o, driver, stop, &mut obs)?,
    };
    let client = watch.finish(o.os_threads());
    out(&report::final_report(&result, o));
    out(&statements_report(script, &events.figures(), result.time_interval.as_secs_f64()));
    if let Some(p) = profiler {
        out(&format!("{}\n", crate::profile::summary::text(&p.finish(&result)?)));
    }
    crate::workload::sysbench::warn_client_bound(client);
    Ok(if result.interrupted { crate::workload::sysbench::EXIT_INTERRUPTED } else { 0 })
}

/// pgbench's `-r` table: per statement its count, latencies and failures; then the transactions.
pub fn statements_report(script: &Script, f: &run::Figures, seconds: f64) -> String {
    let mut s = String::from("Statements (latency in ms):\n");
    let _ = writeln!(
        s,
        "    {:>4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}  {:<16} statement",
        "#", "count", "mean", "p95", "p99", "max", "errors", "location"
    );
    for (i, st) in script.statements.iter().enumerate() {
        let h = &f.latency[i];
        let ms = |v: u64| v as f64 / 1000.0;
        let (mean, p95, p99, max) = if h.is_empty() {
            ("-".to_string(), "-".to_string(), "-".to_string(), "-".to_string())
        } else {
            (
                format!("{:.3}", h.mean() / 1000.0),
                format!("{:.3}", ms(h.value_at_quantile(0.95))),
                format!("{:.3}", ms(h.value_at_quantile(0.99))),
                format!("{:.3}", ms(h.max())),
            )
        };
        let loc = script.line_of(st.loc);
        let _ = writeln!(
            s,
            "    {:>4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}  {:<16} {}",
            st.number,
            h.len(),
            mean,
            p95,
            p99,
            max,
            f.errors[i],
            loc,
            stored::short(&st.text, 60)
        );
    }
    let total: u64 = f.transactions.iter().sum();
    s.push_str("\nTransactions:\n");
    for (i, t) in script.transactions.iter().enumerate() {
        let n = f.transactions[i];
        let share = if total > 0 { 100.0 * n as f64 / total as f64 } else { 0.0 };
        let rate = if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        let _ = writeln!(s, "    {:<20} weight {:>6}  {:>10} ({share:5.1} %, {rate:.2} per sec.)", t.name, t.weight, n);
    }
    s
}
