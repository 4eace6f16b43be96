//! A script's `event` as the events of a run's worker: one Lua state per worker, `thread_init` on the
//! worker's connection before the clock starts, `event` per event, `thread_done` at the end, and
//! sysbench's rule for errors (an ignorable one calls `before_restart_event` and runs the event again).

use std::sync::Arc;

use mlua::{Function, Value};

use super::bridge::{self, Bare};
use super::vm::{Setup, Vm, lua_error};
use crate::driver::{Connection, DbError, ErrorKind};
use crate::error::Error;
use crate::workload::sysbench::oltp::{Abort, Exec};
use crate::workload::sysbench::runner::{EventFactory, Events};

/// One worker's script.
struct ScriptEvents {
    vm: Vm,
    tid: usize,
    setup: Arc<Setup>,
    event: Function,
}

/// A worker whose state could not be made: it fails where the run reports failed starts.
struct Broken(String);

impl Events for Broken {
    fn prepare(&mut self, _conn: &mut dyn Connection) -> Result<(), DbError> {
        Err(DbError { kind: ErrorKind::Client, code: None, message: self.0.clone() })
    }

    fn event(&mut self, _x: &mut dyn Exec) -> Result<(), Abort> {
        Err(Abort::Stop)
    }
}

/// Makes each worker's events: a state of its own with the script loaded.
pub(super) fn factory(setup: Arc<Setup>) -> Arc<EventFactory> {
    Arc::new(move |tid, seed| -> Box<dyn Events> {
        let vm = match Vm::new(&setup, tid, seed) {
            Ok(vm) => vm,
            Err(e) => return Box::new(Broken(e.to_string())),
        };
        match vm.function("event") {
            Some(event) => Box::new(ScriptEvents { vm, tid, setup: setup.clone(), event }),
            None => {
                Box::new(Broken(format!("{}: the script defines no event() function", setup.script.path.display())))
            }
        }
    })
}

impl ScriptEvents {
    fn fail(&self, e: mlua::Error) -> Abort {
        Abort::Fatal(lua_error(&self.setup.script, e))
    }

    /// What stopped a failed call: the statement's reason when there is one, else the Lua error.
    fn aborted(&self, e: mlua::Error) -> Abort {
        match bridge::take_pending() {
            Some(Abort::Restart) => {
                if let Some(hook) = self.vm.hook("before_restart_event") {
                    let err = self.vm.last_error();
                    // Still inside the event's call: its executor is the current one.
                    if let Err(e) = hook.call::<()>(err) {
                        return self.fail(e);
                    }
                }
                Abort::Restart
            }
            Some(a) => a,
            None => self.fail(e),
        }
    }
}

impl Events for ScriptEvents {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), DbError> {
        let Some(init) = self.vm.function("thread_init") else { return Ok(()) };
        self.vm.offer_worker_connection(true);
        let mut bare = Bare { conn, counts: Default::default() };
        let r = bridge::with_current(&mut bare, || init.call::<()>(self.tid));
        self.vm.offer_worker_connection(false);
        bridge::take_pending();
        r.map_err(|e| DbError {
            kind: ErrorKind::Client,
            code: None,
            message: format!("thread_init: {}", lua_error(&self.setup.script, e)),
        })
    }

    fn event(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        bridge::take_pending();
        let r = bridge::with_current(x, || self.event.call::<Value>(self.tid).map_err(|e| self.aborted(e)));
        match r {
            Ok(Value::Boolean(true)) => Err(Abort::Stop),
            Ok(_) => Ok(()),
            Err(a) => Err(a),
        }
    }

    fn done(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let Some(done) = self.vm.function("thread_done") else { return Ok(()) };
        bridge::take_pending();
        bridge::with_current(x, || done.call::<()>(self.tid)).map_err(|e| match bridge::take_pending() {
            Some(Abort::Fatal(err)) => Abort::Fatal(err),
            _ => Abort::Fatal(Error::Other(format!("thread_done: {}", lua_error(&self.setup.script, e)))),
        })
    }
}
