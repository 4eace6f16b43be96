//! The connection object behind a script's `con` (the Lua side in `api.lua` gives it sysbench's
//! methods): queries with their rows, prepared statements, reconnects. Each method answers `true,
//! values…` or `false, kind, errno, state, message`, and the Lua side raises sysbench's error from it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mlua::{Lua, UserData, UserDataMethods, Value, Variadic};

use super::bridge::{self, Bare};
use super::ctx::Ctx;
use crate::driver::{Connection, Outcome, Param, StmtId};
use crate::error::Error;
use crate::workload::sysbench::oltp::{Abort, Exec};
use crate::workload::sysbench::session::Counts;

/// Which connection a script's `con` is.
enum Target {
    /// The worker's own connection, whose statements the run counts and whose errors it classifies
    /// (ignorable ones restart the event, lost connections reconnect): the first connection a script
    /// opens on a worker thread.
    Worker,
    /// A connection of the script's own (a second one, or any outside a measured run); `None` once
    /// disconnected. (In a mutex only because Lua values must be shareable; it is never contended.)
    Own(Option<std::sync::Mutex<Box<dyn Connection>>>),
}

/// A script's connection.
pub(super) struct RawCon {
    target: Target,
    cancel: Arc<AtomicBool>,
}

impl RawCon {
    /// The next connection for the script of `lua`: the worker's if it is still free, else a new one.
    pub(super) fn open(lua: &Lua) -> mlua::Result<RawCon> {
        let (take_worker, driver, cancel) = {
            let mut ctx = lua.app_data_mut::<Ctx>().ok_or_else(|| mlua::Error::runtime("no sysbench context"))?;
            let t = std::mem::take(&mut ctx.worker_free);
            (t, ctx.driver.clone(), ctx.cancel.clone())
        };
        if take_worker {
            return Ok(RawCon { target: Target::Worker, cancel });
        }
        let conn = driver.connect().map_err(|e| mlua::Error::runtime(format!("connection creation failed: {e}")))?;
        Ok(RawCon { target: Target::Own(Some(std::sync::Mutex::new(conn))), cancel })
    }

    /// Runs `f` on the executor of this connection.
    fn run<R>(&mut self, f: impl FnOnce(&mut dyn Exec) -> Result<R, Abort>) -> Result<R, Abort> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Abort::Fatal(Error::Other("another thread of this command failed".into())));
        }
        match &mut self.target {
            Target::Worker => bridge::current(f).unwrap_or_else(|| {
                Err(Abort::Fatal(Error::Other("the connection is used outside the thread that opened it".into())))
            }),
            Target::Own(Some(conn)) => {
                let conn = conn.get_mut().unwrap_or_else(|p| p.into_inner());
                let mut bare = Bare { conn: conn.as_mut(), counts: Default::default() };
                let r = f(&mut bare);
                let counts = bare.counts;
                bridge::current(|x| x.add_counts(&counts));
                r
            }
            Target::Own(None) => Err(Abort::Fatal(Error::Other("the connection was disconnected".into()))),
        }
    }

    /// `false, kind, errno, state, message` for `a`, which is kept for the Rust side. A server error that
    /// the script's `sysbench.hooks.sql_error_ignorable` calls ignorable restarts the event instead.
    fn failure(&mut self, lua: &Lua, a: Abort) -> mlua::Result<Answer> {
        let a = match a {
            Abort::Fatal(Error::Sql { code: Some(code), ref message, .. })
                if ignorable_by_script(lua, code, message)? =>
            {
                self.run(|x| {
                    x.add_counts(&Counts { errors: 1, ..Counts::default() });
                    Ok(())
                })
                .ok();
                return self.failure_as(lua, Abort::Restart, "restart", Some(code), String::new());
            }
            a => a,
        };
        let (kind, errno, msg) = match &a {
            Abort::Restart => {
                let e = self.run(|x| Ok(x.take_error())).ok().flatten();
                ("restart", e.as_ref().and_then(|e| e.code), e.map(|e| e.message).unwrap_or_default())
            }
            Abort::Stop => ("stop", None, "the run is stopping".to_string()),
            Abort::Fatal(Error::Sql { code, message, .. }) => ("fatal", *code, message.clone()),
            Abort::Fatal(e) => ("fatal", None, e.to_string()),
        };
        self.failure_as(lua, a, kind, errno, msg)
    }

    fn failure_as(&mut self, lua: &Lua, a: Abort, kind: &str, errno: Option<u16>, msg: String) -> mlua::Result<Answer> {
        bridge::set_pending(a);
        let text = |t: &str| lua.create_string(t).map(Value::String);
        Ok((false, text(kind)?, Value::Integer(i64::from(errno.unwrap_or(0))), text("")?, text(&msg)?))
    }

    /// `true, v` or the failure's answer.
    fn answer(&mut self, lua: &Lua, r: Result<Value, Abort>) -> mlua::Result<Answer> {
        match r {
            Ok(v) => Ok((true, v, Value::Nil, Value::Nil, Value::Nil)),
            Err(a) => self.failure(lua, a),
        }
    }
}

/// What every method answers: `true` and up to two values, or `false, kind, errno, state, message`. A
/// fixed tuple goes onto the Lua stack without an allocation.
type Answer = (bool, Value, Value, Value, Value);

/// Whether the script's `sysbench.hooks.sql_error_ignorable`, if it sets one, calls this error ignorable.
fn ignorable_by_script(lua: &Lua, code: u16, message: &str) -> mlua::Result<bool> {
    let hook = lua
        .globals()
        .get::<mlua::Table>("sysbench")
        .and_then(|sb| sb.get::<mlua::Table>("hooks"))
        .and_then(|h| h.get::<Option<mlua::Function>>("sql_error_ignorable"))
        .ok()
        .flatten();
    let Some(hook) = hook else { return Ok(false) };
    let err = lua.create_table()?;
    err.set("sql_errno", code)?;
    err.set("sql_state", "")?;
    err.set("sql_errmsg", message)?;
    hook.call::<bool>(err)
}

impl UserData for RawCon {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("query", |lua, this, sql: mlua::LuaString| {
            let sql = sql.to_str()?.to_string();
            match this.run(|x| x.query_table(&sql)) {
                Ok(r) if r.outcome == Some(Outcome::Read) => {
                    let rows = lua.create_table_with_capacity(r.table.as_ref().map_or(0, Vec::len), 0)?;
                    for (i, row) in r.table.unwrap_or_default().into_iter().enumerate() {
                        let t = lua.create_table_with_capacity(row.len(), 0)?;
                        for (j, v) in row.into_iter().enumerate() {
                            if let Some(v) = v {
                                t.raw_set(j + 1, v)?;
                            }
                        }
                        rows.raw_set(i + 1, t)?;
                    }
                    Ok((true, Value::Table(rows), Value::Integer(r.fields as i64), Value::Nil, Value::Nil))
                }
                Ok(_) => Ok((true, Value::Nil, Value::Integer(0), Value::Nil, Value::Nil)),
                Err(a) => this.failure(lua, a),
            }
        });
        m.add_method_mut("prepare", |lua, this, sql: mlua::LuaString| {
            let sql = sql.to_str()?.to_string();
            let r = this.run(|x| x.prepare(&sql)).map(|id| Value::Integer(id.0 as i64));
            this.answer(lua, r)
        });
        m.add_method_mut("execute", |lua, this, (id, values): (usize, Variadic<Value>)| {
            // Strings are bound where Lua keeps them, without a copy.
            let texts: Vec<mlua::BorrowedStr> = values
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.to_str()),
                    _ => None,
                })
                .collect::<mlua::Result<_>>()?;
            let mut next_text = texts.iter();
            let mut params = Vec::with_capacity(values.len());
            for v in values.iter() {
                params.push(match v {
                    Value::Integer(i) => Param::Int(*i),
                    // INT parameters take integers, as sysbench's C binding casts them; the API passes
                    // FLOAT and DOUBLE values as text.
                    Value::Number(n) => Param::Int(*n as i64),
                    Value::Boolean(b) => Param::Int(i64::from(*b)),
                    Value::String(_) => Param::Str(next_text.next().map(|t| &**t).unwrap_or("")),
                    Value::Nil => Param::Null,
                    other => {
                        return Err(mlua::Error::runtime(format!(
                            "a {} cannot be a statement parameter",
                            other.type_name()
                        )));
                    }
                });
            }
            let r = this.run(|x| x.exec(StmtId(id), &params)).map(|()| Value::Nil);
            this.answer(lua, r)
        });
        m.add_method_mut("reconnect", |lua, this, ()| {
            let r = this.run(|x| x.reconnect()).map(|()| Value::Nil);
            this.answer(lua, r)
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            // The worker's connection belongs to the run, which closes it at the end.
            if let Target::Own(c) = &mut this.target {
                c.take();
            }
            Ok(())
        });
    }
}
