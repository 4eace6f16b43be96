//! A client thread that runs where its server thread runs (`--client-affinity=follow`, the default).
//!
//! With the server on the same host, each connection is a ping-pong between one client thread and one
//! server thread. When the two sit on different CPUs, every statement and every response is a wake-up
//! across CPUs, often of an idle one (an interrupt between CPUs; on a VM, an exit to the hypervisor), and
//! the server thread, finding no statement waiting after its response, goes to sleep as well. On one CPU
//! the hand-over is a plain switch. Which of the two a run gets is up to the scheduler and changes from
//! second to second, which is much of the run-to-run swing of the many-thread rows in BENCHMARKS.md.
//!
//! Every [`CHECK_EVERY`] events the worker looks up where its server thread ran last and, when that is
//! another CPU, moves itself there:
//! - over TCP to a loopback address, from the socket: the kernel records in it the CPU that processed
//!   its last segment (`SO_INCOMING_CPU`), on loopback the CPU the server thread sent from;
//! - over a unix socket, where the kernel records nothing, from `/proc/PID/task/TID/stat`: the server's
//!   PID is the socket's peer (`SO_PEERCRED`), and the server names the thread serving the connection
//!   when asked once before the run ([`SERVER_THREAD_QUERIES`]: MariaDB from 10.3 and Percona Server
//!   in their process list, MySQL from 5.7.9 in the performance schema, when the account may read
//!   `performance_schema.threads`, which versus's sandboxes do not grant). It first asks whether the
//!   server gives each connection a thread of its own ([`THREAD_HANDLING_QUERY`]): under a thread pool
//!   (MariaDB's and Percona Server's `pool-of-threads`, MySQL Enterprise's plugin) the thread named need
//!   not serve the next statement, and workers named the same pool thread would crowd onto one CPU, so
//!   there it does nothing. Over TCP a pool is no obstacle: the socket names whichever pool thread
//!   answered last, and following measured 1.4x the throughput there (BENCHMARKS.md).
//!
//! A remote server's CPUs are not this host's, so there it does nothing. The thread never leaves the
//! CPUs it was allowed at the start (an experiment's `pin_cpus`, a `taskset`), and gets that mask back
//! when the follower drops, or once the connection was made again (a reconnect gets another server
//! thread, which is not asked for on the measured path). The look-up falls inside the next event's
//! latency: one or two system calls every [`CHECK_EVERY`] events.

use std::fs::File;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::FileExt;

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::sys::socket::{AddressFamily, SockaddrLike, SockaddrStorage, getpeername, getsockopt, sockopt};
use nix::unistd::Pid;

use super::{Connection, DbError};

/// Events between two looks at where the server thread ran: one system call per this many events.
pub const CHECK_EVERY: u32 = 64;

/// Statements that ask the server for the OS thread id serving the connection, tried in turn:
/// MariaDB's and Percona Server's process list (MariaDB 10.3 and later), then MySQL's performance schema
/// (5.7.9 and later, when it is on).
pub const SERVER_THREAD_QUERIES: &[&str] = &[
    "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
    "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()",
];

/// The statement that asks how the server gives connections their threads; only
/// [`DEDICATED_THREADS`] is followed over a unix socket.
pub const THREAD_HANDLING_QUERY: &str = "SELECT @@thread_handling";

/// `thread_handling` of a server that gives each connection a thread of its own (MariaDB's, MySQL's and
/// Percona Server's default; a thread pool reads `pool-of-threads`, or `loaded-dynamically` on MySQL).
pub const DEDICATED_THREADS: &str = "one-thread-per-connection";

/// Where the server thread's CPU is read.
enum Source {
    /// The TCP socket's `SO_INCOMING_CPU`.
    Incoming,
    /// The server thread's `/proc/PID/task/TID/stat`, kept open and read again from its start, and the
    /// inode of the socket whose server thread it is.
    Thread { stat: File, socket: u64 },
    /// The connection was made again, to a thread that was not asked for: nothing to follow.
    Gone,
}

/// The calling thread's follower of its connection's server thread. It changes the mask of the thread
/// that made it, so it stays on that thread (not `Send`).
pub struct Follower {
    source: Source,
    allowed: CpuSet,
    on: Option<usize>,
    countdown: u32,
    _this_thread: PhantomData<*const ()>,
}

impl Follower {
    /// The follower for a worker's connection, by its kind (see the module's documentation); over a
    /// unix socket it asks the server once which thread serves it, with `ask` (runs a statement and
    /// returns its first value). `None` where there is nothing to follow: a remote server, a server that
    /// does not say, a server under a thread pool, a thread that may use one CPU only (then nothing is
    /// asked).
    pub fn for_socket(
        sock: BorrowedFd<'_>,
        mut ask: impl FnMut(&str) -> Result<Option<String>, DbError>,
    ) -> Option<Follower> {
        let allowed = movable()?;
        let fd = sock.as_raw_fd();
        let source = if loopback_peer(fd) {
            Source::Incoming
        } else if getpeername::<SockaddrStorage>(fd).ok()?.family() == Some(AddressFamily::Unix) {
            if !dedicated_threads(&mut ask) {
                return None;
            }
            thread_source(sock, server_thread(ask)?)?
        } else {
            return None;
        };
        Some(Follower { source, allowed, on: None, countdown: 1, _this_thread: PhantomData })
    }

    /// [`Follower::for_socket`] for a connection that has a socket of its own (the lean client's; the
    /// mysql crate's connections have none, and get no follower).
    pub fn for_connection(conn: &mut dyn Connection) -> Option<Follower> {
        let fd = socket_of(conn)?;
        // SAFETY: `conn` owns the socket and keeps it open while it is borrowed here, for this call.
        let sock = unsafe { BorrowedFd::borrow_raw(fd) };
        Follower::for_socket(sock, |sql| conn.query_rows(sql).map(|r| r.first))
    }

    /// Counts one event; every [`CHECK_EVERY`] events, looks up where the server thread ran last (asking
    /// `fd` for the connection's socket, which may be a new one after a reconnect) and moves the thread
    /// there if that is another CPU it may use.
    #[inline]
    pub fn tick(&mut self, fd: impl FnOnce() -> Option<RawFd>) {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = CHECK_EVERY;
            self.check(fd);
        }
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn check(&mut self, fd: impl FnOnce() -> Option<RawFd>) {
        let cpu = match &self.source {
            Source::Incoming => fd().and_then(incoming_cpu),
            // After a reconnect the connection has another socket, and another server thread (the old
            // one may live on in the server's thread cache, serving someone else).
            Source::Thread { stat, socket } => match fd().and_then(socket_inode) {
                Some(inode) if inode == *socket => thread_cpu(stat),
                _ => None,
            },
            Source::Gone => return,
        };
        let Some(cpu) = cpu else {
            if matches!(self.source, Source::Thread { .. }) {
                self.source = Source::Gone;
                self.release();
            }
            return;
        };
        if !self.allowed.is_set(cpu).unwrap_or(false) {
            // Not a CPU it may use (a `pin_cpus` split, a partial `taskset`): do not stay on the last one.
            self.release();
            return;
        }
        if self.on == Some(cpu) {
            return;
        }
        let mut one = CpuSet::new();
        if one.set(cpu).is_ok() && sched_setaffinity(Pid::from_raw(0), &one).is_ok() {
            self.on = Some(cpu);
        }
    }

    /// Gives the thread its starting mask back, if it was held on one CPU.
    fn release(&mut self) {
        if self.on.take().is_some() {
            let _ = sched_setaffinity(Pid::from_raw(0), &self.allowed);
        }
    }

    /// The CPU the thread is held on now, if it has moved.
    pub fn cpu(&self) -> Option<usize> {
        self.on
    }
}

/// The socket of a connection that has one of its own (the lean client's).
pub fn socket_of(conn: &mut dyn Connection) -> Option<RawFd> {
    conn.multiplexed().and_then(|m| m.fd())
}

/// Where to read the CPU of the server's thread `tid` that serves the unix socket `sock`; `None` when
/// the socket's peer or that thread cannot be read.
fn thread_source(sock: BorrowedFd<'_>, tid: u64) -> Option<Source> {
    let pid = getsockopt(&sock, sockopt::PeerCredentials).ok()?.pid();
    let stat = File::open(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    thread_cpu(&stat)?;
    Some(Source::Thread { stat, socket: socket_inode(sock.as_raw_fd())? })
}

/// The OS thread id the server says serves the connection (the first of [`SERVER_THREAD_QUERIES`] that
/// `ask`, which runs a statement and returns its first value, answers with a number).
pub fn server_thread(mut ask: impl FnMut(&str) -> Result<Option<String>, DbError>) -> Option<u64> {
    SERVER_THREAD_QUERIES.iter().find_map(|q| ask(q).ok().flatten()?.trim().parse().ok())
}

/// True when the server says it gives each connection a thread of its own ([`THREAD_HANDLING_QUERY`]
/// answers [`DEDICATED_THREADS`]); a server that does not say is not followed.
pub fn dedicated_threads(mut ask: impl FnMut(&str) -> Result<Option<String>, DbError>) -> bool {
    matches!(ask(THREAD_HANDLING_QUERY), Ok(Some(v)) if v.trim().eq_ignore_ascii_case(DEDICATED_THREADS))
}

/// The CPU a thread last ran on: field 39 of its `stat`, read again from the start of the open file.
fn thread_cpu(stat: &File) -> Option<usize> {
    let mut buf = [0u8; 512];
    let n = stat.read_at(&mut buf, 0).ok()?;
    // The command name (field 2, in parentheses) may hold spaces: count from the last ')'.
    let close = buf[..n].iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&buf[close + 1..n]).ok()?;
    rest.split_ascii_whitespace().nth(36)?.parse().ok()
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.release();
    }
}

/// The calling thread's CPU mask, if it allows more than one CPU (else there is nowhere to move).
fn movable() -> Option<CpuSet> {
    let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
    let n = (0..CpuSet::count()).filter(|&c| allowed.is_set(c).unwrap_or(false)).count();
    (n >= 2).then_some(allowed)
}

/// The inode of the socket `fd`, which tells one connection's socket from the next one's even when
/// the descriptor number is reused.
fn socket_inode(fd: RawFd) -> Option<u64> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills `st` when it returns 0 (only then is it read); a descriptor that is not open
    // is an error return, not undefined behaviour.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: initialised by the successful fstat above.
    Some(unsafe { st.assume_init() }.st_ino)
}

/// The CPU that last processed a segment for the TCP socket `fd` (`SO_INCOMING_CPU`), if recorded.
pub fn incoming_cpu(fd: RawFd) -> Option<usize> {
    let mut cpu: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into the local `cpu`, and `len` is its size; a bad
    // descriptor is an error return, not undefined behaviour.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_INCOMING_CPU, (&raw mut cpu).cast(), &mut len) };
    (r == 0 && cpu >= 0).then_some(cpu as usize)
}

/// True when `fd` is a socket connected to a loopback IP address (127.0.0.0/8, ::1, or ::ffff:127.x).
fn loopback_peer(fd: RawFd) -> bool {
    let Ok(peer) = getpeername::<SockaddrStorage>(fd) else { return false };
    if let Some(v4) = peer.as_sockaddr_in() {
        return v4.ip().is_loopback();
    }
    if let Some(v6) = peer.as_sockaddr_in6() {
        let ip = v6.ip();
        return ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::net::UnixStream;

    #[test]
    fn loopback_tcp_is_followed_without_asking_the_server() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mask = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let many_cpus = (0..CpuSet::count()).filter(|&c| mask.is_set(c).unwrap_or(false)).count() >= 2;
        let f = Follower::for_socket(c.as_fd(), |q| panic!("asked {q} over TCP"));
        assert_eq!(f.is_some(), many_cpus);
        assert!(!loopback_peer(-1));
    }

    #[test]
    fn a_unix_socket_follows_the_named_thread_of_its_peer() {
        // The peer of a socket pair is this process; this thread stands in for the server's thread.
        let (a, _b) = UnixStream::pair().unwrap();
        let tid = nix::unistd::gettid().as_raw() as u64;
        let mask = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let many_cpus = (0..CpuSet::count()).filter(|&c| mask.is_set(c).unwrap_or(false)).count() >= 2;
        let server = |handling: &'static str, thread: u64| {
            move |q: &str| Ok(Some(if q == THREAD_HANDLING_QUERY { handling.to_string() } else { thread.to_string() }))
        };
        let f = Follower::for_socket(a.as_fd(), server(DEDICATED_THREADS, tid));
        assert_eq!(f.is_some(), many_cpus);
        let stat = File::open(format!("/proc/self/task/{tid}/stat")).unwrap();
        let cpu = thread_cpu(&stat).expect("a CPU");
        assert!(mask.is_set(cpu).unwrap(), "CPU {cpu} is not one this thread may use");
        let no_thread = server(DEDICATED_THREADS, u32::MAX.into());
        assert!(Follower::for_socket(a.as_fd(), no_thread).is_none(), "no such thread");
        assert!(Follower::for_socket(a.as_fd(), |_| Ok(None)).is_none(), "the server does not say");
        for pool in ["pool-of-threads", "loaded-dynamically"] {
            assert!(Follower::for_socket(a.as_fd(), server(pool, tid)).is_none(), "{pool}: not followed");
        }
        // A look-up through another socket (the connection made again) ends the following.
        if let Some(mut f) = f {
            f.tick(|| Some(a.as_raw_fd()));
            assert!(matches!(f.source, Source::Thread { .. }), "the same socket: still following");
            let (c, _d) = UnixStream::pair().unwrap();
            for _ in 0..CHECK_EVERY {
                f.tick(|| Some(c.as_raw_fd()));
            }
            assert!(matches!(f.source, Source::Gone) && f.cpu().is_none(), "another socket: following ends");
        }
    }

    #[test]
    fn only_a_thread_per_connection_is_followed() {
        let answer = |v: Option<&'static str>| move |_: &str| Ok(v.map(str::to_string));
        assert!(dedicated_threads(answer(Some("one-thread-per-connection"))));
        assert!(dedicated_threads(answer(Some("One-Thread-Per-Connection\n"))));
        for other in [Some("pool-of-threads"), Some("loaded-dynamically"), Some("no-threads"), None] {
            assert!(!dedicated_threads(answer(other)), "{other:?}");
        }
        assert!(!dedicated_threads(|_| Err(DbError::server(1193, "Unknown system variable"))));
    }

    #[test]
    fn the_first_numeric_answer_names_the_thread() {
        let mut asked = Vec::new();
        let tid = server_thread(|q| {
            asked.push(q.to_string());
            if q.contains("information_schema") {
                Err(DbError::server(1054, "Unknown column 'TID'"))
            } else {
                Ok(Some("4711".into()))
            }
        });
        assert_eq!((tid, asked.len()), (Some(4711), 2));
        assert_eq!(server_thread(|_| Ok(None)), None);
        assert_eq!(server_thread(|_| Ok(Some("x".into()))), None);
    }
}
