//! External servers are the user's: versus creates its benchmark tables there only where none exist,
//! unless the target says `replace_tables = true`, and `--dry-run` lists every change it would make.

use std::fmt::Write;

use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::experiment::plan::{Plan, TargetKind};
use crate::workload::{OwnTables, TableNames, Workload};

/// Refuses to prepare `workload` on an external server where one of its tables exists already.
pub fn check_no_tables(
    conn: &mut mysql::Conn,
    target: &str,
    address: &str,
    database: &str,
    w: &dyn Workload,
) -> Result<()> {
    let Some(OwnTables { database: db, names }) = w.own_tables(database) else { return Ok(()) };
    let found: Vec<String> = match names {
        TableNames::Matching { regexp, .. } => conn.exec(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name REGEXP ? \
             ORDER BY table_name",
            (db.as_str(), regexp),
        ),
        TableNames::Listed(names) => {
            let list = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
            conn.exec(
                format!(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name IN ({list}) \
                     ORDER BY table_name"
                ),
                (db.as_str(),),
            )
        }
    }
    .map_err(|e| crate::server::admin::sql_error("looking for existing benchmark tables", e))?;
    match found.first() {
        None => Ok(()),
        Some(t) => Err(Error::Other(format!(
            "target {target}: table {db}.{t} already exists on {address}{}; versus does not drop tables on an \
             external server: drop it yourself, or set `replace_tables = true` on the target to let versus \
             drop and recreate its benchmark tables there",
            if found.len() > 1 { format!(" (and {} more)", found.len() - 1) } else { String::new() }
        ))),
    }
}

/// What an experiment changes on each server, for `--dry-run`: sandboxes are versus's own; on external
/// servers every table created, dropped or written is named.
pub fn describe_changes(plan: &Plan) -> String {
    let mut s = String::new();
    for (i, t) in plan.targets.iter().enumerate() {
        let mut workloads: Vec<&dyn Workload> = Vec::new();
        for c in plan.cells.iter().filter(|c| c.target == i) {
            let w = plan.workloads[c.workload].as_ref();
            if !workloads.iter().any(|x| x.label() == w.label()) {
                workloads.push(w);
            }
        }
        match &t.kind {
            TargetKind::Sandbox { .. } => {
                let _ = writeln!(s, "  {}: a sandbox of versus's own; nothing outside the versus home", t.label);
            }
            TargetKind::External { address, database, replace_tables, .. } => {
                let _ = writeln!(s, "  {} (external {address}):", t.label);
                for w in workloads {
                    let Some(OwnTables { database: db, names }) = w.own_tables(database) else {
                        let _ = writeln!(s, "    {}: prepare and runs: the user's own statements", w.label());
                        continue;
                    };
                    let what = match &names {
                        TableNames::Matching { shown, .. } => format!("{db}.{shown}"),
                        TableNames::Listed(names) => list(&db, names),
                    };
                    let prep = if *replace_tables {
                        format!("DROP TABLE IF EXISTS and CREATE TABLE {what} (replace_tables = true)")
                    } else {
                        format!("CREATE TABLE {what}; refused if any of them exists")
                    };
                    let _ = writeln!(s, "    {}: prepare: {prep}", w.label());
                    let run = if w.writes() { "INSERT, UPDATE and DELETE on them" } else { "reads only" };
                    let _ = writeln!(s, "    {}: runs: {run}; the tables are left in place", w.label());
                }
            }
        }
    }
    s
}

fn list(db: &str, names: &[String]) -> String {
    match names {
        [one] => format!("{db}.{one}"),
        [first, .., last] => format!("{db}.{first}…{last}"),
        [] => String::new(),
    }
}

/// Takes the lock of experiment `name` (`experiments/NAME.lock` in the versus home, beside its work
/// directory, never removed): one run of an experiment at a time. A second gets an error naming the
/// process that holds it.
pub fn lock_experiment(home: &crate::server::Home, name: &str) -> Result<crate::lockfile::Held> {
    let dir = home.root().join("experiments");
    crate::owned::check_dir(&dir)?;
    crate::owned::create_dir_all(&dir)?;
    crate::lockfile::take(&dir.join(format!("{}.lock", crate::owned::slug(name))), |holder| {
        Error::Other(format!(
            "experiment '{name}' is already running ({holder}); wait for it to finish or stop it, or give this one \
             another name"
        ))
    })
}
