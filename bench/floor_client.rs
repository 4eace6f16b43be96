//! The floor of a client's cost: a null sysbench client.
//!
//! It takes `versus sysbench`'s command line (`floor_client TEST [--mysql-*] [--threads=N] [--time=S]
//! run`), connects with versus's own protocol code (one connection per OS thread), prepares the test's
//! statements with versus's workload, and draws each thread's statements ahead of time, encoded as the
//! very packets versus would send. Then it only replays them: one `send` per statement, `recv` until the
//! response is complete, walking the packet headers and never decoding a value (over a unix socket a
//! non-blocking `recv`, and `poll` when nothing is there yet, as versus reads), and the next statement.
//! No timing per event, no counters shared between threads, no reporter, no histogram. That is the
//! least CPU any client spends that waits for each answer before the next statement, as sysbench does.
//!
//! It prints sysbench's `transactions:` and `queries:` lines, so `bench/sysbench_compare.py` and
//! `bench/kernel_profile.py` read it like the other clients, and the CPU time its threads spent drawing
//! their statements before the clock started (up to 2 MiB each: at 64 threads a large part of the
//! process's CPU time), which `sysbench_compare.py` subtracts from the process's CPU time. Closed loop
//! only; server-side prepared statements only; an error response (a deadlock, say) rolls the
//! transaction back and counts as an ignored error, as sysbench's default `--mysql-ignore-errors` does.
//! Its threads follow their server threads' CPUs as versus's do (`--client-affinity`, default follow).
//!
//! `FLOOR_IO=uring` replays over io_uring instead (a linked send and recv per statement, one syscall
//! that submits both and waits), one ring per connection's thread; `FLOOR_IO=uring:L` serves the
//! connections from L threads with one ring each (batched submission). See `floor_uring.rs`.
//!
//! Build: `cargo build --release --example floor_client` (target/release/examples/floor_client).

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{MsgFlags, recv, send};
use versus::driver::follow::Follower;
use versus::driver::wire::{self, Wire};
use versus::driver::{Connection, DbError, Endpoint, ErrorKind, Outcome, Param, PsMode, StmtId};
use versus::workload::sysbench::oltp::{Abort, Exec, Workload};
use versus::workload::sysbench::options::{self, ClientAffinity, Command, Options, Test};
use versus::workload::sysbench::rng::{Random, Unique, Xoroshiro};

#[path = "floor_uring.rs"]
mod uring;

/// Bytes of pre-encoded statements per thread (the replay cycles through them).
const POOL_BYTES: usize = 2 << 20;
/// Events drawn per thread at most.
const POOL_EVENTS: usize = 100_000;

/// A connection that only prepares (what [`Workload::prepare`] needs), keeping the server's ids.
struct Preparer {
    wire: Wire,
    ids: Vec<u32>,
    sql: Vec<String>,
}

fn unsupported() -> DbError {
    DbError { kind: ErrorKind::Client, code: None, message: "the floor client only prepares".into() }
}

impl Connection for Preparer {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let (id, _) = self.wire.prepare(sql)?;
        self.ids.push(id);
        self.sql.push(sql.to_string());
        Ok(StmtId(self.ids.len() - 1))
    }
    fn execute(&mut self, _: StmtId, _: &[Param<'_>]) -> Result<Outcome, DbError> {
        Err(unsupported())
    }
    fn query(&mut self, _: &str) -> Result<Outcome, DbError> {
        Err(unsupported())
    }
    fn reconnect(&mut self) -> Result<(), DbError> {
        Err(unsupported())
    }
    fn sql(&self, stmt: StmtId) -> &str {
        &self.sql[stmt.0]
    }
}

/// Pre-encoded statements: `bytes[stmts[i].0..stmts[i].1]` is statement i; event j is the statements
/// `events[j].0..events[j].1`.
#[derive(Default)]
struct Pool {
    bytes: Vec<u8>,
    stmts: Vec<(usize, usize)>,
    events: Vec<(usize, usize)>,
    /// CPU time the drawing and encoding took (before the clock starts, but in the process's CPU time).
    draw_cpu: Duration,
}

/// CPU time of the calling thread so far.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map(Duration::from).unwrap_or_default()
}

/// An [`Exec`] that encodes statements into a [`Pool`] instead of sending them.
struct Encoder<'a> {
    ids: &'a [u32],
    bound: HashMap<u32, Vec<u8>>,
    payload: Vec<u8>,
    pool: &'a mut Pool,
}

impl Encoder<'_> {
    fn push(&mut self) {
        let s = self.pool.bytes.len();
        wire::frame_command(&mut self.pool.bytes, &self.payload);
        self.pool.stmts.push((s, self.pool.bytes.len()));
    }
}

impl Exec for Encoder<'_> {
    fn exec(&mut self, stmt: StmtId, params: &[Param<'_>]) -> Result<(), Abort> {
        let id = self.ids[stmt.0];
        self.payload.clear();
        wire::execute_payload(&mut self.payload, id, params, self.bound.entry(id).or_default());
        self.push();
        Ok(())
    }
    fn query(&mut self, sql: &str) -> Result<(), Abort> {
        self.payload.clear();
        self.payload.push(0x03);
        self.payload.extend_from_slice(sql.as_bytes());
        self.push();
        Ok(())
    }
}

/// What a thread did.
#[derive(Default, Clone, Copy)]
struct Tally {
    events: u64,
    queries: u64,
    errors: u64,
    /// CPU time spent drawing the pools (see [`Pool::draw_cpu`]).
    draw_cpu: Duration,
}

/// Walks the packet headers of one response as its bytes arrive, never decoding a value.
#[derive(Default)]
struct Walker {
    /// Bytes of the response buffer filled.
    have: usize,
    /// Start of the first packet not walked yet.
    at: usize,
    /// 0: first packet not seen; 1: in a result set before the column EOF; 2: in the rows.
    phase: u8,
}

impl Walker {
    /// Walks the complete packets in `buf[..self.have]`: `Some(true)` for an error response,
    /// `Some(false)` for a complete one, `None` when more bytes are needed (then the incomplete packet
    /// has been moved to the front and `buf` has room after `have`).
    fn walk(&mut self, buf: &mut Vec<u8>) -> Option<bool> {
        while self.at + 4 <= self.have {
            let at = self.at;
            let len = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], 0]) as usize;
            if at + 4 + len > self.have {
                break;
            }
            let first = if len > 0 { buf[at + 4] } else { 0 };
            self.at += 4 + len;
            match self.phase {
                0 => match first {
                    0x00 => return Some(false),
                    0xFF => return Some(true),
                    _ => self.phase = 1,
                },
                _ if first == 0xFE && len < 9 => {
                    if self.phase == 2 {
                        return Some(false);
                    }
                    self.phase = 2;
                }
                2 if first == 0xFF => return Some(true),
                _ => {}
            }
        }
        if self.at > 0 {
            // Keep only the incomplete packet, at the front.
            buf.copy_within(self.at..self.have, 0);
            self.have -= self.at;
            self.at = 0;
        }
        if self.have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        None
    }
}

/// Reads one response from `fd` into `buf`, walking packet headers only. Returns true for an error
/// response. Bytes after the response are not expected (one statement in flight). `unix`: the socket is a
/// unix socket, where a blocked read is also woken when the server drains the request; there it waits
/// in poll(POLLIN) instead, as versus does.
fn read_response(fd: RawFd, buf: &mut Vec<u8>, unix: bool) -> Result<bool, String> {
    let mut w = Walker::default();
    loop {
        if let Some(failed) = w.walk(buf) {
            return Ok(failed);
        }
        let flags = if unix { MsgFlags::MSG_DONTWAIT } else { MsgFlags::empty() };
        match recv(fd, &mut buf[w.have..], flags) {
            Ok(0) => return Err("the server closed the connection".into()),
            Ok(n) => w.have += n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(nix::errno::Errno::EAGAIN) => {
                // SAFETY: `fd` is the open socket of this thread's connection.
                let bfd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
                let mut fds = [PollFd::new(bfd, PollFlags::POLLIN)];
                let _ = poll(&mut fds, PollTimeout::NONE);
            }
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
}

fn send_all(fd: RawFd, mut b: &[u8]) -> Result<(), String> {
    while !b.is_empty() {
        match send(fd, b, MsgFlags::MSG_NOSIGNAL) {
            Ok(n) => b = &b[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(format!("send: {e}")),
        }
    }
    Ok(())
}

/// Connects worker `n`, prepares, and draws its pool.
fn setup(test: Test, o: &Options, n: usize, rnd: Random, unique: Arc<Unique>) -> Result<(Wire, Pool), String> {
    let c = &o.connect;
    let timeout = Duration::from_secs(c.connect_timeout_secs.max(1));
    let ep = c.endpoint(n);
    let wire = match &ep {
        Endpoint::Tcp(h, p) => Wire::connect(h, *p, None, &c.user, &c.password, &c.db, timeout),
        Endpoint::Socket(s) => Wire::connect("localhost", 0, Some(s), &c.user, &c.password, &c.db, timeout),
    }
    .map_err(|e| format!("cannot connect to {ep}: {e:?}"))?;
    let mut conn = Preparer { wire, ids: Vec::new(), sql: Vec::new() };
    for sql in &c.init {
        conn.wire.query(sql, None).map_err(|e| format!("{sql}: {e}"))?;
    }
    let mut wl = Workload::new(test, Arc::new(o.oltp.clone()), rnd, unique, n as u32, o.threads);
    wl.prepare(&mut conn).map_err(|e| format!("prepare: {e}"))?;
    let mut pool = Pool::default();
    let t0 = thread_cpu();
    let mut enc = Encoder { ids: &conn.ids, bound: HashMap::new(), payload: Vec::new(), pool: &mut pool };
    while enc.pool.bytes.len() < POOL_BYTES && enc.pool.events.len() < POOL_EVENTS {
        let first = enc.pool.stmts.len();
        wl.event(&mut enc).map_err(|e| format!("drawing statements: {e:?}"))?;
        enc.pool.events.push((first, enc.pool.stmts.len()));
    }
    pool.draw_cpu = thread_cpu() - t0;
    Ok((conn.wire, pool))
}

/// Replays the pool until `stop`; the deadline is checked once per event.
fn replay(
    fd: RawFd,
    unix: bool,
    mut follow: Option<Follower>,
    pool: &Pool,
    rollback: &[u8],
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<Tally, String> {
    let mut t = Tally::default();
    let mut buf = vec![0u8; 64 * 1024];
    'run: loop {
        for &(a, b) in &pool.events {
            if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
                break 'run;
            }
            let mut failed = false;
            for &(s, e) in &pool.stmts[a..b] {
                send_all(fd, &pool.bytes[s..e])?;
                t.queries += 1;
                if read_response(fd, &mut buf, unix)? {
                    failed = true;
                    break;
                }
            }
            if failed {
                t.errors += 1;
                send_all(fd, rollback)?;
                read_response(fd, &mut buf, unix)?;
            } else {
                t.events += 1;
            }
            if let Some(f) = &mut follow {
                f.tick(|| Some(fd));
            }
        }
    }
    Ok(t)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args) {
        eprintln!("floor_client: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let inv = options::parse(args).map_err(|e| e.to_string())?;
    let (Some(test), Some(Command::Run)) = (inv.test, inv.command) else {
        return Err("usage: floor_client TEST [options] run (the options of versus sysbench)".into());
    };
    let o = inv.options;
    if o.rate > 0 || o.events > 0 || o.time == 0 {
        return Err("closed loop with a time limit only: give --time=S, no --rate or --events".into());
    }
    if o.connect.ps_mode == PsMode::Disable || o.connect.tls.enabled() || o.connect.compression {
        return Err("server-side prepared statements over plain TCP or a socket only".into());
    }
    let threads = o.threads as usize;
    let io = std::env::var("FLOOR_IO").unwrap_or_default();
    // Connections per OS thread: one each, or (`uring:L`) dealt round-robin to L loop threads.
    let loops = match io.as_str() {
        "" | "uring" => threads,
        x => match x.strip_prefix("uring:").and_then(|l| l.parse::<usize>().ok()) {
            Some(l) if l > 0 => l.min(threads),
            _ => return Err(format!("FLOOR_IO={io}: give uring or uring:L (L loop threads), or leave it unset")),
        },
    };
    let use_uring = !io.is_empty();
    let clock = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let seed = if o.rand.seed != 0 { o.rand.seed } else { clock };
    let mut seeder = Xoroshiro::seeded(seed);
    let unique = Arc::new(Unique::new(seeder.next_u64() as u32, seeder.next_u64() as u32));
    let mut rollback = Vec::new();
    wire::frame_command(&mut rollback, b"\x03ROLLBACK");
    let rollback = Arc::new(rollback);
    let ready = Arc::new(Barrier::new(loops + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let mut shares: Vec<Vec<(usize, Random)>> = (0..loops).map(|_| Vec::new()).collect();
    for n in 0..threads {
        shares[n % loops].push((n, Random::new(&o.rand, seeder.next_u64())));
    }
    let mut handles = Vec::new();
    for share in shares {
        let (o, unique, rollback, ready, stop) =
            (o.clone(), unique.clone(), rollback.clone(), ready.clone(), stop.clone());
        handles.push(std::thread::spawn(move || -> Result<Tally, String> {
            let first = share[0].0;
            let mut set: Result<Vec<(Wire, Pool)>, String> =
                share.into_iter().map(|(n, rnd)| setup(test, &o, n, rnd, unique.clone())).collect();
            if set.is_err() {
                stop.store(true, Ordering::SeqCst);
            }
            let unix = matches!(o.connect.endpoint(first), Endpoint::Socket(_));
            // As versus's workers do under `--client-affinity=follow` (the default), and before the clock.
            let follow = match (&mut set, o.client_affinity) {
                (Ok(set), ClientAffinity::Follow) if !use_uring => {
                    let w = &mut set[0].0;
                    // SAFETY: the wire owns the socket and keeps it open during this call.
                    let sock = unsafe { std::os::fd::BorrowedFd::borrow_raw(w.fd()) };
                    Follower::for_socket(sock, |q| w.query_rows(q).map(|r| r.first))
                }
                _ => None,
            };
            ready.wait();
            let mut set = set?;
            let draw_cpu: Duration = set.iter().map(|(_, p)| p.draw_cpu).sum();
            // Every thread leaves the barrier at once: the deadlines agree.
            let deadline = Instant::now() + Duration::from_secs(o.time);
            let r = if use_uring {
                let mut conns: Vec<uring::Conn<'_>> = set.iter().map(|(w, p)| uring::Conn::new(w.fd(), p)).collect();
                uring::replay(&mut conns, &rollback, deadline, &stop)
            } else {
                replay(set[0].0.fd(), unix, follow, &set[0].1, &rollback, deadline, &stop)
            };
            for (w, _) in &mut set {
                w.quit();
            }
            r.map(|t| Tally { draw_cpu, ..t })
        }));
    }
    ready.wait();
    let start = Instant::now();
    let mut total = Tally::default();
    let mut first_error = None;
    for h in handles {
        match h.join().map_err(|_| "a worker panicked".to_string()).and_then(|r| r) {
            Ok(t) => {
                total.events += t.events;
                total.queries += t.queries;
                total.errors += t.errors;
                total.draw_cpu += t.draw_cpu;
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let secs = start.elapsed().as_secs_f64();
    let how = if use_uring { format!(", io_uring, {loops} loop thread(s)") } else { String::new() };
    println!("floor client (versus's packets replayed, responses not decoded), {threads} threads{how}");
    println!("SQL statistics:");
    println!(
        "    transactions:                        {:<7} ({:.2} per sec.)",
        total.events,
        total.events as f64 / secs
    );
    println!(
        "    queries:                             {:<7} ({:.2} per sec.)",
        total.queries,
        total.queries as f64 / secs
    );
    println!(
        "    ignored errors:                      {:<7} ({:.2} per sec.)",
        total.errors,
        total.errors as f64 / secs
    );
    println!("General statistics:");
    println!("    total time:                          {secs:.4}s");
    // Not part of the replay: a benchmark subtracts it from the process's CPU time.
    println!("    CPU drawing statements before start: {:.4}s", total.draw_cpu.as_secs_f64());
    Ok(())
}
