//! A script inside experiments: `[[workloads]] script = "app.sql"`, with options
//! `{ define = { scale = 10 }, rate = 100, ignore-errors = "1213", db-ps-mode = "disable" }`.
//!
//! The setup section is the data: it runs once per server and setup (the shape key is a hash of the
//! setup's text and the defines), and its result is snapshotted and restored before every run like
//! sysbench's prepare. A run is sysbench's loop over the script's transactions; besides sysbench's
//! figures it stores, per statement, a latency histogram (`statement N`), its failures
//! (`versus.script.statement.N.errors`), per transaction the events that finished
//! (`versus.script.transaction.N`), and with the command, the server's plan of every statement
//! (`EXPLAIN FORMAT=JSON`, taken once at the start of the run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::expr::Value;
use super::parse::{self, Script};
use crate::error::{Error, Result};
use crate::store::{self, StoredHistogram};
use crate::workload::sysbench::experiment::{experiment_values, measure, option_text, outcome};
use crate::workload::sysbench::options::{self, Options};
use crate::workload::sysbench::runner::Source;
use crate::workload::{
    DataShape, Endpoint, Kind, RunContext, RunOutcome, RunSettings, StoredRuns, Timing, Workload, WorkloadDef,
    WorkloadSection,
};

pub use super::stored::{errors_key, histogram_kind, transaction_key};

/// The options a script takes (sysbench's names; `ignore-errors` is `mysql-ignore-errors`).
const OPTIONS: &[&str] = &[
    "rate",
    "mysql_ignore_errors",
    "db_ps_mode",
    "client",
    "rand_seed",
    "percentile",
    "mysql_ssl",
    "mysql_ssl_ca",
    "mysql_ssl_cert",
    "mysql_ssl_key",
    "mysql_compression",
    "thread_init_timeout",
    "forced_shutdown",
];

/// Scripts as a kind of workload.
pub struct ScriptKind;

/// The registry's entry.
pub static KIND: ScriptKind = ScriptKind;

impl Kind for ScriptKind {
    fn name(&self) -> &'static str {
        "script"
    }

    fn claims(&self, def: &WorkloadDef) -> bool {
        def.script.is_some()
    }

    fn check(&self, def: &WorkloadDef) -> std::result::Result<(), String> {
        split_options(def).map(|_| ())
    }

    fn plan(&self, def: &WorkloadDef, base_dir: &Path) -> std::result::Result<Vec<Arc<dyn Workload>>, String> {
        Ok(vec![Arc::new(ScriptWorkload::new(def, base_dir)?)])
    }

    fn sections(&self, runs: &StoredRuns<'_>) -> Vec<Arc<dyn WorkloadSection>> {
        super::stored::sections(runs).into_iter().map(|s| Arc::new(s) as Arc<dyn WorkloadSection>).collect()
    }

    fn read_section(&self, key: &str, value: &serde_json::Value) -> Option<Result<Arc<dyn WorkloadSection>, String>> {
        (key == super::section::KEY).then(|| crate::workload::sections::read::<super::stored::Section>(value))
    }

    fn stored_command(&self, run: &store::RunDetail) -> Option<String> {
        run.command.as_ref()?.pointer("/script/command")?.as_str().map(str::to_string)
    }

    fn stored_figures(&self, run: &store::RunDetail) -> Option<String> {
        super::stored::run_report(run)
    }
}

/// The normalised option name (`ignore-errors` → `mysql_ignore_errors`).
fn option_name(k: &str) -> String {
    let k = k.replace('-', "_");
    if k == "ignore_errors" { "mysql_ignore_errors".into() } else { k }
}

/// A script entry's options: its defines, and the sysbench-style option values.
type SplitOptions = (Vec<(String, Value)>, Vec<(String, String)>);

/// The entry's defines and its sysbench-style option values.
fn split_options(def: &WorkloadDef) -> std::result::Result<SplitOptions, String> {
    let label = def.label();
    let mut defines = Vec::new();
    let mut values = Vec::new();
    for (k, v) in &def.options {
        let name = option_name(k);
        if name == "define" {
            let Some(t) = v.as_table() else {
                return Err(format!(
                    "workload {label}: options.define must be a table, e.g. define = {{ scale = 10 }}"
                ));
            };
            for (n, x) in t {
                let value = match x {
                    toml::Value::Integer(i) => Value::Int(*i),
                    toml::Value::Float(f) => Value::Double(*f),
                    _ => return Err(format!("workload {label}: options.define.{n} must be a number")),
                };
                defines.push((n.clone(), value));
            }
            continue;
        }
        if !OPTIONS.contains(&name.as_str()) {
            return Err(format!(
                "workload {label}: options.{k} does not apply to a script; it takes define, {}",
                OPTIONS.iter().map(|o| o.replace('_', "-")).collect::<Vec<_>>().join(", ")
            ));
        }
        values.push((name, option_text(v)));
    }
    Ok((defines, values))
}

/// One script with its options, parsed and checked.
#[derive(Debug, Clone)]
pub struct ScriptWorkload {
    def: WorkloadDef,
    path: PathBuf,
    script: Arc<Script>,
    text: String,
    values: Vec<(String, String)>,
}

impl ScriptWorkload {
    /// Reads and checks the script of `def` (relative to `base_dir`).
    pub fn new(def: &WorkloadDef, base_dir: &Path) -> std::result::Result<ScriptWorkload, String> {
        let (defines, values) = split_options(def)?;
        let written = def.script.clone().unwrap_or_default();
        let path = if written.is_absolute() { written.clone() } else { base_dir.join(&written) };
        let (script, text) = parse::load(&path, 1, &defines).map_err(|e| e.to_string())?;
        let w = ScriptWorkload { def: def.clone(), path, script: Arc::new(script), text, values };
        let probe = Endpoint {
            host: "127.0.0.1".into(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            database: String::new(),
            init: Vec::new(),
        };
        w.options(&probe, None).map_err(|e| format!("workload {}: {e}", def.label()))?;
        Ok(w)
    }

    /// The typed options of a run (or of prepare, without `run`).
    fn options(&self, server: &Endpoint, run: Option<&RunSettings<'_>>) -> Result<Options> {
        let values: BTreeMap<String, String> = experiment_values(server, run, &self.values).into_iter().collect();
        let mut o = options::from_values(values, None, None)?.options;
        o.connect.stmt_cache_size = self.script.statements.len() + 8;
        // The target's client-side character set (`SET NAMES`) first on every connection.
        o.connect.init.splice(0..0, server.init.iter().cloned());
        Ok(o)
    }

    fn setup_hash(&self) -> String {
        let mut h = Sha256::new();
        for st in &self.script.setup {
            h.update(st.text.as_bytes());
            h.update(b"\0");
        }
        for (slot, v) in &self.script.defines {
            h.update(format!("{}={v}\0", self.script.vars[*slot]).as_bytes());
        }
        h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The plans of the statements, as the server gives them now, with values drawn from `seed`.
    fn plans(&self, server: &Endpoint, seed: u64) -> serde_json::Value {
        let mut out = Vec::new();
        let conn = mysql::Opts::from(
            mysql::OptsBuilder::new()
                .ip_or_hostname(Some(server.host.clone()))
                .tcp_port(server.port)
                .user(Some(server.user.clone()))
                .pass(Some(server.password.clone()))
                .db_name((!server.database.is_empty()).then(|| server.database.clone())),
        );
        let Ok(mut conn) = mysql::Conn::new(conn) else { return serde_json::Value::Array(out) };
        for (t, _) in self.script.transactions.iter().enumerate() {
            let Ok(vars) = super::run::sample_values(&self.script, t, seed) else { continue };
            for st in self.script.statements.iter().filter(|s| s.transaction == Some(t) && s.explainable()) {
                let plan = super::plan::explain(&mut conn, &st.with_values(&vars));
                out.push(serde_json::json!({ "statement": st.number, "plan": plan }));
            }
        }
        serde_json::Value::Array(out)
    }
}

impl Workload for ScriptWorkload {
    fn kind(&self) -> &'static str {
        "script"
    }

    fn label(&self) -> String {
        self.def.label()
    }

    fn data(&self) -> DataShape {
        let empty = self.script.setup.is_empty();
        DataShape {
            key: format!("script;setup={}", if empty { "none".into() } else { self.setup_hash() }),
            rows: 0,
            empty,
        }
    }

    fn stored_options(&self) -> serde_json::Value {
        let mut options = serde_json::to_value(&self.def.options).unwrap_or_default();
        if let Some(o) = options.as_object_mut() {
            o.insert("script".into(), self.def.script.as_ref().map(|p| p.display().to_string()).into());
            o.insert("text".into(), self.text.clone().into());
        }
        options
    }

    fn threads(&self) -> Option<&[u32]> {
        self.def.threads.as_deref()
    }

    fn estimate(&self, _threads: u32, t: &Timing) -> Duration {
        Duration::from_secs(4) + t.warmup + t.duration
    }

    fn prepare(&self, server: &Endpoint, _fresh: bool, log: &mut dyn FnMut(&str)) -> Result<()> {
        let o = self.options(server, None)?;
        let driver = crate::workload::sysbench::driver_for(&o);
        let mut conn =
            driver.connect().map_err(|e| Error::Other(format!("{}: cannot connect: {e}", self.script.file)))?;
        let lines = std::sync::Mutex::new(Vec::new());
        super::run::setup(&self.script, conn.as_mut(), 1, &|l| {
            lines.lock().unwrap_or_else(|e| e.into_inner()).push(l.to_string())
        })?;
        if let Some(last) = lines.into_inner().unwrap_or_default().last() {
            log(last);
        }
        Ok(())
    }

    fn run(&self, ctx: RunContext<'_>) -> RunOutcome {
        let settings = ctx.settings;
        let o = match self.options(ctx.server, Some(&settings)) {
            Ok(o) => o,
            Err(e) => return RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
        };
        // Plans are a property of the target (build, config, data), not of the run: the first repetition
        // of each cell stores them, the comparison reads the first run that has them.
        let plans =
            if settings.repetition <= 1 { self.plans(ctx.server, o.rand.seed) } else { serde_json::Value::Null };
        let command = serde_json::json!({
            "script": { "file": self.path.display().to_string(), "options": o, "command": super::command_line(&self.path, &o) },
            "plans": plans,
        });
        let events = super::run::events(self.script.clone(), o.threads as usize, crate::interrupt::flag(), o.rand.seed);
        let measured = measure(Source::Custom(events.factory()), &o, command, ctx);
        let measured = measured.and_then(|(r, mut stored)| {
            let figures = events.figures();
            add_figures(&self.script, &figures, &mut stored).map_err(|e| (e, Vec::new()))?;
            Ok((r, stored))
        });
        outcome(measured)
    }
}

/// Adds the per-statement histograms and the per-statement and per-transaction counts to a stored run.
pub fn add_figures(script: &Script, f: &super::run::Figures, stored: &mut store::RunResult) -> Result<()> {
    for (i, h) in f.latency.iter().enumerate() {
        let n = script.statements[i].number;
        stored.histograms.push(StoredHistogram {
            kind: histogram_kind(n),
            t_s: None,
            data: store::encode_histogram(h)?,
        });
        stored.status_deltas.push((errors_key(n), f.errors[i] as i64));
    }
    for (i, c) in f.transactions.iter().enumerate() {
        stored.status_deltas.push((transaction_key(i + 1), *c as i64));
    }
    Ok(())
}
