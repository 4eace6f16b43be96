//! The MySQL client/server protocol, just what a load generator needs: handshake with
//! mysql_native_password or caching_sha2_password (fast path; full authentication over a unix socket),
//! COM_QUERY, COM_STMT_PREPARE/EXECUTE/CLOSE, LOCAL INFILE, and responses read by skipping row packets
//! without decoding them.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::auth::scramble;
pub use super::encode::{execute_payload, frame_command};
use super::encode::{frame, put_lenenc};
pub use super::packet::{ConnectFailure, parse_err};
use super::packet::{MAX_PAYLOAD, MORE_RESULTS, column_defs, first_text, lenenc, text_row};
use super::response::{Scanned, scan};
use super::stream::Stream;
use super::{DbError, ErrorKind, Outcome, Param};

const LONG_PASSWORD: u32 = 1;
const LONG_FLAG: u32 = 4;
const CONNECT_WITH_DB: u32 = 8;
const LOCAL_FILES: u32 = 0x80;
const PROTOCOL_41: u32 = 0x200;
const TRANSACTIONS: u32 = 0x2000;
const SECURE_CONNECTION: u32 = 0x8000;
const MULTI_STATEMENTS: u32 = 0x1_0000;
const MULTI_RESULTS: u32 = 0x2_0000;
const PS_MULTI_RESULTS: u32 = 0x4_0000;
const PLUGIN_AUTH: u32 = 0x8_0000;
const PLUGIN_AUTH_LENENC: u32 = 0x20_0000;
/// MariaDB's extended capability (bit 36, the 5th of the extended word): the server sends a prepared
/// statement's result-set metadata only when it changed, as libmariadb asks (MariaDB 10.6 and later).
const CACHE_METADATA_EXT: u32 = 1 << 4;

/// A connected, authenticated protocol session.
pub struct Wire {
    stream: Stream,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    big: Vec<u8>,
    wbuf: Vec<u8>,
    seq: u8,
    /// MariaDB's metadata caching was agreed: column count packets carry a metadata-follows byte.
    cache_metadata: bool,
}

/// Empties `w` and reserves a packet header at its start, for a command's payload to follow.
#[inline]
fn start_command(w: &mut Vec<u8>) {
    w.clear();
    w.extend_from_slice(&[0; 4]);
}

/// Completes the command that `w` holds (a header reserved by [`start_command`], then the payload): fills
/// in the header, or frames a payload of 16 MiB or more into several packets. Returns the sequence number
/// of the response's first packet.
#[inline]
#[unsafe(link_section = ".text.hot.versus")]
fn seal_command(w: &mut Vec<u8>) -> u8 {
    let len = w.len() - 4;
    if len < MAX_PAYLOAD {
        w[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        1
    } else {
        let payload = w.split_off(4);
        w.clear();
        frame(w, &payload, 0)
    }
}

fn lost(e: io::Error) -> DbError {
    DbError::lost(format!("Lost connection to server: {e}"))
}

impl Wire {
    fn new(stream: Stream) -> Self {
        Wire {
            stream,
            rbuf: vec![0; 64 * 1024],
            rpos: 0,
            rend: 0,
            big: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            seq: 0,
            cache_metadata: false,
        }
    }

    /// Connects to TCP `host:port` or the unix `socket`, and authenticates.
    pub fn connect(
        host: &str,
        port: u16,
        socket: Option<&str>,
        user: &str,
        password: &str,
        db: &str,
        timeout: Duration,
    ) -> Result<Wire, ConnectFailure> {
        let failed = |e: io::Error| ConnectFailure::Failed(DbError::connect(e.to_string()));
        let stream = match socket {
            Some(path) => Stream::Unix(UnixStream::connect(path).map_err(failed)?),
            None => {
                use std::net::ToSocketAddrs;
                let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(failed)?.collect();
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                let mut s = None;
                for a in addrs {
                    match TcpStream::connect_timeout(&a, timeout) {
                        Ok(t) => {
                            s = Some(t);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let t = s.ok_or_else(|| failed(last))?;
                t.set_nodelay(true).map_err(failed)?;
                Stream::Tcp(t)
            }
        };
        let mut w = Wire::new(stream);
        w.handshake(user, password, db, socket.is_some())?;
        Ok(w)
    }

    fn handshake(&mut self, user: &str, password: &str, db: &str, secure: bool) -> Result<(), ConnectFailure> {
        let f = ConnectFailure::Failed;
        let p = self.read_packet().map_err(f)?.to_vec();
        if p.first() == Some(&0xFF) {
            return Err(f(parse_err(&p)));
        }
        let bad = || ConnectFailure::Unsupported("unexpected handshake".into());
        let mut i = 1 + p.get(1..).and_then(|r| r.iter().position(|&b| b == 0)).ok_or_else(bad)? + 1;
        i += 4; // connection id
        let mut nonce = p.get(i..i + 8).ok_or_else(bad)?.to_vec();
        i += 9;
        let caps_lo = u16::from_le_bytes([p[i], p[i + 1]]) as u32;
        i += 2 + 1 + 2;
        let caps_hi = p.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u32).unwrap_or(0);
        let server_caps = caps_lo | (caps_hi << 16);
        let auth_len = p.get(i + 2).copied().unwrap_or(0) as usize;
        // MariaDB (no CLIENT_MYSQL, which is LONG_PASSWORD's bit) puts its extended capabilities in the last
        // 4 of the 10 reserved bytes.
        let mariadb = server_caps & LONG_PASSWORD == 0;
        let server_ext = match p.get(i + 9..i + 13) {
            Some(b) if mariadb => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            _ => 0,
        };
        i += 3 + 10;
        let part2 = auth_len.saturating_sub(8).max(13);
        if let Some(rest) = p.get(i..(i + part2).min(p.len())) {
            nonce.extend_from_slice(rest.strip_suffix(&[0]).unwrap_or(rest));
        }
        i += part2;
        let plugin =
            p.get(i..).map(|r| String::from_utf8_lossy(r.split(|&b| b == 0).next().unwrap_or(&[])).into_owned());
        let plugin = plugin.filter(|s| !s.is_empty()).unwrap_or_else(|| "mysql_native_password".into());
        let want = LONG_PASSWORD
            | LONG_FLAG
            | LOCAL_FILES
            | PROTOCOL_41
            | TRANSACTIONS
            | SECURE_CONNECTION
            | MULTI_STATEMENTS
            | MULTI_RESULTS
            | PS_MULTI_RESULTS
            | PLUGIN_AUTH
            | PLUGIN_AUTH_LENENC
            | if db.is_empty() { 0 } else { CONNECT_WITH_DB };
        if server_caps & PROTOCOL_41 == 0 || server_caps & PLUGIN_AUTH == 0 {
            return Err(ConnectFailure::Unsupported("pre-4.1 server".into()));
        }
        let ext = server_ext & CACHE_METADATA_EXT;
        let mut caps = want & (server_caps | LONG_PASSWORD);
        if ext != 0 {
            // A MariaDB client: the server reads the extended word only when CLIENT_MYSQL is not set.
            caps &= !LONG_PASSWORD;
        }
        self.cache_metadata = ext != 0;
        let auth = scramble(&plugin, password, &nonce)?;
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(&caps.to_le_bytes());
        out.extend_from_slice(&(1u32 << 30).to_le_bytes());
        out.push(45); // utf8mb4_general_ci
        out.extend_from_slice(&[0; 19]);
        out.extend_from_slice(&ext.to_le_bytes());
        out.extend_from_slice(user.as_bytes());
        out.push(0);
        put_lenenc(&mut out, auth.len() as u64);
        out.extend_from_slice(&auth);
        if caps & CONNECT_WITH_DB != 0 {
            out.extend_from_slice(db.as_bytes());
            out.push(0);
        }
        out.extend_from_slice(plugin.as_bytes());
        out.push(0);
        self.seq = 1;
        self.send_payload(&out).map_err(|e| f(lost(e)))?;
        let mut plugin = plugin;
        loop {
            let p = self.read_packet().map_err(f)?.to_vec();
            match p.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => {
                    let mut e = parse_err(&p);
                    e.kind = ErrorKind::Connect;
                    return Err(f(e));
                }
                Some(0xFE) => {
                    // Auth switch: new plugin and nonce.
                    let rest = &p[1..];
                    let name_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    plugin = String::from_utf8_lossy(&rest[..name_end]).into_owned();
                    let data = rest.get(name_end + 1..).unwrap_or(&[]);
                    let nonce = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
                    let auth = scramble(&plugin, password, &nonce)?;
                    self.send_payload(&auth).map_err(|e| f(lost(e)))?;
                }
                Some(0x01) if plugin == "caching_sha2_password" => match p.get(1) {
                    Some(3) => {} // fast auth succeeded, OK follows
                    Some(4) if secure => {
                        let mut pw = password.as_bytes().to_vec();
                        pw.push(0);
                        self.send_payload(&pw).map_err(|e| f(lost(e)))?;
                    }
                    _ => return Err(ConnectFailure::Unsupported("caching_sha2_password full authentication".into())),
                },
                _ => return Err(ConnectFailure::Unsupported(format!("auth plugin {plugin} exchange"))),
            }
        }
    }

    fn fill(&mut self, need: usize) -> Result<(), DbError> {
        while self.rend - self.rpos < need {
            if self.rpos > 0 && self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            }
            if self.rpos + need > self.rbuf.len() {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
                if need > self.rbuf.len() {
                    self.rbuf.resize(need.next_power_of_two(), 0);
                }
            }
            let n = self.stream.read(&mut self.rbuf[self.rend..]).map_err(lost)?;
            if n == 0 {
                return Err(DbError::lost("Lost connection to server: connection closed"));
            }
            self.rend += n;
        }
        Ok(())
    }

    /// Reads one packet's payload (joining 16 MiB continuation packets).
    #[inline]
    pub fn read_packet(&mut self) -> Result<&[u8], DbError> {
        // The common case: the whole packet is already buffered (one read brings a whole response).
        if let Some(h) = self.rbuf.get(self.rpos..self.rpos + 4)
            && self.rpos + 4 <= self.rend
        {
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            let start = self.rpos + 4;
            if len < MAX_PAYLOAD && start + len <= self.rend {
                self.seq = h[3].wrapping_add(1);
                self.rpos = start + len;
                return Ok(&self.rbuf[start..start + len]);
            }
        }
        self.read_packet_slow()
    }

    #[inline(never)]
    fn read_packet_slow(&mut self) -> Result<&[u8], DbError> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        self.rpos += 4;
        if len < MAX_PAYLOAD {
            self.fill(len)?;
            let start = self.rpos;
            self.rpos += len;
            return Ok(&self.rbuf[start..start + len]);
        }
        self.big.clear();
        let mut len = len;
        loop {
            self.fill(len)?;
            self.big.extend_from_slice(&self.rbuf[self.rpos..self.rpos + len]);
            self.rpos += len;
            if len < MAX_PAYLOAD {
                return Ok(&self.big);
            }
            self.fill(4)?;
            let h = &self.rbuf[self.rpos..self.rpos + 4];
            len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            self.rpos += 4;
        }
    }

    fn send_payload(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut wbuf = std::mem::take(&mut self.wbuf);
        wbuf.clear();
        self.seq = frame(&mut wbuf, payload, self.seq);
        let r = self.stream.write_all(&wbuf);
        self.wbuf = wbuf;
        r
    }

    /// Sends a command whose payload is `cmd` followed by `body`.
    fn command(&mut self, cmd: u8, body: &[u8]) -> Result<(), DbError> {
        self.send_command(|w| {
            w.push(cmd);
            w.extend_from_slice(body);
        })
        .map_err(lost)
    }

    /// Sends a command whose payload `put` appends, encoded straight after the packet header in the
    /// write buffer (one copy, no allocation); a payload of 16 MiB or more is framed into several packets.
    fn send_command(&mut self, put: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        start_command(&mut self.wbuf);
        put(&mut self.wbuf);
        self.seq = seal_command(&mut self.wbuf);
        self.stream.write_all(&self.wbuf)
    }

    /// COM_QUERY; returns how sysbench counts the statement.
    pub fn query(&mut self, sql: &str, local: Option<&mut super::LocalData>) -> Result<Outcome, DbError> {
        self.command(0x03, sql.as_bytes())?;
        self.read_result(local)
    }

    /// COM_STMT_PREPARE; returns the statement id and its parameter count.
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, u16), DbError> {
        self.command(0x16, sql.as_bytes())?;
        let p = self.read_packet()?;
        if p.first() == Some(&0xFF) {
            return Err(parse_err(p));
        }
        if p.len() < 9 {
            return Err(DbError::lost("malformed COM_STMT_PREPARE response"));
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let cols = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        for n in [params, cols] {
            if n > 0 {
                for _ in 0..=n {
                    self.read_packet()?; // definitions, then EOF
                }
            }
        }
        Ok((id, params))
    }

    /// Sends COM_STMT_EXECUTE without waiting for the response.
    /// `bound`: the parameter types last sent for this statement on this connection (empty at first), which
    /// are sent again only when they change, as libmariadb and libmysqlclient do.
    #[unsafe(link_section = ".text.hot.versus")]
    pub fn send_execute(&mut self, id: u32, params: &[Param<'_>], bound: &mut Vec<u8>) -> Result<(), DbError> {
        start_command(&mut self.wbuf);
        execute_payload(&mut self.wbuf, id, params, bound);
        self.seq = seal_command(&mut self.wbuf);
        self.stream.write_all(&self.wbuf).map_err(lost)
    }

    /// Sends COM_QUERY without waiting for the response.
    #[unsafe(link_section = ".text.hot.versus")]
    pub fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        self.command(0x03, sql.as_bytes())
    }

    /// The socket's file descriptor (for poll).
    pub fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match &self.stream {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    /// One read of whatever the socket has (blocks if nothing is there: call it when poll says readable).
    /// True when the read filled the free buffer: more bytes may be waiting.
    pub fn read_available(&mut self) -> Result<bool, DbError> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.rbuf.len() - self.rend < 16 * 1024 {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
            if self.rbuf.len() - self.rend < 16 * 1024 {
                let n = self.rbuf.len() * 2;
                self.rbuf.resize(n, 0);
            }
        }
        let free = self.rbuf.len() - self.rend;
        let n = self.stream.read(&mut self.rbuf[self.rend..]).map_err(lost)?;
        if n == 0 {
            return Err(DbError::lost("Lost connection to server: connection closed"));
        }
        self.rend += n;
        Ok(n == free)
    }

    /// Takes one complete response from the buffered bytes, if there is one.
    pub fn take_result(&mut self) -> Option<Result<Outcome, DbError>> {
        let (used, r) = super::response::scan_response(&self.rbuf[self.rpos..self.rend], self.cache_metadata)?;
        self.rpos += used;
        Some(r)
    }

    /// COM_STMT_CLOSE (no response).
    pub fn close_statement(&mut self, id: u32) -> Result<(), DbError> {
        self.command(0x19, &id.to_le_bytes())
    }

    /// COM_QUIT.
    pub fn quit(&mut self) {
        let _ = self.command(0x01, &[]);
    }

    fn send_local(&mut self, data: &mut super::LocalData) -> Result<(), DbError> {
        struct Packets<'a> {
            wire: &'a mut Wire,
            buf: Vec<u8>,
        }
        impl Write for Packets<'_> {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.buf.extend_from_slice(b);
                if self.buf.len() >= 1 << 20 {
                    let buf = std::mem::take(&mut self.buf);
                    self.wire.send_payload(&buf)?;
                    self.buf = buf;
                    self.buf.clear();
                }
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = Packets { wire: self, buf: Vec::with_capacity(1 << 20) };
        let r = data(&mut w);
        let rest = std::mem::take(&mut w.buf);
        if !rest.is_empty() {
            w.wire.send_payload(&rest).map_err(lost)?;
        }
        // An empty packet ends the file, also after an error in the producer.
        self.send_payload(&[]).map_err(lost)?;
        r.map_err(|e| DbError { kind: ErrorKind::Client, code: None, message: e.to_string() })
    }

    /// Reads a full response, skipping rows; the outcome is that of the first result.
    #[unsafe(link_section = ".text.hot.versus")]
    pub(super) fn read_result(&mut self, local: Option<&mut super::LocalData>) -> Result<Outcome, DbError> {
        // The common case: reads until the whole response is in the buffer, then walks it once by packet
        // headers. A LOCAL INFILE request, or a response that does not fit the buffer, goes packet by
        // packet from where it starts. As a rule nothing of the response has arrived yet: read before the
        // first scan.
        if self.rpos == self.rend {
            self.read_more()?;
        }
        loop {
            match scan(&self.rbuf[self.rpos..self.rend], self.cache_metadata) {
                Some(Scanned::Response(used, r)) => {
                    self.rpos += used;
                    return r;
                }
                Some(Scanned::LocalInfile) => break,
                None if self.read_more()? => {}
                None => break,
            }
        }
        self.read_packets(local, None)
    }

    /// COM_QUERY, counting what it returned and changed and keeping the first row's first column as
    /// text (for the few statements whose answer versus reads, such as the server's thread id).
    pub fn query_rows(&mut self, sql: &str) -> Result<super::Rows, DbError> {
        self.command(0x03, sql.as_bytes())?;
        let mut rows = super::Rows::default();
        rows.outcome = Some(self.read_packets(None, Some(&mut rows))?);
        Ok(rows)
    }

    /// COM_QUERY keeping every row of the first result set as text ([`super::Connection::query_table`]).
    pub fn query_table(&mut self, sql: &str) -> Result<super::Rows, DbError> {
        self.command(0x03, sql.as_bytes())?;
        let mut rows = super::Rows { table: Some(Vec::new()), ..super::Rows::default() };
        rows.outcome = Some(self.read_packets(None, Some(&mut rows))?);
        Ok(rows)
    }

    /// One read into the buffer's free end, after moving what is left of it to the front; false (and no
    /// read) when the buffer is full.
    #[unsafe(link_section = ".text.hot.versus")]
    fn read_more(&mut self) -> Result<bool, DbError> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            if self.rpos == 0 {
                return Ok(false);
            }
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        let n = self.stream.read(&mut self.rbuf[self.rend..]).map_err(lost)?;
        if n == 0 {
            return Err(DbError::lost("Lost connection to server: connection closed"));
        }
        self.rend += n;
        Ok(true)
    }

    /// [`Wire::read_result`] packet by packet: answers LOCAL INFILE requests, joins 16 MiB packets; with
    /// `rows`, also counts the rows and keeps the first one's first value there.
    fn read_packets(
        &mut self,
        mut local: Option<&mut super::LocalData>,
        mut rows: Option<&mut super::Rows>,
    ) -> Result<Outcome, DbError> {
        let mut outcome = None;
        let cache_metadata = self.cache_metadata;
        loop {
            let p = self.read_packet()?;
            let more;
            match p.first().copied() {
                Some(0x00) => {
                    let (affected, n) = lenenc(&p[1..]);
                    let (_, m) = lenenc(&p[1 + n..]);
                    let s = 1 + n + m;
                    more = p.get(s..s + 2).is_some_and(|b| u16::from_le_bytes([b[0], b[1]]) & MORE_RESULTS != 0);
                    if outcome.is_none()
                        && let Some(r) = rows.as_deref_mut()
                    {
                        r.affected = affected;
                    }
                    outcome.get_or_insert(if affected > 0 { Outcome::Write } else { Outcome::Other });
                }
                Some(0xFF) => return Err(parse_err(p)),
                Some(0xFB) => {
                    let Some(data) = local.take() else {
                        self.send_payload(&[]).map_err(lost)?;
                        continue;
                    };
                    self.send_local(data)?;
                    continue;
                }
                _ => {
                    let defs = column_defs(p, cache_metadata);
                    let first_set = outcome.is_none();
                    if first_set && let Some(r) = rows.as_deref_mut() {
                        r.fields = lenenc(p).0 as usize;
                    }
                    for _ in 0..=defs {
                        self.read_packet()?; // column definitions, then EOF
                    }
                    loop {
                        let r = self.read_packet()?;
                        match r.first() {
                            Some(0xFE) if r.len() < 9 => {
                                more =
                                    r.get(3..5).is_some_and(|b| u16::from_le_bytes([b[0], b[1]]) & MORE_RESULTS != 0);
                                break;
                            }
                            Some(0xFF) => return Err(parse_err(r)),
                            _ => {
                                if let Some(rows) = rows.as_deref_mut()
                                    && first_set
                                {
                                    if rows.fetched == 0 {
                                        rows.first = first_text(r);
                                    }
                                    rows.fetched += 1;
                                    if let Some(t) = rows.table.as_mut() {
                                        let n = rows.fields;
                                        t.push(text_row(r, n));
                                    }
                                }
                            }
                        }
                    }
                    outcome.get_or_insert(Outcome::Read);
                }
            }
            if !more {
                return Ok(outcome.unwrap_or(Outcome::Other));
            }
        }
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
