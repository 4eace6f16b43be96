//! Any sysbench 1.0 Lua script, unmodified: `versus sysbench ./my.lua [options] COMMAND` runs the
//! script in an embedded LuaJIT (the VM sysbench uses, FFI included) with the sysbench Lua API, and its
//! `run` on versus's load generator: the same interval lines, final report and `--format=json`.
//!
//! The bundled scripts' names keep mapping to the built-in Rust tests; `--lua` runs such a script's
//! `.lua` file itself instead.

mod bridge;
mod events;
pub mod options;
pub mod script;
mod sql;
mod vm;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::workload::sysbench::options::{self as sb_options, Test};
use crate::workload::sysbench::rng::Unique;
use crate::workload::sysbench::{Source, driver_for, legacy, report, run_command};

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
    let (general, probe_opts) = options::assign(&probe_pairs, Some(&[]), args.clone())?;
    let o = sb_options::from_values(general, None, None)?.options;
    let driver = driver_for(&o);
    let mut setup = vm::Setup {
        script: script.clone(),
        command: command.clone(),
        options: probe_opts,
        rand: o.rand.clone(),
        driver: driver.clone(),
        unique: Arc::new(Unique::new(0, 0)),
    };
    let decls = options::declarations(&vm::Vm::new(&setup, 0, seed(&o))?.lua)?;
    let (general, script_opts) = options::assign(&pairs, decls.as_deref(), args)?;
    let inv = sb_options::from_values(general, None, None)?;
    for w in &inv.warnings {
        eprintln!("{w}");
    }
    let o = inv.options;
    let driver = driver_for(&o);
    setup.options = script_opts;
    setup.rand = o.rand.clone();
    setup.driver = driver.clone();
    let mut seeder = crate::workload::sysbench::rng::Xoroshiro::seeded(seed(&o));
    setup.unique = Arc::new(Unique::new(seeder.next_u64() as u32, seeder.next_u64() as u32));
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
            let code = run_command(Source::Custom(events::factory(setup.clone())), &name, &o, driver)?;
            if let Some(f) = main_vm.function("done") {
                call(f)?;
            }
            Ok(code)
        }
        other => {
            if o.format == sb_options::Format::Text {
                println!("{}", report::version_line().trim_end());
            }
            if let Some((f, parallel)) = main_vm.command(other) {
                if parallel {
                    drop(f);
                    parallel_command(&setup, other, o.threads as usize, seed(&o))?;
                } else {
                    call(f)?;
                }
                return Ok(0);
            }
            match main_vm.function(other) {
                Some(f) => {
                    call(f)?;
                    Ok(0)
                }
                None => {
                    Err(Error::Other(format!("'{}' does not implement the '{other}' command", script.path.display())))
                }
            }
        }
    }
}

/// Runs a parallel command (`sysbench.cmdline.commands[name] = {f, PARALLEL_COMMAND}`) on `threads`
/// threads, each with its own state and `sysbench.tid`, as sysbench does; the first error fails it.
fn parallel_command(setup: &Arc<vm::Setup>, name: &str, threads: usize, seed: u64) -> Result<()> {
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|tid| {
                let setup = setup.clone();
                s.spawn(move || -> Result<()> {
                    let vm = vm::Vm::new(&setup, tid, seed.wrapping_add(tid as u64))?;
                    let (f, _) = vm.command(name).ok_or_else(|| Error::Other(format!("command '{name}' vanished")))?;
                    f.call::<()>(()).map_err(|e| vm::lua_error(&setup.script, e))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Other("a command thread panicked".into()))))
            .collect()
    });
    results.into_iter().collect()
}

/// The seed of a command's random numbers: `--rand-seed`, or the clock when it is 0.
fn seed(o: &sb_options::Options) -> u64 {
    if o.rand.seed != 0 {
        return o.rand.seed;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}
