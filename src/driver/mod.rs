//! Database drivers: one connection per OS thread, prepared statements held by the connection.
//!
//! A workload talks to a [`Connection`] through statement handles ([`StmtId`]) and borrowed parameters
//! ([`Param`]), and learns from every execution only what sysbench counts: whether the statement returned a
//! result set ([`Outcome::Read`]), changed rows ([`Outcome::Write`]) or neither ([`Outcome::Other`]).
//! [`mysql::MysqlDriver`] and [`lean::LeanDriver`] talk to MySQL/MariaDB; [`dry_run::DryRunDriver`] serves
//! `--mysql-dry-run`; `mock::MockDriver` (with the `test-support` feature, for the tests only) is a
//! deterministic stand-in for scheduler and report tests.

mod auth;
pub mod dry_run;
mod encode;
pub mod follow;
pub mod lean;
#[cfg(any(test, feature = "test-support"))]
pub mod mock;
pub mod mysql;
mod packet;
mod response;
mod stream;
pub mod tls;
pub mod wire;

use std::fmt;

/// Handle of a statement prepared on a [`Connection`]; valid for the life of that connection, across
/// reconnects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StmtId(pub usize);

/// A parameter bound to a `?` placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param<'a> {
    /// An integer, bound as BIGINT (as sysbench does).
    Int(i64),
    /// A string, bound as VARCHAR; in text mode written in single quotes without escaping, as sysbench
    /// does (the workloads only send digits and dashes).
    Str(&'a str),
    /// SQL NULL (a Lua script's `param:set(nil)`).
    Null,
}

/// How a successful statement is counted, by sysbench's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The statement returned a result set (a SELECT), whatever the number of rows.
    Read,
    /// No result set and at least one affected row.
    Write,
    /// No result set and no affected row (BEGIN, COMMIT, an UPDATE that changed nothing).
    Other,
}

/// How statements are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PsMode {
    /// Server-side prepared statements, falling back to text for statements the server cannot prepare.
    #[default]
    Auto,
    /// Text protocol with the parameters written into the statement.
    Disable,
}

/// What one statement returned and changed, counted (for workloads that check their own results, such
/// as the Insert Benchmark).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    /// How the statement is counted.
    pub outcome: Option<Outcome>,
    /// Rows in its result set (0 without one).
    pub fetched: u64,
    /// Rows it changed.
    pub affected: u64,
    /// The first column of the first row as text; `None` when there is no row or the value is NULL.
    pub first: Option<String>,
    /// Columns of the first result set (0 without one).
    pub fields: usize,
    /// Every row of the first result set as text (`None` for NULL), kept only when asked for through
    /// [`Connection::query_table`]; `None` otherwise.
    pub table: Option<Vec<Vec<Option<String>>>>,
}

/// What kind of failure a [`DbError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The server answered with an error code.
    Server,
    /// The connection broke (server gone, lost, reset); a reconnect may cure it.
    ConnectionLost,
    /// Connecting or authenticating failed.
    Connect,
    /// Anything else from the client library.
    Client,
}

/// An error from a driver, with the server's error code when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The MySQL error number (server errors, and 2013 & co. for lost connections).
    pub code: Option<u16>,
    /// The message, one line.
    pub message: String,
}

impl DbError {
    /// A server error with `code`.
    pub fn server(code: u16, message: impl Into<String>) -> Self {
        DbError { kind: ErrorKind::Server, code: Some(code), message: message.into() }
    }

    /// A lost connection (reported as CR_SERVER_LOST, 2013).
    pub fn lost(message: impl Into<String>) -> Self {
        DbError { kind: ErrorKind::ConnectionLost, code: Some(2013), message: message.into() }
    }

    /// A connection failure.
    pub fn connect(message: impl Into<String>) -> Self {
        DbError { kind: ErrorKind::Connect, code: None, message: message.into() }
    }

    /// True when the error means the connection is gone: a lost-connection kind, or one of the client
    /// codes sysbench reconnects on (2006, 2011, 2013, 2055).
    pub fn is_connection_lost(&self) -> bool {
        self.kind == ErrorKind::ConnectionLost || matches!(self.code, Some(2006 | 2011 | 2013 | 2055))
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "error {code}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Where to connect: the sysbench `--mysql-*` connection options.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConnectOptions {
    /// Host names or addresses, used round robin with `ports`.
    pub hosts: Vec<String>,
    /// TCP ports.
    pub ports: Vec<u16>,
    /// Unix socket paths; when non-empty, hosts and ports are ignored.
    pub sockets: Vec<String>,
    /// User name.
    pub user: String,
    /// Password (empty for none).
    #[serde(skip_serializing)]
    pub password: String,
    /// Default database (empty for none).
    pub db: String,
    /// TLS mode and certificate files.
    pub tls: tls::Tls,
    /// Ask for protocol compression.
    pub compression: bool,
    /// How statements are sent.
    pub ps_mode: PsMode,
    /// Prepared-statement cache entries per connection (at least the statements a worker holds).
    pub stmt_cache_size: usize,
    /// Statements run on every new connection, reconnects included.
    pub init: Vec<String>,
    /// Give up connecting after this many seconds (sysbench's `--thread-init-timeout`).
    pub connect_timeout_secs: u64,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            hosts: vec!["localhost".into()],
            ports: vec![3306],
            sockets: Vec::new(),
            user: "sbtest".into(),
            password: String::new(),
            db: "sbtest".into(),
            tls: tls::Tls::default(),
            compression: false,
            ps_mode: PsMode::Auto,
            stmt_cache_size: 64,
            init: Vec::new(),
            connect_timeout_secs: 30,
        }
    }
}

/// One endpoint chosen from [`ConnectOptions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP host and port.
    Tcp(String, u16),
    /// Unix socket path.
    Socket(String),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp(h, p) => write!(f, "host '{h}', port {p}"),
            Endpoint::Socket(s) => write!(f, "socket '{s}'"),
        }
    }
}

impl ConnectOptions {
    /// The `n`-th endpoint of sysbench's round robin: ports advance fastest, then hosts; sockets alone when
    /// given.
    pub fn endpoint(&self, n: usize) -> Endpoint {
        if !self.sockets.is_empty() {
            return Endpoint::Socket(self.sockets[n % self.sockets.len()].clone());
        }
        let ports = if self.ports.is_empty() { &[3306][..] } else { &self.ports[..] };
        let hosts: Vec<&str> =
            if self.hosts.is_empty() { vec!["localhost"] } else { self.hosts.iter().map(|s| s.as_str()).collect() };
        let n = n % (ports.len() * hosts.len());
        Endpoint::Tcp(hosts[n / ports.len()].to_string(), ports[n % ports.len()])
    }
}

/// A connection used by one worker thread.
pub trait Connection: Send {
    /// Prepares `sql` (with `?` placeholders) and returns its handle. Under [`PsMode::Disable`], or when
    /// the server cannot prepare it, the statement is kept as text and its parameters are substituted at
    /// execution.
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError>;
    /// Executes a prepared statement, buffering and discarding any rows.
    fn execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError>;
    /// Sends `sql` over the text protocol, buffering and discarding any rows.
    fn query(&mut self, sql: &str) -> Result<Outcome, DbError>;
    /// Sends `sql` over the text protocol and counts what it returned and changed. Drivers that cannot
    /// count answer with the [`Outcome`] alone (counts 0).
    fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        self.query(sql).map(|o| Rows { outcome: Some(o), ..Rows::default() })
    }
    /// Sends `sql` over the text protocol and keeps every row of its first result set as text (what a
    /// sysbench Lua script's `con:query` hands the script). Drivers that cannot keep rows say so.
    fn query_table(&mut self, sql: &str) -> Result<Rows, DbError> {
        let _ = sql;
        Err(DbError { kind: ErrorKind::Client, code: None, message: "this driver does not return rows".into() })
    }
    /// Reconnects to the same endpoint and prepares every statement again, keeping the handles valid.
    fn reconnect(&mut self) -> Result<(), DbError>;
    /// The SQL text of a prepared statement (for error messages).
    fn sql(&self, stmt: StmtId) -> &str;
    /// Runs a `LOAD DATA LOCAL INFILE` statement, streaming the file's bytes from `data`. Drivers
    /// without LOCAL INFILE support answer with an [`ErrorKind::Client`] error.
    fn load_local(&mut self, sql: &str, data: LocalData) -> Result<Outcome, DbError> {
        let _ = (sql, data);
        Err(DbError { kind: ErrorKind::Client, code: None, message: "LOAD DATA LOCAL INFILE is not supported".into() })
    }
    /// The non-blocking interface for event-loop workers, when the connection has one.
    fn multiplexed(&mut self) -> Option<&mut dyn Multiplexed> {
        None
    }
}

/// A connection driven by an event loop: send a statement, poll the descriptor, read what arrived, take
/// the response once complete. One statement at a time per connection, as in the blocking interface.
pub trait Multiplexed {
    /// Sends a prepared statement (or its text emulation) without waiting.
    fn send_execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), DbError>;
    /// Sends a text query without waiting.
    fn send_query(&mut self, sql: &str) -> Result<(), DbError>;
    /// The descriptor to poll for readability.
    fn fd(&self) -> Option<std::os::fd::RawFd>;
    /// Reads what the socket has; call when poll reports it readable. True when the read filled the
    /// buffer, so that more bytes may be waiting (an edge-triggered wait would not report them again).
    fn read_available(&mut self) -> Result<bool, DbError>;
    /// The next complete response, if one has arrived.
    fn take_result(&mut self) -> Option<Result<Outcome, DbError>>;
}

/// A producer of `LOAD DATA LOCAL INFILE` bytes.
pub type LocalData = Box<dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()> + Send>;

/// Opens connections.
pub trait Driver: Send + Sync {
    /// Opens the next connection of the round robin.
    fn connect(&self) -> Result<Box<dyn Connection>, DbError>;
    /// Opens a connection to the first endpoint, without advancing the round robin (sysbench's prepare
    /// and cleanup do not iterate over hosts).
    fn connect_first(&self) -> Result<Box<dyn Connection>, DbError>;
    /// A short name (`mysql`, `mock`).
    fn name(&self) -> &'static str;
    /// The server's `max_connections`, asked over one connection to the first endpoint; `None` when
    /// the driver has no server (the mock) or the server cannot be asked.
    fn max_connections(&self) -> Option<usize> {
        None
    }
}

/// [`Driver::max_connections`] of a driver with a server: one query over a connection of its own.
pub fn ask_max_connections(driver: &dyn Driver) -> Option<usize> {
    let mut conn = driver.connect_first().ok()?;
    conn.query_rows("SELECT @@max_connections").ok()?.first?.trim().parse().ok()
}

/// Writes `sql` with every `?` replaced by the literal text of the next parameter, as sysbench's
/// client-side emulation does (strings quoted, not escaped).
pub fn substitute(sql: &str, params: &[Param<'_>], out: &mut String) {
    out.clear();
    let mut it = params.iter();
    for (i, part) in sql.split('?').enumerate() {
        if i > 0 {
            match it.next() {
                Some(Param::Int(v)) => {
                    use std::fmt::Write;
                    let _ = write!(out, "{v}");
                }
                Some(Param::Str(s)) => {
                    out.push('\'');
                    out.push_str(s);
                    out.push('\'');
                }
                Some(Param::Null) => out.push_str("NULL"),
                None => out.push('?'),
            }
        }
        out.push_str(part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitute_writes_literals() {
        let mut s = String::new();
        substitute("UPDATE t SET c=? WHERE id=?", &[Param::Str("1-2"), Param::Int(-5)], &mut s);
        assert_eq!(s, "UPDATE t SET c='1-2' WHERE id=-5");
        substitute("BEGIN", &[], &mut s);
        assert_eq!(s, "BEGIN");
    }

    #[test]
    fn round_robin_advances_ports_then_hosts() {
        let o =
            ConnectOptions { hosts: vec!["h1".into(), "h2".into()], ports: vec![1, 2], ..ConnectOptions::default() };
        let got: Vec<Endpoint> = (0..5).map(|n| o.endpoint(n)).collect();
        let tcp = |h: &str, p| Endpoint::Tcp(h.into(), p);
        assert_eq!(got, vec![tcp("h1", 1), tcp("h1", 2), tcp("h2", 1), tcp("h2", 2), tcp("h1", 1)]);
        let s = ConnectOptions { sockets: vec!["/a".into(), "/b".into()], ..o };
        assert_eq!(s.endpoint(3), Endpoint::Socket("/b".into()));
    }

    #[test]
    fn lost_connection_codes() {
        assert!(DbError::server(2006, "gone").is_connection_lost());
        assert!(DbError::lost("x").is_connection_lost());
        assert!(!DbError::server(1213, "deadlock").is_connection_lost());
    }
}
