//! The command line: clap definitions and dispatch. Each command's work lives in the library modules;
//! this layer only turns flags into calls and results into text.

mod experiment;
mod server;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::Result;
use crate::server::Home;

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
    /// Start a sandbox of the distribution's MariaDB, show what it is and stop it (the quick start).
    Quickstart(server::QuickstartArgs),
    /// sysbench-compatible OLTP workloads: `versus sysbench [options] TEST COMMAND` with sysbench 1.0's
    /// options and report (see `versus sysbench --help`); 0.4/0.5 command lines are translated.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Sysbench {
        /// sysbench's options, test and command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

/// Parses `args` (including the program name) and runs the command; returns the process exit code.
pub fn run(args: Vec<String>) -> Result<i32> {
    // sysbench's own command line goes to its parser untouched, so every sysbench spelling works.
    if args.get(1).map(String::as_str) == Some("sysbench") {
        return crate::workload::sysbench::main(args[2..].to_vec());
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
    }
}
