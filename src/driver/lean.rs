//! versus's own lean client ([`super::wire`]): no row decoding, one buffer per connection. It handles
//! plain TCP and unix sockets with mysql_native_password and caching_sha2_password; for TLS,
//! compression and other authentication plugins it falls back to [`MysqlDriver`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::mysql::MysqlDriver;
use super::wire::{ConnectFailure, Wire};
use super::{
    ConnectOptions, Connection, DbError, Driver, Endpoint, LocalData, Multiplexed, Outcome, Param, PsMode, Rows, StmtId,
};

/// Driver using the lean client where it can.
pub struct LeanDriver {
    options: ConnectOptions,
    cursor: AtomicUsize,
    fallback: MysqlDriver,
    /// Never fall back (for measurements).
    strict: bool,
}

impl LeanDriver {
    /// A driver for `options`; `strict` disables the fallback to the mysql crate.
    pub fn new(options: ConnectOptions, strict: bool) -> Self {
        LeanDriver { fallback: MysqlDriver::new(options.clone()), options, cursor: AtomicUsize::new(0), strict }
    }

    fn open(&self, ep: Endpoint) -> Result<Box<dyn Connection>, DbError> {
        if self.options.tls.enabled() || self.options.compression {
            if self.strict {
                return Err(DbError::connect(format!(
                    "the lean client cannot connect to {ep}: it has no TLS or compression; use --client=auto"
                )));
            }
            return self.fallback.open_endpoint(ep);
        }
        match LeanConnection::connect(&self.options, ep.clone()) {
            Ok(c) => Ok(Box::new(c)),
            Err(ConnectFailure::Unsupported(why)) if self.strict => {
                Err(DbError::connect(format!("the lean client cannot connect to {ep}: {why}")))
            }
            Err(ConnectFailure::Unsupported(_)) => {
                // caching_sha2_password needs one full (RSA) authentication per user and server start;
                // the mysql crate does it, after which the lean client's fast path works.
                let c = self.fallback.open_endpoint(ep.clone())?;
                drop(c);
                match LeanConnection::connect(&self.options, ep.clone()) {
                    Ok(c) => Ok(Box::new(c)),
                    Err(_) => self.fallback.open_endpoint(ep),
                }
            }
            // Let the mysql crate report (or overcome) an authentication failure.
            Err(ConnectFailure::Failed(e)) if e.code == Some(1045) && !self.strict => self.fallback.open_endpoint(ep),
            Err(ConnectFailure::Failed(mut e)) => {
                e.message = format!("unable to connect to MySQL server on {ep}: {}", e.message);
                Err(e)
            }
        }
    }
}

impl Driver for LeanDriver {
    fn connect(&self) -> Result<Box<dyn Connection>, DbError> {
        let n = self.cursor.fetch_add(1, Ordering::Relaxed);
        self.open(self.options.endpoint(n))
    }

    fn connect_first(&self) -> Result<Box<dyn Connection>, DbError> {
        self.open(self.options.endpoint(0))
    }

    fn name(&self) -> &'static str {
        "lean"
    }

    fn max_connections(&self) -> Option<usize> {
        super::ask_max_connections(self)
    }
}

struct Stmt {
    sql: String,
    /// Server statement id; None when emulated as text.
    id: Option<u32>,
    /// The parameter types last sent for it on this connection (empty after a reconnect).
    bound: Vec<u8>,
}

fn not_connected() -> DbError {
    DbError::lost("not connected")
}

/// A connection of the lean client.
pub struct LeanConnection {
    wire: Option<Wire>,
    options: ConnectOptions,
    endpoint: Endpoint,
    stmts: Vec<Stmt>,
    text: String,
}

impl LeanConnection {
    fn open_wire(o: &ConnectOptions, ep: &Endpoint) -> Result<Wire, ConnectFailure> {
        let timeout = Duration::from_secs(o.connect_timeout_secs.max(1));
        let mut w = match ep {
            Endpoint::Tcp(h, p) => Wire::connect(h, *p, None, &o.user, &o.password, &o.db, timeout)?,
            Endpoint::Socket(s) => Wire::connect("localhost", 0, Some(s), &o.user, &o.password, &o.db, timeout)?,
        };
        for sql in &o.init {
            w.query(sql, None).map_err(ConnectFailure::Failed)?;
        }
        Ok(w)
    }

    fn connect(o: &ConnectOptions, ep: Endpoint) -> Result<Self, ConnectFailure> {
        let wire = Self::open_wire(o, &ep)?;
        Ok(LeanConnection {
            wire: Some(wire),
            options: o.clone(),
            endpoint: ep,
            stmts: Vec::new(),
            text: String::new(),
        })
    }

    fn wire(&mut self) -> Result<&mut Wire, DbError> {
        self.wire.as_mut().ok_or_else(not_connected)
    }

    fn check<T>(&mut self, r: Result<T, DbError>) -> Result<T, DbError> {
        if let Err(e) = &r
            && e.is_connection_lost()
        {
            self.wire = None;
        }
        r
    }

    fn prepare_id(&mut self, sql: &str) -> Result<Option<u32>, DbError> {
        if self.options.ps_mode == PsMode::Disable {
            return Ok(None);
        }
        let r = self.wire()?.prepare(sql);
        match self.check(r) {
            Ok((id, _)) => Ok(Some(id)),
            Err(e) if e.code == Some(1295) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends statement `stmt` (or its text emulation) without waiting; the caller checks the result
    /// (shared by [`Connection::execute`] and [`Multiplexed::send_execute`]). Inlined into both: as a call
    /// it cost execute 12 more instructions per statement than its own copy of this match had.
    #[inline(always)]
    fn send(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), DbError> {
        let s = &mut self.stmts[stmt.0];
        match (s.id, self.wire.as_mut()) {
            (Some(id), Some(w)) => w.send_execute(id, params, &mut s.bound),
            (Some(_), None) => Err(not_connected()),
            (None, _) => {
                let mut text = std::mem::take(&mut self.text);
                super::substitute(&self.stmts[stmt.0].sql, params, &mut text);
                let r = match self.wire() {
                    Ok(w) => w.send_query(&text),
                    Err(e) => Err(e),
                };
                self.text = text;
                r
            }
        }
    }
}

impl Connection for LeanConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let id = self.prepare_id(sql)?;
        self.stmts.push(Stmt { sql: sql.to_string(), id, bound: Vec::new() });
        Ok(StmtId(self.stmts.len() - 1))
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        let r = self.send(stmt, params).and_then(|()| self.wire()?.read_result(None));
        self.check(r)
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, DbError> {
        let r = self.wire()?.query(sql, None);
        self.check(r)
    }

    fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        let r = self.wire()?.query_rows(sql);
        self.check(r)
    }

    fn query_table(&mut self, sql: &str) -> Result<Rows, DbError> {
        let r = self.wire()?.query_table(sql);
        self.check(r)
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        if let Some(mut w) = self.wire.take() {
            w.quit();
        }
        let w = Self::open_wire(&self.options, &self.endpoint).map_err(|f| match f {
            ConnectFailure::Failed(e) => e,
            ConnectFailure::Unsupported(why) => DbError::connect(why),
        })?;
        self.wire = Some(w);
        for i in 0..self.stmts.len() {
            let sql = self.stmts[i].sql.clone();
            self.stmts[i].id = self.prepare_id(&sql)?;
            self.stmts[i].bound.clear();
        }
        Ok(())
    }

    fn sql(&self, stmt: StmtId) -> &str {
        &self.stmts[stmt.0].sql
    }

    fn load_local(&mut self, sql: &str, mut data: LocalData) -> Result<Outcome, DbError> {
        let r = self.wire()?.query(sql, Some(&mut data));
        self.check(r)
    }

    fn multiplexed(&mut self) -> Option<&mut dyn Multiplexed> {
        Some(self)
    }
}

impl Multiplexed for LeanConnection {
    fn send_execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), DbError> {
        let r = self.send(stmt, params);
        self.check(r)
    }

    fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        let r = self.wire()?.send_query(sql);
        self.check(r)
    }

    fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.wire.as_ref().map(|w| w.fd())
    }

    fn read_available(&mut self) -> Result<bool, DbError> {
        let r = self.wire()?.read_available();
        self.check(r)
    }

    fn take_result(&mut self) -> Option<Result<Outcome, DbError>> {
        let r = self.wire.as_mut()?.take_result()?;
        Some(self.check(r))
    }
}

impl Drop for LeanConnection {
    fn drop(&mut self) {
        if let Some(w) = self.wire.as_mut() {
            for s in &self.stmts {
                if let Some(id) = s.id {
                    let _ = w.close_statement(id);
                }
            }
            w.quit();
        }
    }
}
