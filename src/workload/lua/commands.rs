//! The commands other than `run`: a script's `sysbench.cmdline.commands` (parallel ones on every
//! thread, each with its own state) and its global functions (`prepare`, `cleanup`, …).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::vm::{self, Setup};
use crate::error::{Error, Result};
use crate::workload::sysbench::options::Options;

/// Runs command `name` other than `run`: the script's `sysbench.cmdline.commands[name]` (on every
/// thread when it is parallel), or its global function of that name (`prepare`, `cleanup`, …).
pub(super) fn run_named(setup: &Arc<Setup>, name: &str, threads: usize, seed: u64) -> Result<()> {
    let main_vm = vm::Vm::new(setup, 0, seed)?;
    let call = |f: mlua::Function| f.call::<()>(()).map_err(|e| vm::lua_error(&setup.script, e));
    if let Some((f, parallel)) = main_vm.command(name) {
        if parallel {
            drop(f);
            return on_every_thread(setup, name, threads, seed);
        }
        return call(f);
    }
    match main_vm.function(name) {
        Some(f) => call(f),
        None => Err(Error::Other(format!("'{}' does not implement the '{name}' command", setup.script.path.display()))),
    }
}

/// Runs a parallel command (`sysbench.cmdline.commands[name] = {f, PARALLEL_COMMAND}`) on `threads`
/// threads, each with its own state and `sysbench.tid`, as sysbench does; the first error fails it.
fn on_every_thread(setup: &Arc<Setup>, name: &str, threads: usize, seed: u64) -> Result<()> {
    // Each thread's result, and whether it was the first to fail (the others then fail on `cancel`).
    let results: Vec<(Result<()>, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|tid| {
                let setup = setup.clone();
                s.spawn(move || {
                    let r = (|| -> Result<()> {
                        let vm = vm::Vm::new(&setup, tid, seed.wrapping_add(tid as u64))?;
                        let (f, _) =
                            vm.command(name).ok_or_else(|| Error::Other(format!("command '{name}' vanished")))?;
                        f.call::<()>(()).map_err(|e| vm::lua_error(&setup.script, e))
                    })();
                    let first = r.is_err()
                        && setup.cancel.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).is_ok();
                    (r, first)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| (Err(Error::Other("a command thread panicked".into())), true)))
            .collect()
    });
    let mut errors: Vec<(Error, bool)> =
        results.into_iter().filter_map(|(r, first)| r.err().map(|e| (e, first))).collect();
    errors.sort_by_key(|(_, first)| !first);
    match errors.into_iter().next() {
        Some((e, _)) => Err(e),
        None => Ok(()),
    }
}

/// The seed of a command's random numbers: `--rand-seed`, or the clock when it is 0.
pub(super) fn seed(o: &Options) -> u64 {
    if o.rand.seed != 0 {
        return o.rand.seed;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}
