//! The command line: clap definitions and dispatch. Each command's work lives in the library modules;
//! this layer only turns flags into calls and results into text.

mod advise;
mod calibrate;
mod compare;
mod experiment;
mod explain;
mod fleet;
mod ibench;
pub mod output;
pub mod output_file;
mod path_hint;
mod profile;
mod quickstart;
mod server;
mod store;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use clap::Args;

use crate::error::Result;
use crate::server::Home;
use crate::store::{Location, Store};

/// Is this MySQL/MariaDB version or configuration faster or slower than that one, by how much, how sure
/// are we, and why?
#[derive(Debug, Parser)]
#[command(name = "versus", version, about, propagate_version = true)]
pub struct Cli {
    /// Where versus keeps builds, sandboxes and snapshots [default: $VERSUS_HOME, else ~/.local/share/versus].
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Obtain, start and stop MySQL-family servers in sandboxes.
    #[command(subcommand)]
    Server(server::ServerCommand),
    /// Run an experiment file: builds × configs × workloads × threads, repeated, every result stored.
    Run(experiment::RunArgs),
    /// List stored experiments, or the runs of one.
    Runs(experiment::RunsArgs),
    /// Print one stored run as a sysbench report.
    Show(experiment::ShowArgs),
    /// The quick start: registers the distribution's MariaDB, runs the built-in experiment (durable
    /// against relaxed commits on oltp_write_only at 1 and 4 threads, 5 interleaved repetitions each:
    /// 20 runs, a few minutes) in sandboxes it starts and stops, prints the comparison and writes an
    /// HTML report.
    Quickstart(quickstart::QuickstartArgs),
    /// sysbench-compatible OLTP workloads: `versus sysbench [options] TEST COMMAND` with sysbench 1.0's
    /// options and report (see `versus sysbench --help`); 0.4/0.5 command lines are translated.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Sysbench {
        /// sysbench's options, test and command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Your own SQL as a workload, pgbench-style: `versus script FILE.sql [FILE2.sql@WEIGHT …] [options]
    /// prepare|run`, with weighted transactions, `\set` variables and per-statement latencies.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Script {
        /// The files, sysbench-style options and the command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// The Insert Benchmark against a running server: load, index, write and query steps with
    /// rate-limited background writes and an SLA; `versus ibench compare` tabulates saved results.
    Ibench(ibench::IbenchArgs),
    /// Compare stored runs: ratio to a baseline with its confidence interval and a verdict.
    Compare(compare::CompareArgs),
    /// Export a comparison as markdown, JSON, CSV or a self-contained HTML page.
    Report(compare::ReportArgs),
    /// Compare the server variables of two targets: changed defaults, settings, new and removed variables.
    DiffVars(explain::DiffVarsArgs),
    /// Find which of A's variable values, set on B, account for B's regression (config bisection).
    Explain(explain::ExplainArgs),
    /// This host's noise for a workload: an A/A experiment (the target measured twice, shuffled) whose
    /// noise band compare, run and explain then use for this host class and workload.
    Calibrate(calibrate::CalibrateArgs),
    /// Server settings from written rules, each proven by benchmark before it is recommended.
    Advise(advise::AdviseArgs),
    /// Relative-to-first values and change points over an ordered list of builds or configs.
    Series(explain::SeriesArgs),
    /// Run an experiment on a fleet: a Slurm job array or a Kubernetes Indexed Job, one task per block.
    #[command(subcommand)]
    Fleet(fleet::FleetCommand),
    /// Work on results stores as a whole: copy experiments between SQLite files and PostgreSQL.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Store a measured run that the results store could not take (a full disk): versus saved it in a
    /// recovery file and named it; this puts it where it belongs.
    Import(store::ImportArgs),
}

/// Parses `args` (including the program name) and runs the command; returns the process exit code.
pub fn run(args: Vec<String>) -> Result<i32> {
    // sysbench's own command line goes to its parser untouched, so every sysbench spelling works.
    if args.get(1).map(String::as_str) == Some("sysbench") {
        let rest = crate::workload::sysbench::split::with_password_from_env(args[2..].to_vec());
        if crate::workload::lua::wants(&rest) {
            return crate::workload::lua::main(rest);
        }
        return crate::workload::sysbench::main(rest);
    }
    if args.get(1).map(String::as_str) == Some("script") {
        return crate::workload::script::main(args[2..].to_vec());
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let home = Home::resolve(cli.home.as_deref());
    let from = if cli.home.is_some() { "--home" } else { crate::server::home::HOME_ENV };
    home.check(from)?;
    match cli.command {
        Command::Server(cmd) => server::run(&home, cmd),
        Command::Quickstart(args) => quickstart::quickstart(&home, args),
        Command::Run(args) => experiment::run(&home, args),
        Command::Runs(args) => experiment::runs(&home, args),
        Command::Show(args) => experiment::show(&home, args),
        Command::Sysbench { args } => crate::workload::sysbench::main(args),
        Command::Script { args } => crate::workload::script::main(args),
        Command::Ibench(args) => ibench::run(args),
        Command::Compare(args) => compare::compare(&home, args),
        Command::Report(args) => compare::report(&home, args),
        Command::DiffVars(args) => explain::diff_vars(&home, args),
        Command::Explain(args) => explain::explain_cmd(&home, args),
        Command::Series(args) => explain::series_cmd(&home, args),
        Command::Advise(args) => advise::advise_cmd(&home, args),
        Command::Calibrate(args) => calibrate::calibrate_cmd(&home, args),
        Command::Store(cmd) => store::run(cmd),
        Command::Import(args) => store::import(args),
        Command::Fleet(cmd) => fleet::run(&home, cmd),
    }
}

/// What clap says about a command line: help and version as clap prints them (exit 0); a wrong
/// command line as every other error, one `versus: error:` line and exit 1 (see `main.rs`).
fn usage_error(e: clap::Error) -> Result<i32> {
    use clap::error::ErrorKind;
    match e.kind() {
        // A closed stdout (`versus run --help | head -1`) is no error.
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return Ok(0);
        }
        // `versus` or `versus server` alone: the help is the useful answer, and it is not a success.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return Ok(1);
        }
        _ => {}
    }
    let text = e.render().to_string();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("Usage:"));
    let first = lines.next().unwrap_or("invalid command line").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // What follows the first line: the arguments it names (indented) and a tip (the fix); kept.
    let rest: Vec<&str> = lines
        .map(str::trim)
        .take_while(|l| !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("tip: ").unwrap_or(l))
        .collect();
    let tip = match (rest.is_empty(), first.ends_with(':')) {
        (true, _) => String::new(),
        (false, true) => format!(" {}", rest.join(", ")),
        (false, false) => format!("; {}", rest.join(", ")),
    };
    let usage = match e.get(clap::error::ContextKind::Usage) {
        Some(clap::error::ContextValue::StyledStr(u)) => {
            format!(" (usage: {})", u.to_string().trim().trim_start_matches("Usage: ").trim())
        }
        _ => String::new(),
    };
    Err(crate::Error::Other(format!("{first}{tip}{usage}")))
}

pub use crate::store::DB_ENV;

/// Where results are stored.
#[derive(Debug, Args, Clone)]
pub(crate) struct DbArg {
    /// The results store: a SQLite file, or a shared PostgreSQL database as postgres://USER@HOST[:PORT]/DB
    /// [default: $VERSUS_DB, else results.db in the versus home].
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

impl DbArg {
    /// The store this invocation uses.
    pub fn location(&self, home: &Home) -> Location {
        self.db
            .clone()
            .filter(|v| !v.is_empty())
            .or_else(|| std::env::var(DB_ENV).ok().filter(|v| !v.is_empty()))
            .map(|v| Location::parse(&v))
            .unwrap_or_else(|| Location::Sqlite(home.root().join("results.db")))
    }

    /// Opens the store, after importing the runs that recovery files hold for it (each said on stderr).
    pub fn open(&self, home: &Home) -> Result<Store> {
        let mut store = Store::connect(&self.location(home))?;
        say(&store.import_pending());
        Ok(store)
    }

    /// The store's file, for the inputs an output file must not replace (none for PostgreSQL).
    pub fn inputs(&self, home: &Home) -> Vec<PathBuf> {
        match self.location(home) {
            Location::Sqlite(p) => vec![p],
            Location::Postgres(_) => Vec::new(),
        }
    }

    /// Opens the store to read it only (it may be write-protected); recovery files waiting for it are
    /// named on stderr with the command that imports them.
    pub fn open_read(&self, home: &Home) -> Result<Store> {
        open_read(&self.location(home))
    }
}

/// Opens the store at `location` to read it, naming on stderr the recovery files waiting for it.
pub(crate) fn open_read(location: &Location) -> Result<Store> {
    let store = Store::connect_read(location)?;
    say(&store.pending_notices());
    Ok(store)
}

/// Prints `lines` on stderr (a closed stderr is no error).
fn say(lines: &[String]) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for l in lines {
        let _ = writeln!(err, "{l}");
    }
}
