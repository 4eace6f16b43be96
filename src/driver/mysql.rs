//! MySQL/MariaDB driver on the `mysql` crate (sync): one connection per OS thread, server-side prepared
//! statements held by the connection, caching_sha2_password over TCP or unix sockets.
//!
//! Connecting sends no query of its own (the crate would otherwise read `@@max_allowed_packet` and
//! `@@socket`), so the server's `Com_*` counters see only the workload, as with sysbench.

use std::sync::atomic::{AtomicUsize, Ordering};

use mysql::prelude::Queryable;
use mysql::{Conn, DriverError, Opts, OptsBuilder, Params, Statement, Value};

use super::{
    ConnectOptions, Connection, DbError, Driver, Endpoint, ErrorKind, LocalData, Outcome, Param, PsMode, Rows, StmtId,
};

/// Driver for MySQL-protocol servers.
pub struct MysqlDriver {
    options: ConnectOptions,
    cursor: AtomicUsize,
}

impl MysqlDriver {
    /// A driver connecting as `options` says.
    pub fn new(options: ConnectOptions) -> Self {
        MysqlDriver { options, cursor: AtomicUsize::new(0) }
    }

    fn opts_for(&self, endpoint: &Endpoint) -> Opts {
        let o = &self.options;
        let mut b = OptsBuilder::new()
            .user(Some(o.user.clone()))
            .pass(if o.password.is_empty() { None } else { Some(o.password.clone()) })
            .db_name(if o.db.is_empty() { None } else { Some(o.db.clone()) })
            .prefer_socket(false)
            .max_allowed_packet(Some(1 << 30))
            .stmt_cache_size(o.stmt_cache_size.max(32))
            .tcp_nodelay(true)
            .init(o.init.clone())
            .tcp_connect_timeout(Some(std::time::Duration::from_secs(o.connect_timeout_secs.max(1))));
        b = match endpoint {
            Endpoint::Tcp(h, p) => b.ip_or_hostname(Some(h.clone())).tcp_port(*p),
            Endpoint::Socket(s) => b.socket(Some(s.clone())),
        };
        if let Some(ssl) = o.tls.ssl_opts() {
            b = b.ssl_opts(ssl);
        }
        if o.compression {
            b = b.compress(Some(mysql::Compression::default()));
        }
        b.into()
    }

    /// Opens a connection to `endpoint`.
    pub fn open_endpoint(&self, endpoint: Endpoint) -> Result<Box<dyn Connection>, DbError> {
        let mut opts = self.opts_for(&endpoint);
        let conn = match Conn::new(opts.clone()) {
            // PREFERRED: plain when the server offers no TLS.
            Err(mysql::Error::DriverError(DriverError::TlsNotSupported))
                if self.options.tls.mode == super::tls::SslMode::Preferred =>
            {
                opts = OptsBuilder::from_opts(opts).ssl_opts(None::<mysql::SslOpts>).into();
                Conn::new(opts.clone())
            }
            r => r,
        }
        .map_err(|e| connect_error(&endpoint, e))?;
        Ok(Box::new(MysqlConnection {
            conn: Some(conn),
            opts,
            endpoint,
            ps_mode: self.options.ps_mode,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
}

impl Driver for MysqlDriver {
    fn connect(&self) -> Result<Box<dyn Connection>, DbError> {
        let n = self.cursor.fetch_add(1, Ordering::Relaxed);
        self.open_endpoint(self.options.endpoint(n))
    }

    fn connect_first(&self) -> Result<Box<dyn Connection>, DbError> {
        self.open_endpoint(self.options.endpoint(0))
    }

    fn name(&self) -> &'static str {
        "mysql"
    }

    fn max_connections(&self) -> Option<usize> {
        super::ask_max_connections(self)
    }
}

fn connect_error(endpoint: &Endpoint, e: mysql::Error) -> DbError {
    let (code, msg) = match e {
        mysql::Error::MySqlError(m) => (Some(m.code), m.message),
        mysql::Error::DriverError(DriverError::TlsNotSupported) => {
            (None, "the server offers no TLS; give it ssl_cert and ssl_key, or use --mysql-ssl=PREFERRED or off".into())
        }
        mysql::Error::TlsError(t) => (None, format!("TLS: {t}")),
        other => {
            let m = other.to_string();
            match m.find("invalid peer certificate") {
                // rustls's verdict, wrapped in the crate's I/O error.
                Some(i) => (
                    None,
                    format!(
                        "TLS: {}; check --mysql-ssl-ca and --mysql-host, or use --mysql-ssl=REQUIRED not to verify",
                        m[i..].trim_end_matches(['\'', '`', ' ', '}'])
                    ),
                ),
                None => (None, m),
            }
        }
    };
    DbError {
        kind: ErrorKind::Connect,
        code,
        message: format!("unable to connect to MySQL server on {endpoint}: {}", one_line(&msg)),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn map_error(e: mysql::Error) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => DbError::server(m.code, one_line(&m.message)),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) | mysql::Error::DriverError(_) => {
            DbError::lost(format!("Lost connection to server: {}", one_line(&e.to_string())))
        }
        #[allow(unreachable_patterns)]
        other => DbError { kind: ErrorKind::Client, code: None, message: one_line(&other.to_string()) },
    }
}

enum Kind {
    Prepared(Statement),
    Text,
}

struct Stmt {
    sql: String,
    kind: Kind,
}

/// A connection to a MySQL-protocol server.
pub struct MysqlConnection {
    conn: Option<Conn>,
    opts: Opts,
    endpoint: Endpoint,
    ps_mode: PsMode,
    stmts: Vec<Stmt>,
    text: String,
}

impl MysqlConnection {
    fn conn(&mut self) -> Result<&mut Conn, DbError> {
        self.conn.as_mut().ok_or_else(|| DbError::lost("not connected"))
    }

    fn prepare_kind(&mut self, sql: &str) -> Result<Kind, DbError> {
        if self.ps_mode == PsMode::Disable {
            return Ok(Kind::Text);
        }
        match self.conn()?.prep(sql) {
            Ok(s) => Ok(Kind::Prepared(s)),
            // ER_UNSUPPORTED_PS: the server cannot prepare this one (BEGIN on MySQL); emulate, as sysbench.
            Err(mysql::Error::MySqlError(m)) if m.code == 1295 => Ok(Kind::Text),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Maps an error and drops the connection when it is broken.
    fn fail(&mut self, e: mysql::Error) -> DbError {
        let err = map_error(e);
        if err.is_connection_lost() {
            self.conn = None;
        }
        err
    }
}

fn classify<T: mysql::prelude::Protocol>(mut res: mysql::QueryResult<'_, '_, '_, T>) -> Result<Outcome, mysql::Error> {
    let read = !res.columns().as_ref().is_empty();
    let affected = res.affected_rows();
    while let Some(set) = res.iter() {
        for row in set {
            row?;
        }
    }
    Ok(if read {
        Outcome::Read
    } else if affected > 0 {
        Outcome::Write
    } else {
        Outcome::Other
    })
}

/// Like [`classify`], and counts the rows fetched and changed, keeping the first column of the first row.
fn count_rows<T: mysql::prelude::Protocol>(
    mut res: mysql::QueryResult<'_, '_, '_, T>,
    keep: bool,
) -> Result<Rows, mysql::Error> {
    let read = !res.columns().as_ref().is_empty();
    let affected = res.affected_rows();
    let mut rows =
        Rows { affected, fields: res.columns().as_ref().len(), table: keep.then(Vec::new), ..Rows::default() };
    let mut first_set = true;
    while let Some(set) = res.iter() {
        for row in set {
            let row = row?;
            if !first_set {
                continue;
            }
            if rows.fetched == 0 {
                rows.first = row.as_ref(0).and_then(value_text);
            }
            rows.fetched += 1;
            if let Some(t) = rows.table.as_mut() {
                t.push((0..row.len()).map(|i| row.as_ref(i).and_then(value_text)).collect());
            }
        }
        first_set = false;
    }
    rows.outcome = Some(if read {
        Outcome::Read
    } else if affected > 0 {
        Outcome::Write
    } else {
        Outcome::Other
    });
    Ok(rows)
}

/// A column value as text, as the text protocol would send it; `None` for NULL.
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Double(d) => Some(d.to_string()),
        Value::Date(y, mo, d, h, mi, s, us) => Some(format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}")),
        Value::Time(neg, d, h, m, s, us) => {
            Some(format!("{}{}:{m:02}:{s:02}.{us:06}", if *neg { "-" } else { "" }, u64::from(*d) * 24 + u64::from(*h)))
        }
    }
}

fn to_values(params: &[Param<'_>]) -> Params {
    if params.is_empty() {
        return Params::Empty;
    }
    Params::Positional(
        params
            .iter()
            .map(|p| match p {
                Param::Int(v) => Value::Int(*v),
                Param::Str(s) => Value::Bytes(s.as_bytes().to_vec()),
                Param::Null => Value::NULL,
            })
            .collect(),
    )
}

impl Connection for MysqlConnection {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let kind = self.prepare_kind(sql)?;
        self.stmts.push(Stmt { sql: sql.to_string(), kind });
        Ok(StmtId(self.stmts.len() - 1))
    }

    fn execute(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        let stmt = &self.stmts[id.0];
        let result = match &stmt.kind {
            Kind::Prepared(s) => {
                let s = s.clone();
                let conn = self.conn()?;
                conn.exec_iter(&s, to_values(params)).and_then(classify)
            }
            Kind::Text => {
                let mut text = std::mem::take(&mut self.text);
                super::substitute(&self.stmts[id.0].sql, params, &mut text);
                let r = match self.conn() {
                    Ok(conn) => conn.query_iter(&text).and_then(classify),
                    Err(e) => {
                        self.text = text;
                        return Err(e);
                    }
                };
                self.text = text;
                r
            }
        };
        result.map_err(|e| self.fail(e))
    }

    fn query(&mut self, sql: &str) -> Result<Outcome, DbError> {
        let r = self.conn()?.query_iter(sql).and_then(classify);
        r.map_err(|e| self.fail(e))
    }

    fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        let r = self.conn()?.query_iter(sql).and_then(|res| count_rows(res, false));
        r.map_err(|e| self.fail(e))
    }

    fn query_table(&mut self, sql: &str) -> Result<Rows, DbError> {
        let r = self.conn()?.query_iter(sql).and_then(|res| count_rows(res, true));
        r.map_err(|e| self.fail(e))
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        self.conn = None;
        let conn = Conn::new(self.opts.clone()).map_err(|e| connect_error(&self.endpoint, e))?;
        self.conn = Some(conn);
        for i in 0..self.stmts.len() {
            let sql = self.stmts[i].sql.clone();
            self.stmts[i].kind = self.prepare_kind(&sql)?;
        }
        Ok(())
    }

    fn sql(&self, stmt: StmtId) -> &str {
        &self.stmts[stmt.0].sql
    }

    fn load_local(&mut self, sql: &str, mut data: LocalData) -> Result<Outcome, DbError> {
        let conn = self.conn()?;
        conn.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| data(w))));
        let r = conn.query_iter(sql).and_then(classify);
        conn.set_local_infile_handler(None);
        r.map_err(|e| self.fail(e))
    }
}
