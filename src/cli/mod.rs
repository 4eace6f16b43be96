//! The command line: clap definitions and dispatch. Each command's work lives in the library modules;
//! this layer only turns flags into calls and results into text.

mod compare;
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
    /// Start a sandbox of the distribution's MariaDB, show what it is and stop it (the quick start).
    Quickstart(server::QuickstartArgs),
    /// Compare stored runs: ratio to a baseline with its confidence interval and a verdict.
    Compare(compare::CompareArgs),
    /// Export a comparison as markdown, JSON, CSV or a self-contained HTML page.
    Report(compare::ReportArgs),
}

/// Parses `args` (including the program name) and runs the command; returns the process exit code.
pub fn run(args: Vec<String>) -> Result<i32> {
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
        Command::Compare(args) => compare::compare(&home, args),
        Command::Report(args) => compare::report(&home, args),
    }
}
