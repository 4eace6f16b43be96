//! Any sysbench 1.0 Lua script, unmodified: `versus sysbench ./my.lua [options] COMMAND` runs the
//! script in an embedded LuaJIT (the VM sysbench uses, FFI included) with the sysbench Lua API, and its
//! `run` on versus's load generator: the same interval lines, final report and `--format=json`.
//!
//! The bundled scripts' names keep mapping to the built-in Rust tests; `--lua` runs such a script's
//! `.lua` file itself instead.

mod bridge;
mod commands;
mod ctx;
mod events;
pub mod experiment;
pub mod options;
pub mod script;
mod sql;
mod vm;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::workload::sysbench::options::{self as sb_options, Test};
use crate::workload::sysbench::rng::Unique;
use crate::workload::sysbench::{
    Interval, ReportHooks, RunResult, Source, driver_for, legacy, report, run_command_with,
};

use commands::seed;

pub use experiment::KIND;
pub use script::Script;

/// The option that runs a bundled script's `.lua` file in the VM rather than the built-in test.
const FORCE: &str = "lua";

/// Whether `versus sysbench ARGS` names a Lua script for the VM: a `.lua` file that is not one of the
/// bundled tests (nor a legacy script versus maps to one), or any `.lua` file under `--lua`.
pub fn wants(args: &[String]) -> bool {
    let forced = args.iter().any(|a| a == "--lua" || a == "--lua=on");
    let Some(word) = args.iter().find(|a| !a.starts_with('-')) else { return false };
    if !word.ends_with(".lua") {
        return false;
    }
    if forced {
        return true;
    }
    let mapped = Test::parse(word).is_ok() || matches!(legacy::translate(args), Ok(Some(_)));
    !mapped
}

/// Entry point of `versus sysbench SCRIPT.lua [options] COMMAND`; returns the exit code.
pub fn main(args: Vec<String>) -> Result<i32> {
    let (mut pairs, words) = options::split(&args)?;
    pairs.retain(|(n, v)| !(n == FORCE && v == "on"));
    let Some(path) = words.first() else {
        return Err(Error::Other("give the path of a Lua script: versus sysbench SCRIPT.lua [options] COMMAND".into()));
    };
    if words.len() > 2 {
        return Err(Error::Other(format!("unrecognized command line argument: {}", words[2])));
    }
    let script = Arc::new(Script::load(std::path::Path::new(path))?);
    let Some(command) = words.get(1).cloned() else {
        return Err(Error::Other(format!(
            "{path}: a command is required: prepare, run, cleanup, help, or one the script defines"
        )));
    };
    // A first state, with the general options only, reads what options the script declares.
    let probe_pairs: Vec<(String, String)> = pairs.iter().filter(|(n, _)| options::is_general(n)).cloned().collect();
    let (_, probe_opts) = options::assign(&probe_pairs, Some(&[]), args.clone())?;
    let decls = vm::declared_options(&script, &command, probe_opts, None)?;
    let (general, script_opts) = options::assign(&pairs, decls.as_deref(), args)?;
    let inv = sb_options::from_values(general, None, None)?;
    for w in &inv.warnings {
        eprintln!("{w}");
    }
    let o = inv.options;
    let driver = driver_for(&o);
    let setup = vm::Setup {
        script: script.clone(),
        command: command.clone(),
        options: script_opts,
        rand: o.rand.clone(),
        driver: driver.clone(),
        unique: Arc::new(Unique::seeded(seed(&o))),
        log: None,
        cancel: Default::default(),
    };
    let setup = Arc::new(setup);
    let main_vm = vm::Vm::new(&setup, 0, seed(&o))?;
    let call = |f: mlua::Function| f.call::<()>(()).map_err(|e| vm::lua_error(&script, e));
    match command.as_str() {
        "help" => {
            println!("{}\n", report::version_line().trim_end());
            match main_vm.function("help") {
                Some(f) => call(f)?,
                None => print!("{} options:\n{}", script.path.display(), setup.options.help()),
            }
            Ok(0)
        }
        "run" => {
            if let Some(f) = main_vm.function("init") {
                call(f)?;
            }
            let name = script.path.display().to_string();
            let pct = f64::from(o.percentile);
            let (script, lua) = (&script, &main_vm.lua);
            let mut interval = main_vm.hook("report_intermediate").map(|h| {
                move |i: &Interval| {
                    let stat = vm::Stat {
                        threads_running: i.threads,
                        time_interval: i.duration,
                        time_total: i.time,
                        latency_pct: i.latency_pct_ms / 1000.0,
                        counts: i.counts,
                    };
                    report_hook(script, lua, &h, stat);
                }
            });
            let mut cumulative = main_vm.hook("report_cumulative").map(|h| {
                move |r: &RunResult| {
                    let stat = vm::Stat {
                        threads_running: r.threads as u32,
                        time_interval: r.time_interval.as_secs_f64(),
                        time_total: r.total_time.as_secs_f64(),
                        latency_pct: if pct > 0.0 { r.percentile_ms(pct) / 1000.0 } else { 0.0 },
                        counts: r.counts,
                    };
                    report_hook(script, lua, &h, stat);
                }
            });
            let hooks = ReportHooks {
                interval: interval.as_mut().map(|f| f as &mut dyn FnMut(&Interval)),
                cumulative: cumulative.as_mut().map(|f| f as &mut dyn FnMut(&RunResult)),
            };
            let code = run_command_with(Source::Custom(events::factory(setup.clone())), &name, &o, driver, hooks)?;
            if code == 2 && !pairs.iter().any(|(n, _)| n == "forced_shutdown") {
                eprintln!(
                    "versus: an event() of {name} had not returned {} s after --time, so the run was stopped; \
                     --forced-shutdown sets how long to wait",
                    options::STUCK_EVENT_GRACE
                );
            }
            if let Some(f) = main_vm.function("done") {
                call(f)?;
            }
            Ok(code)
        }
        other => {
            if o.format == sb_options::Format::Text {
                println!("{}", report::version_line().trim_end());
            }
            commands::run_named(&setup, other, o.threads as usize, seed(&o))?;
            Ok(0)
        }
    }
}

/// Calls a script's report hook with `stat`; an error in it is said on stderr, not fatal.
fn report_hook(script: &Script, lua: &mlua::Lua, hook: &mlua::Function, stat: vm::Stat) {
    let r = vm::stat_table(lua, stat).and_then(|t| hook.call::<()>(t));
    if let Err(e) = r {
        eprintln!("versus: {}", vm::lua_error(script, e));
    }
}
