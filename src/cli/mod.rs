//! The command line: clap definitions and dispatch. Each command's work lives in the library modules;
//! this layer only turns flags into calls and results into text.

mod advise;
mod compare;
mod experiment;
mod explain;
mod fleet;
mod ibench;
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
    Quickstart(server::QuickstartArgs),
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
}

/// Parses `args` (including the program name) and runs the command; returns the process exit code.
pub fn run(args: Vec<String>) -> Result<i32> {
    // sysbench's own command line goes to its parser untouched, so every sysbench spelling works.
    if args.get(1).map(String::as_str) == Some("sysbench") {
        return crate::workload::sysbench::main(args[2..].to_vec());
    }
    if args.get(1).map(String::as_str) == Some("script") {
        return crate::workload::script::main(args[2..].to_vec());
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return Ok(code);
        }
    };
    let home = Home::resolve(cli.home.as_deref());
    match cli.command {
        Command::Server(cmd) => server::run(&home, cmd),
        Command::Quickstart(args) => server::quickstart(&home, args),
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
        Command::Store(cmd) => store::run(cmd),
        Command::Fleet(cmd) => fleet::run(&home, cmd),
    }
}

/// Environment variable naming the results store.
pub const DB_ENV: &str = "VERSUS_DB";

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

    /// Opens the store.
    pub fn open(&self, home: &Home) -> Result<Store> {
        Store::connect(&self.location(home))
    }
}
