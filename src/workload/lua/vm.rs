//! One Lua state with the sysbench API and the user's script loaded, as sysbench makes one per thread:
//! LuaJIT with every standard library (the FFI too), the `sysbench` table, then the script's chunk.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};

use super::bridge;
use super::ctx::Ctx;
use super::options::{Decl, OptValue, ScriptOptions};
use super::script::Script;
use super::sql::RawCon;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::workload::sysbench::options::{RandOptions, RandType};
use crate::workload::sysbench::rng::{Random, Unique};
use crate::workload::sysbench::session::Counts;

/// Where a script's `print` goes instead of stdout.
pub(super) type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// What every state of one invocation shares.
pub(super) struct Setup {
    /// The script.
    pub(super) script: Arc<Script>,
    /// The command the script runs (`sysbench.cmdline.command`).
    pub(super) command: String,
    /// The values of `sysbench.opt` (and, for scripts that declare no options, globals).
    pub(super) options: ScriptOptions,
    /// Random-number options.
    pub(super) rand: RandOptions,
    /// Where connections come from.
    pub(super) driver: Arc<dyn Driver>,
    /// sysbench's unique sequence, shared by every thread.
    pub(super) unique: Arc<Unique>,
    /// Where `print` writes; stdout when `None`.
    pub(super) log: Option<Log>,
    /// Set when one thread of a parallel command failed: the others' statements fail too, so that
    /// none waits for what the failed one will never do.
    pub(super) cancel: Arc<AtomicBool>,
}

/// The options `script` declares (`None`: it declares none), read from a state that runs its main chunk
/// for `command` with `options` in `sysbench.opt` and no server behind `drv:connect()`.
pub(super) fn declared_options(
    script: &Arc<Script>,
    command: &str,
    options: ScriptOptions,
    log: Option<Log>,
) -> Result<Option<Vec<Decl>>> {
    let probe = Setup {
        script: script.clone(),
        command: command.into(),
        options,
        rand: crate::workload::sysbench::options::Options::default().rand,
        driver: Arc::new(crate::driver::dry_run::DryRunDriver),
        unique: Arc::new(Unique::new(0, 0)),
        log,
        cancel: Default::default(),
    };
    super::options::declarations(&Vm::new(&probe, 0, 1)?.lua)
}

/// A loaded state.
pub(super) struct Vm {
    /// The state.
    pub(super) lua: Lua,
}

const API: &str = include_str!("api.lua");
/// The registry name of the primitives' table, where the API leaves the last restart error.
const PRIMITIVES: &str = "versus_primitives";

impl Vm {
    /// A state for thread `tid` with the script loaded (its main chunk run), seeded with `seed`.
    pub(super) fn new(setup: &Setup, tid: usize, seed: u64) -> Result<Vm> {
        // SAFETY: sysbench scripts expect LuaJIT's FFI (`ffi.cdef`, `ffi.C`), which mlua only loads in
        // an unsafe state; the scripts are the user's own code, run as sysbench would run them.
        let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::new()) };
        let _ = bridge::counter_symbol();
        lua.set_app_data(Ctx {
            driver: setup.driver.clone(),
            worker_free: false,
            cancel: setup.cancel.clone(),
            rnd: Random::new(&setup.rand, seed),
            unique: setup.unique.clone(),
            help: setup.options.help(),
        });
        let vm = Vm { lua };
        vm.install(setup, tid).map_err(|e| lua_error(&setup.script, e))?;
        vm.lua
            .load(setup.script.source.as_str())
            .set_name(format!("@{}", setup.script.path.display()))
            .exec()
            .map_err(|e| lua_error(&setup.script, e))?;
        Ok(vm)
    }

    fn install(&self, setup: &Setup, tid: usize) -> mlua::Result<()> {
        let lua = &self.lua;
        let g = lua.globals();
        let package: Table = g.get("package")?;
        package.set("path", setup.script.package_path(package.get::<String>("path")?))?;
        let sb = lua.create_table()?;
        sb.set("tid", tid)?;
        sb.set("version", "1.0.20")?;
        sb.set("version_string", format!("sysbench 1.0.20 (versus {})", env!("CARGO_PKG_VERSION")))?;
        let cmdline = lua.create_table()?;
        cmdline.set("command", setup.command.as_str())?;
        cmdline.set("script_path", setup.script.path.display().to_string())?;
        cmdline.set("argv", setup.options.argv.clone())?;
        sb.set("cmdline", cmdline)?;
        let opt = lua.create_table()?;
        for (name, v) in &setup.options.values {
            let v = opt_value(lua, v)?;
            opt.set(name.as_str(), v.clone())?;
            if setup.options.export_globals {
                g.set(name.as_str(), v)?;
            }
        }
        sb.set("opt", opt)?;
        g.set("sysbench", sb)?;
        if let Some(log) = setup.log.clone() {
            let print = lua.create_function(move |_, args: mlua::Variadic<Value>| {
                let words: Vec<String> = args.iter().map(|v| v.to_string().unwrap_or_default()).collect();
                log(&words.join("\t"));
                Ok(())
            })?;
            g.set("print", print)?;
        }
        let v = primitives(lua)?;
        lua.set_named_registry_value(PRIMITIVES, &v)?;
        lua.load(API).set_name("=versus-sysbench-api").call::<()>(v)
    }

    /// The global function `name`, if the script defines one.
    pub(super) fn function(&self, name: &str) -> Option<Function> {
        self.lua.globals().get::<Function>(name).ok()
    }

    /// The hook `sysbench.hooks.<name>`, if the script sets one.
    pub(super) fn hook(&self, name: &str) -> Option<Function> {
        let sb: Table = self.lua.globals().get("sysbench").ok()?;
        let hooks: Table = sb.get("hooks").ok()?;
        hooks.get::<Function>(name).ok()
    }

    /// `sysbench.cmdline.commands[name]`: its function and whether it runs on every thread.
    pub(super) fn command(&self, name: &str) -> Option<(Function, bool)> {
        let sb: Table = self.lua.globals().get("sysbench").ok()?;
        let cmdline: Table = sb.get("cmdline").ok()?;
        let commands: Table = cmdline.get("commands").ok()?;
        let c: Table = commands.get(name).ok()?;
        let f: Function = c.get(1).ok()?;
        let parallel = matches!(c.get::<Value>(2), Ok(Value::Boolean(true)));
        Some((f, parallel))
    }

    /// The error table of the statement that last restarted an event (`nil` if none).
    pub(super) fn last_error(&self) -> Value {
        self.lua
            .named_registry_value::<mlua::Table>(PRIMITIVES)
            .and_then(|v| v.get::<Value>("last_err"))
            .unwrap_or(Value::Nil)
    }

    /// Lets the script's first `drv:connect()` take the worker's connection.
    pub(super) fn offer_worker_connection(&self, free: bool) {
        if let Some(mut ctx) = self.lua.app_data_mut::<Ctx>() {
            ctx.worker_free = free;
        }
    }
}

/// The figures a report hook gets (sysbench's `stat` table).
pub(super) struct Stat {
    /// Threads still running.
    pub(super) threads_running: u32,
    /// Seconds the figures cover.
    pub(super) time_interval: f64,
    /// Seconds since the run started.
    pub(super) time_total: f64,
    /// The `--percentile` latency, in seconds.
    pub(super) latency_pct: f64,
    /// Events, statements, errors and reconnects.
    pub(super) counts: Counts,
}

/// `stat` as the Lua table a report hook receives.
pub(super) fn stat_table(lua: &Lua, stat: Stat) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let c = stat.counts;
    t.set("threads_running", stat.threads_running)?;
    t.set("time_interval", stat.time_interval)?;
    t.set("time_total", stat.time_total)?;
    t.set("latency_pct", stat.latency_pct)?;
    t.set("events", c.events)?;
    t.set("reads", c.reads)?;
    t.set("writes", c.writes)?;
    t.set("other", c.other)?;
    t.set("errors", c.errors)?;
    t.set("reconnects", c.reconnects)?;
    Ok(t)
}

/// A Lua error as versus reports it: the script, the message (with its line) and the traceback.
pub(super) fn lua_error(script: &Script, e: mlua::Error) -> Error {
    Error::Other(format!("{}: Lua error: {}", script.path.display(), e.to_string().trim_end()))
}

fn opt_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Num(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Value::Integer(*n as i64),
        OptValue::Num(n) => Value::Number(*n),
        OptValue::Str(s) => Value::String(lua.create_string(s)?),
        OptValue::List(l) => Value::Table(lua.create_sequence_from(l.iter().map(String::as_str))?),
        OptValue::Unset => Value::Nil,
    })
}

fn with_ctx<R>(lua: &Lua, f: impl FnOnce(&mut Ctx) -> R) -> mlua::Result<R> {
    let mut ctx = lua.app_data_mut::<Ctx>().ok_or_else(|| mlua::Error::runtime("no sysbench context"))?;
    Ok(f(&mut ctx))
}

fn bounds(a: f64, b: f64) -> (u32, u32) {
    (a.clamp(0.0, u32::MAX as f64) as u32, b.clamp(0.0, u32::MAX as f64) as u32)
}

/// The Rust functions the API is built on.
fn primitives(lua: &Lua) -> mlua::Result<Table> {
    let v = lua.create_table()?;
    v.set("connect", lua.create_function(|lua, ()| RawCon::open(lua))?)?;
    v.set(
        "rand_uniform",
        lua.create_function(|lua, (a, b): (f64, f64)| {
            let (a, b) = bounds(a, b);
            with_ctx(lua, |c| c.rnd.uniform(a, b))
        })?,
    )?;
    v.set(
        "rand_default",
        lua.create_function(|lua, (a, b): (f64, f64)| {
            let (a, b) = bounds(a, b);
            with_ctx(lua, |c| c.rnd.default(a, b))
        })?,
    )?;
    v.set(
        "rand_kind",
        lua.create_function(|lua, (kind, a, b): (String, f64, f64)| {
            let kind = match kind.as_str() {
                "gaussian" => RandType::Gaussian,
                "special" => RandType::Special,
                "pareto" => RandType::Pareto,
                _ => RandType::Zipfian,
            };
            let (a, b) = bounds(a, b);
            with_ctx(lua, |c| c.rnd.draw(kind, a, b))
        })?,
    )?;
    v.set("rand_u64", lua.create_function(|lua, ()| with_ctx(lua, |c| c.rnd.rng.next_u64() as f64))?)?;
    v.set("rand_double", lua.create_function(|lua, ()| with_ctx(lua, |c| c.rnd.rng.next_f64()))?)?;
    v.set(
        "rand_string",
        lua.create_function(|lua, fmt: mlua::LuaString| {
            let fmt = fmt.to_str()?.to_string();
            let mut out = String::with_capacity(fmt.len());
            with_ctx(lua, |c| c.rnd.fill_template(&fmt, &mut out))?;
            Ok(out)
        })?,
    )?;
    v.set(
        "rand_varstring",
        lua.create_function(|lua, (min, max): (u32, u32)| {
            const CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
            with_ctx(lua, |c| {
                let n = c.rnd.uniform(min.min(max), max.max(min));
                (0..n).map(|_| CHARS[c.rnd.uniform(0, CHARS.len() as u32 - 1) as usize] as char).collect::<String>()
            })
        })?,
    )?;
    v.set("rand_unique", lua.create_function(|lua, ()| with_ctx(lua, |c| c.unique.next()))?)?;
    v.set("options_help", lua.create_function(|lua, ()| with_ctx(lua, |c| c.help.clone()))?)?;
    Ok(v)
}
