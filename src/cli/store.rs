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
                "copied {from} into {to}: {} experiments added, {} already there; {} runs copied, {} unchanged; \
                 {} calibrations copied, {} already there",
                r.experiments_added,
                r.experiments_present,
                r.runs_copied,
                r.runs_unchanged,
                r.calibrations_copied,
                r.calibrations_present
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

/// `versus import FILE`.
#[derive(Debug, clap::Args)]
pub(super) struct ImportArgs {
    /// The recovery file that versus wrote when the store could not take a measured run.
    file: std::path::PathBuf,
    /// The store to import into [default: the store named in FILE].
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
}

/// Stores a run that a failed store write left in a recovery file.
pub(super) fn import(a: ImportArgs) -> Result<i32> {
    let r = crate::store::recovery::load(&a.file)?;
    let location = Location::parse(a.db.as_deref().unwrap_or(&r.store));
    if !location.exists() {
        return Err(Error::option(
            "--db",
            format!("{location}: no results store here; pass --db with the store of run {}", r.run_id),
        ));
    }
    let mut store = Store::connect(&location)?;
    let (r, renamed) = store.import_file(&a.file)?;
    let kept = match renamed {
        Some(p) => format!("the file is kept as {}", p.display()),
        None => format!("{} can be deleted", a.file.display()),
    };
    println!("run {} of experiment {} stored in {}; {kept}", r.run_id, r.experiment_id, store.path().display());
    Ok(0)
}
