//! A measured run that the store refused: what the error says recovers it (a recovery file and
//! `--resume-id` for a whole experiment, running the block again for a fleet block).

use std::path::Path;

use crate::error::Error;
use crate::shell::quote;
use crate::store::{Location, RunResult, Status, Store};

/// What recovers from a measured run that the store refused.
pub(super) enum Recovery {
    /// A whole experiment: the run is kept in a recovery file, imported later, and `--resume-id` runs
    /// the rest.
    Resume,
    /// A fleet block: a block counts only when one attempt measures it whole, and the next attempt
    /// resets its runs (`Store::begin_block`), so a recovered run could never count; `rerun` (the
    /// how the block is measured again) ends the error.
    Block { rerun: String },
}

impl Recovery {
    /// The recovery of a run loop over `path`, of the block of `repetition` when a fleet task runs one.
    pub(super) fn new(repetition: Option<u32>, path: Option<&Path>, store: &Store) -> Recovery {
        match (repetition, path) {
            (Some(repetition), Some(path)) => {
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let (db, note) = store_arg(store.location(), std::env::var(crate::store::DB_ENV).ok().as_deref());
                let command = format!(
                    "versus run {} --block {} --db {db}",
                    quote(&path.display().to_string()),
                    repetition.saturating_sub(1),
                );
                Recovery::Block {
                    rerun: format!("`{command}`{note} measures it (as a scheduler's retry of the task does)"),
                }
            }
            (Some(_), None) => Recovery::Block { rerun: "a retry of the task measures it".into() },
            (None, _) => Recovery::Resume,
        }
    }
}

/// The one command that continues an interrupted experiment, `versus run --resume-id ID`: it works
/// whatever became of the file (the definition is read from the store). With `store`, the store the
/// user named with `--db`, it carries that `--db` too (a password shown as [`store_arg`] does).
pub fn resume_command(experiment_id: i64, store: Option<&Location>) -> String {
    match store {
        None => format!("versus run --resume-id {experiment_id}"),
        Some(l) => {
            let (db, note) = store_arg(l, std::env::var(crate::store::DB_ENV).ok().as_deref());
            format!("versus run --resume-id {experiment_id} --db {db}{note}")
        }
    }
}

/// The `--db` value of a command that an error gives for `location`: shown as it is, except a URL with
/// a password, which is never printed: `"$VERSUS_DB"` when that (`versus_db`) holds it, else the URL
/// with `<redacted>` in the password's place, which the user must fill in: the note (to follow the
/// command) then says so.
fn store_arg(location: &Location, versus_db: Option<&str>) -> (String, String) {
    let shown = location.to_string();
    match location {
        Location::Postgres(url) if *url != shown && versus_db == Some(url.as_str()) => {
            ("\"$VERSUS_DB\"".into(), String::new())
        }
        Location::Postgres(url) if *url != shown => {
            (quote(&shown), format!(" (with the store's password in place of {})", crate::store::REDACTED))
        }
        _ => (quote(&shown), String::new()),
    }
}

/// The error for a run that was measured but that the store refused. Outside a block the run goes to a
/// recovery file (and the error says how to import it), so that nothing measured is lost.
pub(super) fn unstored(
    store: &Store,
    experiment_id: i64,
    run_id: i64,
    result: &RunResult,
    e: Error,
    recovery: &Recovery,
) -> Error {
    let _ = store.set_experiment_status(experiment_id, Status::Interrupted);
    if let Recovery::Block { rerun } = recovery {
        return Error::Other(format!(
            "run {run_id} was measured but not stored ({e}); its block is left incomplete and counts only when \
             one attempt measures it whole: once the store can be written again, {rerun}"
        ));
    }
    let (db, note) = store_arg(store.location(), std::env::var(crate::store::DB_ENV).ok().as_deref());
    match store.save_recovery(experiment_id, run_id, result, &e) {
        Ok(path) => Error::Other(format!(
            "run {run_id} was measured but not stored ({e}); it is saved in {p}: once the store can be written \
             again, `versus import {p} --db {db}` stores it and `versus run --resume-id {experiment_id} --db {db}` \
             runs the rest{note}",
            p = quote(&path.display().to_string()),
        )),
        Err(save) => Error::Other(format!("run {run_id} was measured but not stored ({e}), and {save}")),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{Location, quote, resume_command};

    use super::super::outcome::RunOutcome;
    use super::super::plan::{Plan, PlannedRun};
    use super::super::progress::Progress;
    use super::super::run::{Executor, RunOptions, run_experiment};
    use super::super::spec::ExperimentFile;
    use crate::error::Result;
    use crate::store::{Interval, RunResult, StartRun, Store, Summary, recovery};

    const FILE: &str = r#"
name = "lost"
builds = ["a"]
threads = [1]
repetitions = 2
duration = 1
[[workloads]]
test = "oltp_point_select"
"#;

    /// Measures every run; the first one interrupts (when `interrupt`), or, when `lose_store`, the
    /// store's tables disappear while it measures, as a store that is lost does: the run cannot be
    /// stored, and nothing about its experiment can be read any more.
    struct Lossy {
        db: PathBuf,
        interrupt: bool,
        lose_store: bool,
    }

    impl Executor for Lossy {
        fn prepare(&mut self, _: &Plan, _: usize, _: &mut Progress) -> Result<()> {
            Ok(())
        }
        fn run(
            &mut self,
            _: &Plan,
            _: &PlannedRun,
            started: &mut dyn FnMut(StartRun) -> Result<()>,
            _: &mut Progress,
        ) -> RunOutcome {
            started(StartRun { server_version: "1".into(), command: serde_json::Value::Null }).unwrap();
            let intervals = vec![Interval { t_s: 1.0, tps: 10.0, ..Default::default() }];
            if std::mem::take(&mut self.interrupt) {
                return RunOutcome::Interrupted { intervals };
            }
            if std::mem::take(&mut self.lose_store) {
                let c = rusqlite::Connection::open(&self.db).unwrap();
                c.execute_batch("ALTER TABLE runs RENAME TO runs_lost; ALTER TABLE experiments RENAME TO lost;")
                    .unwrap();
            }
            RunOutcome::Done(Box::new(RunResult {
                summary: Summary { events: 10, tps: 10.0, ..Default::default() },
                intervals,
                ..Default::default()
            }))
        }
    }

    fn run(db: &Path, path: Option<&Path>, opts: &RunOptions, lossy: &mut Lossy) -> Result<i64> {
        let plan = Plan::new(&ExperimentFile::parse(FILE).unwrap(), Path::new("/")).unwrap();
        let mut store = Store::open(db).unwrap();
        run_experiment(FILE, path, &plan, &mut store, lossy, opts, &mut Progress::quiet()).map(|o| o.experiment_id)
    }

    fn recovery_files(dir: &Path) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".recovery.json"))
            .collect();
        found.sort();
        found
    }

    /// A store in a temporary directory holding an experiment whose first run was interrupted: the
    /// directory, the store's path, the experiment's id.
    fn interrupted() -> (tempfile::TempDir, PathBuf, i64) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let mut lossy = Lossy { db: db.clone(), interrupt: true, lose_store: false };
        let id = run(&db, None, &RunOptions::default(), &mut lossy).unwrap();
        (dir, db, id)
    }

    #[test]
    fn the_resume_command_is_one_form_and_never_shows_a_password() {
        assert_eq!(resume_command(7, None), "versus run --resume-id 7");
        let file = Location::Sqlite(PathBuf::from("/data/my results.db"));
        assert_eq!(
            resume_command(7, Some(&file)),
            format!("versus run --resume-id 7 --db {}", quote("/data/my results.db"))
        );
        let url = Location::Postgres("postgres://u:s3cret-h7@db.example/versus".into());
        let c = resume_command(7, Some(&url));
        assert!(c.starts_with("versus run --resume-id 7 --db ") && !c.contains("s3cret-h7"), "{c}");
    }

    #[test]
    fn a_resumed_run_the_lost_store_refuses_is_recovered_under_its_experiments_uid() {
        let (dir, db, id) = interrupted();
        let uid = Store::open(&db).unwrap().experiment_uid(id).unwrap();
        assert_eq!(uid.len(), 32, "{uid}");

        // `versus run --resume-id`: a new process, so a store handle that has not seen the experiment's uid.
        let resume = RunOptions { resume: true, experiment_id: Some(id), ..RunOptions::default() };
        let mut lossy = Lossy { db: db.clone(), interrupt: false, lose_store: true };
        let e = run(&db, None, &resume, &mut lossy).unwrap_err().to_string();
        let files = recovery_files(dir.path());
        assert_eq!(files.len(), 1, "{e}");
        let saved = recovery::load(&files[0]).unwrap();
        assert_eq!((saved.experiment_id, saved.experiment_uid.as_str()), (id, uid.as_str()), "{e}");
        // Both commands name the store: without --db they would use the home's default one.
        let db = db.display();
        assert!(e.contains(&format!("`versus import {} --db {db}`", files[0].display())), "{e}");
        assert!(e.contains(&format!("`versus run --resume-id {id} --db {db}` runs the rest")), "{e}");
    }

    #[test]
    fn the_store_in_a_command_never_shows_a_password() {
        use super::store_arg;
        use crate::store::Location;
        let file = Location::Sqlite(PathBuf::from("/data/my results.db"));
        assert_eq!(store_arg(&file, None), ("'/data/my results.db'".to_string(), String::new()));
        let open = Location::parse("postgres://versus@db:5432/team");
        let (db, note) = store_arg(&open, Some("postgres://other@db/x"));
        assert_eq!((db.as_str(), note.as_str()), ("postgres://versus@db:5432/team", ""));
        let secret = "postgres://versus:s3cret@db:5432/team";
        let with = Location::parse(secret);
        assert_eq!(store_arg(&with, Some(secret)), ("\"$VERSUS_DB\"".to_string(), String::new()));
        let (db, note) = store_arg(&with, None);
        assert_eq!(db, "'postgres://versus:<redacted>@db:5432/team'");
        assert_eq!(note, " (with the store's password in place of <redacted>)");
        let (db, _) = store_arg(&with, Some("postgres://versus:other@db:5432/team"));
        assert!(!db.contains("VERSUS_DB") && !db.contains("s3cret") && !db.contains("other"), "{db}");
    }

    #[test]
    fn no_recovery_file_is_written_without_the_experiments_uid() {
        let (dir, db, id) = interrupted();
        let store = Store::open(&db).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("ALTER TABLE experiments RENAME TO lost;").unwrap();
        let result = RunResult::default();
        let e = store.save_recovery(id, 1, &result, &crate::error::Error::Other("gone".into())).unwrap_err();
        assert!(e.to_string().contains(&format!("the uid of experiment {id} is unknown")), "{e}");
        assert_eq!(recovery_files(dir.path()), Vec::<PathBuf>::new());
        // A uid that is empty in the store is no uid either.
        c.execute_batch("ALTER TABLE lost RENAME TO experiments; UPDATE experiments SET uid = '';").unwrap();
        let e = Store::open(&db).unwrap().save_recovery(id, 1, &result, &crate::error::Error::Other("gone".into()));
        assert!(e.is_err_and(|e| e.to_string().contains("has no uid")));
        assert_eq!(recovery_files(dir.path()), Vec::<PathBuf>::new());
    }

    #[test]
    fn a_block_run_the_lost_store_refuses_is_not_kept_and_the_error_gives_the_command_that_runs_the_block() {
        let (dir, db, id) = interrupted();
        let file = dir.path().join("lost.toml");
        std::fs::write(&file, FILE).unwrap();
        // Block 1 (repetition 2), as `versus run FILE --block 1` runs it.
        let block = RunOptions { block: Some((id, 2)), ..RunOptions::default() };
        let mut lossy = Lossy { db: db.clone(), interrupt: false, lose_store: true };
        let e = run(&db, Some(&file), &block, &mut lossy).unwrap_err().to_string();
        assert_eq!(recovery_files(dir.path()), Vec::<PathBuf>::new(), "{e}");
        assert!(!e.contains("--resume-id") && !e.contains("versus import"), "{e}");
        let path = std::fs::canonicalize(&file).unwrap();
        let command = format!(
            "`versus run {} --block 1 --db {}`",
            crate::shell::quote(&path.display().to_string()),
            crate::shell::quote(&db.display().to_string())
        );
        assert!(e.contains(&command), "{command}: {e}");
        assert!(e.contains("its block is left incomplete"), "{e}");
    }
}
