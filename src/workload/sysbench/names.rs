//! The names on a `versus sysbench` command line: the tests and the commands.

use serde::Serialize;

use super::spec::{self, Scope};
use crate::error::{Error, Result};

/// The eleven sysbench OLTP tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Reads, writes, BEGIN/COMMIT (20 statements by default).
    OltpReadWrite,
    /// Point and range selects in a transaction.
    OltpReadOnly,
    /// Updates, delete+insert in a transaction.
    OltpWriteOnly,
    /// One point select.
    OltpPointSelect,
    /// One `UPDATE … SET k=k+1`.
    OltpUpdateIndex,
    /// One `UPDATE … SET c=?`.
    OltpUpdateNonIndex,
    /// One INSERT.
    OltpInsert,
    /// One DELETE.
    OltpDelete,
    /// One `SELECT … WHERE k IN (…)`.
    SelectRandomPoints,
    /// One `SELECT count(k) … WHERE k BETWEEN … OR …`.
    SelectRandomRanges,
    /// Buffered multi-row INSERTs into per-thread tables.
    BulkInsert,
    /// versus addition for legacy `--oltp-test-mode=incupdate`: one `UPDATE … SET c=c+1`.
    OltpIncUpdate,
}

impl Test {
    /// All tests with their command-line names.
    pub const ALL: [(&'static str, Test); 12] = [
        ("oltp_read_write", Test::OltpReadWrite),
        ("oltp_read_only", Test::OltpReadOnly),
        ("oltp_write_only", Test::OltpWriteOnly),
        ("oltp_point_select", Test::OltpPointSelect),
        ("oltp_update_index", Test::OltpUpdateIndex),
        ("oltp_update_non_index", Test::OltpUpdateNonIndex),
        ("oltp_insert", Test::OltpInsert),
        ("oltp_delete", Test::OltpDelete),
        ("select_random_points", Test::SelectRandomPoints),
        ("select_random_ranges", Test::SelectRandomRanges),
        ("bulk_insert", Test::BulkInsert),
        ("oltp_inc_update", Test::OltpIncUpdate),
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map(|(n, _)| *n).unwrap_or("?")
    }

    /// Parses a test name, a path to `<name>.lua`, or a module name.
    pub fn parse(word: &str) -> Result<Test> {
        let base = word.rsplit('/').next().unwrap_or(word);
        let base = base.strip_suffix(".lua").unwrap_or(base);
        if let Some((_, t)) = Self::ALL.iter().find(|(n, _)| *n == base) {
            return Ok(*t);
        }
        let best = Self::ALL.iter().map(|(n, _)| (spec::levenshtein(base, n), *n)).min().map(|(_, n)| n);
        Err(Error::Other(format!(
            "unknown test '{word}': no such test (did you mean '{}'?); tests: {}",
            best.unwrap_or("oltp_read_write"),
            Self::ALL[..11].iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        )))
    }

    pub(super) fn accepts(self, scope: Scope) -> bool {
        match scope {
            Scope::All => true,
            // bulk_insert declares no options, so sysbench accepts (and ignores) the common ones there.
            Scope::Oltp => true,
            Scope::RandomPoints => self == Test::SelectRandomPoints,
            Scope::RandomRanges => self == Test::SelectRandomRanges,
        }
    }
}

/// What to do with the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    /// Create and load the tables.
    Prepare,
    /// Load tables and indexes into the buffer pool.
    Prewarm,
    /// Run the benchmark.
    Run,
    /// Drop the tables.
    Cleanup,
    /// Print the test's options.
    Help,
}

impl Command {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Prewarm => "prewarm",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
            Command::Help => "help",
        }
    }

    pub(super) fn parse(word: &str) -> Result<Command> {
        Ok(match word {
            "prepare" => Command::Prepare,
            "prewarm" | "warmup" => Command::Prewarm,
            "run" => Command::Run,
            "cleanup" => Command::Cleanup,
            "help" => Command::Help,
            _ => {
                return Err(Error::Other(format!(
                    "unknown command '{word}'; supported commands: prepare, prewarm, run, cleanup, help"
                )));
            }
        })
    }
}
