//! A Lua script inside experiments: `[[workloads]] script = "tpcc_like.lua"`, with the script's own
//! options and sysbench's general ones in `options` (`{ scale = 4, trx_level = "RC", rate = 100 }`).
//!
//! The script's `prepare` command makes the data, once per server and shape (the shape is a hash of
//! the script's files and options, so a changed script or option is a changed definition), restored
//! from a snapshot before every run; a run is the script's `event` on versus's load generator, with
//! `init` before and `done` after, as `versus sysbench SCRIPT.lua run` does.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::options::{self, Decl};
use super::script::Script;
use super::vm::{Log, Setup, Vm};
use super::{commands, events};
use crate::error::{Error, Result};
use crate::workload::sysbench::experiment::{experiment_values, measure, option_text, outcome};
use crate::workload::sysbench::options::{self as sb_options, Options};
use crate::workload::sysbench::rng::Unique;
use crate::workload::sysbench::runner::Source;
use crate::workload::{DataShape, Endpoint, Kind, RunContext, RunOutcome, RunSettings, Timing, Workload, WorkloadDef};

/// What the experiment sets itself: an entry's options may not.
const SET_BY_EXPERIMENT: &[&str] = &[
    "threads",
    "time",
    "events",
    "warmup_time",
    "report_interval",
    "mysql_host",
    "mysql_port",
    "mysql_socket",
    "mysql_user",
    "mysql_password",
    "mysql_db",
];

/// Lua scripts as a kind of workload.
pub struct LuaKind;

/// The registry's entry.
pub static KIND: LuaKind = LuaKind;

impl Kind for LuaKind {
    fn name(&self) -> &'static str {
        "lua"
    }

    fn claims(&self, def: &WorkloadDef) -> bool {
        def.test.is_empty() && def.script.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "lua"))
    }

    fn plan(&self, def: &WorkloadDef, base_dir: &Path) -> std::result::Result<Vec<Arc<dyn Workload>>, String> {
        Ok(vec![Arc::new(LuaWorkload::new(def, base_dir).map_err(|e| format!("workload {}: {e}", def.label()))?)])
    }
}

/// One script with its options, read and checked.
#[derive(Debug, Clone)]
pub struct LuaWorkload {
    def: WorkloadDef,
    script: Arc<Script>,
    /// The entry's options as `--name=value` pairs.
    pairs: Vec<(String, String)>,
    decls: Option<Vec<Decl>>,
    /// Hash of the script's files and the options: the identity of its data.
    hash: String,
}

impl LuaWorkload {
    /// Reads the script of `def` (relative to `base_dir`), loads it once to learn its options and
    /// checks the entry's against them.
    pub fn new(def: &WorkloadDef, base_dir: &Path) -> Result<LuaWorkload> {
        let written = def.script.clone().unwrap_or_default();
        let path = if written.is_absolute() { written } else { base_dir.join(written) };
        let script = Arc::new(Script::load(&path)?);
        let mut pairs = Vec::new();
        for (k, v) in &def.options {
            let name = k.replace('-', "_");
            if SET_BY_EXPERIMENT.contains(&name.as_str()) {
                return Err(Error::Other(format!("options.{k} is set by the experiment, not by a workload's options")));
            }
            // A script's list options are comma-separated on the command line.
            let text = match v {
                toml::Value::Array(a) => a.iter().map(option_text).collect::<Vec<_>>().join(","),
                other => option_text(other),
            };
            pairs.push((name, text));
        }
        let decls = super::vm::declared_options(&script, "run", Default::default(), Some(quiet()))?;
        let (general, _) = options::assign(&pairs, decls.as_deref(), Vec::new())?;
        sb_options::from_values(general, None, None)?;
        let mut h = Sha256::new();
        for f in script.files() {
            h.update(f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default().as_bytes());
            h.update(b"\0");
            h.update(std::fs::read(&f).unwrap_or_default());
            h.update(b"\0");
        }
        for (k, v) in &pairs {
            h.update(format!("{k}={v}\0").as_bytes());
        }
        let hash = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
        Ok(LuaWorkload { def: def.clone(), script, pairs, decls, hash })
    }

    /// The setup of the states of one command, and the typed options of the run (or of prepare).
    fn setup(&self, server: &Endpoint, command: &str, run: Option<&RunSettings<'_>>) -> Result<(Setup, Options)> {
        let pairs = experiment_values(server, run, &self.pairs);
        let (general, script_opts) = options::assign(&pairs, self.decls.as_deref(), Vec::new())?;
        let mut o = sb_options::from_values(general, None, None)?.options;
        o.connect.init.splice(0..0, server.init.iter().cloned());
        let driver = crate::workload::sysbench::driver_for(&o);
        let seed = if o.rand.seed != 0 { o.rand.seed } else { 1 };
        let setup = Setup {
            script: self.script.clone(),
            command: command.into(),
            options: script_opts,
            rand: o.rand.clone(),
            driver,
            unique: Arc::new(Unique::seeded(seed)),
            log: Some(quiet()),
            cancel: Default::default(),
        };
        Ok((setup, o))
    }
}

/// A log that drops what the script prints (progress lines would break the experiment's display).
fn quiet() -> Log {
    Arc::new(|_: &str| {})
}

impl Workload for LuaWorkload {
    fn kind(&self) -> &'static str {
        "lua"
    }

    fn label(&self) -> String {
        self.def.label()
    }

    fn data(&self) -> DataShape {
        DataShape { key: format!("lua;{}", self.hash), rows: 0, empty: false }
    }

    fn stored_options(&self) -> serde_json::Value {
        let mut options = serde_json::to_value(&self.def.options).unwrap_or_default();
        if let Some(o) = options.as_object_mut() {
            o.insert("script".into(), self.def.script.as_ref().map(|p| p.display().to_string()).into());
            let files: BTreeMap<String, String> = self
                .script
                .files()
                .iter()
                .map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap_or_default()))
                .collect();
            o.insert("files".into(), serde_json::to_value(files).unwrap_or_default());
        }
        options
    }

    fn threads(&self) -> Option<&[u32]> {
        self.def.threads.as_deref()
    }

    fn estimate(&self, _threads: u32, t: &Timing) -> Duration {
        Duration::from_secs(10) + t.warmup + t.duration
    }

    fn prepare(&self, server: &Endpoint, fresh: bool, log: &mut dyn FnMut(&str)) -> Result<()> {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        for command in if fresh { vec!["prepare"] } else { vec!["cleanup", "prepare"] } {
            let (mut setup, o) = self.setup(server, command, None)?;
            let sink = lines.clone();
            setup.log =
                Some(Arc::new(move |l: &str| sink.lock().unwrap_or_else(|p| p.into_inner()).push(l.to_string())));
            commands::run_named(&Arc::new(setup), command, o.threads as usize, 1)?;
        }
        if let Some(last) = lines.lock().unwrap_or_else(|p| p.into_inner()).last() {
            log(last);
        }
        Ok(())
    }

    fn run(&self, ctx: RunContext<'_>) -> RunOutcome {
        let settings = ctx.settings;
        let (setup, o) = match self.setup(ctx.server, "run", Some(&settings)) {
            Ok(x) => x,
            Err(e) => return RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
        };
        let setup = Arc::new(setup);
        let main = match Vm::new(&setup, 0, o.rand.seed) {
            Ok(vm) => vm,
            Err(e) => return RunOutcome::Failed { error: e.to_string(), intervals: Vec::new() },
        };
        if let Some(f) = main.function("init")
            && let Err(e) = f.call::<()>(())
        {
            return RunOutcome::Failed {
                error: super::vm::lua_error(&self.script, e).to_string(),
                intervals: Vec::new(),
            };
        }
        let command = serde_json::json!({
            "lua": { "script": self.script.path.display().to_string(), "options": o, "hash": self.hash },
        });
        let measured = measure(Source::Custom(events::factory(setup.clone())), &o, command, ctx);
        if let Some(f) = main.function("done")
            && let Err(e) = f.call::<()>(())
            && measured.is_ok()
        {
            return RunOutcome::Failed {
                error: super::vm::lua_error(&self.script, e).to_string(),
                intervals: Vec::new(),
            };
        }
        outcome(measured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(script: &str, options: &str) -> WorkloadDef {
        WorkloadDef { script: Some(script.into()), options: toml::from_str(options).unwrap(), ..Default::default() }
    }

    #[test]
    fn a_changed_module_or_option_is_a_changed_definition() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("w.lua"),
            "require('w_common')\nsysbench.cmdline.options = { scale = {'', 1} }\nfunction event() end\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("w_common.lua"), "X = 1\n").unwrap();
        let key = |options: &str| LuaWorkload::new(&def("w.lua", options), dir.path()).unwrap().data().key;
        let first = key("scale = 2");
        assert_eq!(key("scale = 2"), first);
        assert_ne!(key("scale = 3"), first);
        std::fs::write(dir.path().join("w_common.lua"), "X = 2\n").unwrap();
        assert_ne!(key("scale = 2"), first, "the required sibling is part of the definition");
        let e = LuaWorkload::new(&def("w.lua", "scael = 2"), dir.path()).unwrap_err().to_string();
        assert!(e.contains("--scael") && e.contains("scale"), "{e}");
        let e = LuaWorkload::new(&def("w.lua", "threads = 2"), dir.path()).unwrap_err().to_string();
        assert!(e.contains("set by the experiment"), "{e}");
        assert!(KIND.claims(&def("w.lua", "")) && !KIND.claims(&def("w.sql", "")));
    }
}
