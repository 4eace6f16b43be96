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
            // Only read: a write-protected file (or one on a read-only disk) can be copied as it is.
            let source = Store::connect_read(&from).map_err(|e| for_flag(e, "--from"))?;
            let mut dest = Store::connect(&to).map_err(|e| for_flag(e, "--to"))?;
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

/// `e` with the store messages' general advice about `--db` given for `flag`, the option at fault here.
fn for_flag(e: Error, flag: &str) -> Error {
    match e {
        Error::File { path, message } => Error::file(path, message.replace("--db", flag)),
        Error::Option { option, message } if option == "--db" => Error::option(flag, message),
        e => e,
    }
}

/// True when both are SQLite paths naming one existing file (the same device and inode: another
/// spelling, a symbolic or a hard link).
fn same_file(a: &Location, b: &Location) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a, b) {
        (Location::Sqlite(a), Location::Sqlite(b)) => match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
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
    /// The store to import into [default: $VERSUS_DB when it names the store recorded in FILE (it may
    /// carry the password that FILE leaves out), else the store recorded in FILE].
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
}

/// Where `versus import` stores a run recorded for `recorded` (a recovery file's `store`: a path, or a
/// URL whose password is redacted): `--db`, else `VERSUS_DB` when it names that same store (with its
/// password), else `recorded` itself.
fn import_location(db: Option<&str>, env: Option<&str>, recorded: &str) -> Location {
    let recorded = Location::parse(recorded);
    match (db.filter(|v| !v.is_empty()), env.filter(|v| !v.is_empty()).map(Location::parse)) {
        (Some(db), _) => Location::parse(db),
        (None, Some(env)) if env.to_string() == recorded.to_string() => env,
        _ => recorded,
    }
}

/// Stores a run that a failed store write left in a recovery file.
pub(super) fn import(a: ImportArgs) -> Result<i32> {
    let r = crate::store::recovery::load(&a.file)?;
    let env = std::env::var(super::DB_ENV).ok();
    let location = import_location(a.db.as_deref(), env.as_deref(), &r.store);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_goes_to_db_else_to_versus_db_when_it_is_the_recorded_store_else_to_the_recorded_one() {
        let recorded = "postgres://versus:<redacted>@db.example:5432/team";
        let env = "postgres://versus:s3cret@db.example:5432/team";
        let other = "postgres://versus:s3cret@db.example:5432/other";
        let url = |l: Location| match l {
            Location::Postgres(u) => u,
            Location::Sqlite(p) => p.display().to_string(),
        };
        // VERSUS_DB of the same store carries the password the file could not keep.
        assert_eq!(url(import_location(None, Some(env), recorded)), env);
        assert_eq!(url(import_location(Some(""), Some(env), recorded)), env);
        // --db always counts; a VERSUS_DB that names another store does not.
        assert_eq!(url(import_location(Some(other), Some(env), recorded)), other);
        assert_eq!(url(import_location(None, Some(other), recorded)), recorded);
        assert_eq!(url(import_location(None, Some(""), recorded)), recorded);
        assert_eq!(url(import_location(None, Some("results.db"), "/var/x/results.db")), "/var/x/results.db");
        assert_eq!(url(import_location(None, None, "/var/x/results.db")), "/var/x/results.db");
    }
}
