//! `versus store …`: work on results stores as a whole.

use clap::Subcommand;

use crate::error::{Error, Result};
use crate::store::{Location, Store};

#[derive(Debug, Subcommand)]
pub(super) enum StoreCommand {
    /// Copy every experiment of one store into another: a laptop's SQLite file into the team's
    /// PostgreSQL, the shared database into a file, or per-task files into one. Copying again adds
    /// nothing; runs finished in the source complete the same unfinished runs in the destination.
    Copy {
        /// The store to read: a SQLite file or postgres://USER@HOST[:PORT]/DB.
        #[arg(long, value_name = "PATH|URL")]
        from: String,
        /// The store to write (created and migrated when new).
        #[arg(long, value_name = "PATH|URL")]
        to: String,
    },
}

/// Runs a `versus store` command.
pub(super) fn run(cmd: StoreCommand) -> Result<i32> {
    match cmd {
        StoreCommand::Copy { from, to } => {
            let (from, to) = (Location::parse(&from), Location::parse(&to));
            if !from.exists() {
                return Err(Error::option("--from", format!("{from}: no results store here; give an existing file")));
            }
            if from == to || same_file(&from, &to) {
                return Err(Error::option("--to", format!("{to} is the store being copied; give another one")));
            }
            let source = Store::connect(&from)?;
            let mut dest = Store::connect(&to)?;
            let r = source.copy_into(&mut dest)?;
            println!(
                "copied {from} into {to}: {} experiments added, {} already there; {} runs copied, {} unchanged",
                r.experiments_added, r.experiments_present, r.runs_copied, r.runs_unchanged
            );
            Ok(0)
        }
    }
}

/// True when both are SQLite paths naming one existing file.
fn same_file(a: &Location, b: &Location) -> bool {
    match (a, b) {
        (Location::Sqlite(a), Location::Sqlite(b)) => match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
        _ => false,
    }
}
