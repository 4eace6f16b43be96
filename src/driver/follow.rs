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
//!   in their process list, MySQL from 5.7.9 in the performance schema). Under a thread pool the
//!   thread named need not serve the next statement: following is then of no use, and does no harm.
//!
//! A remote server's CPUs are not this host's, so there it does nothing. The thread never leaves the
//! CPUs it was allowed at the start (an experiment's `pin_cpus`, a `taskset`), and gets that mask back
//! when the follower drops, or once the server thread it followed has ended (after a reconnect).

use std::fs::File;
use std::os::fd::RawFd;
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

/// Where the server thread's CPU is read.
enum Source {
    /// The TCP socket's `SO_INCOMING_CPU`.
    Incoming,
    /// The server thread's `/proc/PID/task/TID/stat`, kept open and read again from its start.
    Thread(File),
    /// The thread is gone (the connection was made again, to another one): nothing to follow.
    Gone,
}

/// The calling thread's follower of its connection's server thread.
pub struct Follower {
    source: Source,
    allowed: CpuSet,
    on: Option<usize>,
    countdown: u32,
    moves: u64,
}

impl Follower {
    /// A follower for the calling thread, whose connection is the socket `fd` to a loopback TCP
    /// address; `None` for any other peer, or when the thread may use one CPU only.
    pub fn new(fd: RawFd) -> Option<Follower> {
        if !loopback_peer(fd) {
            return None;
        }
        Follower::with(Source::Incoming)
    }

    /// A follower for the calling thread, whose connection is the unix socket `fd`, served by the
    /// server's thread `tid`; `None` when the socket's peer or that thread cannot be read.
    pub fn of_server_thread(fd: RawFd, tid: u64) -> Option<Follower> {
        // SAFETY: `fd` is the caller's open socket, borrowed for this one call.
        let sock = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let pid = getsockopt(&sock, sockopt::PeerCredentials).ok()?.pid();
        let stat = File::open(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
        thread_cpu(&stat)?;
        Follower::with(Source::Thread(stat))
    }

    /// The follower for a worker's connection, by its kind (see the module's documentation); asks
    /// the server once which thread serves it over a unix socket. `None` where there is nothing to
    /// follow: the mysql crate's connections, remote servers, servers that do not say.
    pub fn for_connection(conn: &mut dyn Connection) -> Option<Follower> {
        let fd = conn.multiplexed()?.fd()?;
        if let Some(f) = Follower::new(fd) {
            return Some(f);
        }
        let local = getpeername::<SockaddrStorage>(fd).ok()?.family() == Some(AddressFamily::Unix);
        if !local {
            return None;
        }
        let tid = server_thread(|sql| conn.query_rows(sql).map(|r| r.first))?;
        Follower::of_server_thread(fd, tid)
    }

    fn with(source: Source) -> Option<Follower> {
        let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
        let n = (0..CpuSet::count()).filter(|&c| allowed.is_set(c).unwrap_or(false)).count();
        (n >= 2).then_some(Follower { source, allowed, on: None, countdown: 1, moves: 0 })
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
            Source::Thread(stat) => thread_cpu(stat),
            Source::Gone => return,
        };
        let Some(cpu) = cpu else {
            if matches!(self.source, Source::Thread(_)) {
                // Back to where the scheduler may put it.
                self.source = Source::Gone;
                if self.on.take().is_some() {
                    let _ = sched_setaffinity(Pid::from_raw(0), &self.allowed);
                }
            }
            return;
        };
        if self.on == Some(cpu) || !self.allowed.is_set(cpu).unwrap_or(false) {
            return;
        }
        let mut one = CpuSet::new();
        if one.set(cpu).is_ok() && sched_setaffinity(Pid::from_raw(0), &one).is_ok() {
            self.on = Some(cpu);
            self.moves += 1;
        }
    }

    /// The CPU the thread is held on now, if it has moved.
    pub fn cpu(&self) -> Option<usize> {
        self.on
    }

    /// How many times the thread has moved.
    pub fn moves(&self) -> u64 {
        self.moves
    }
}

/// The OS thread id the server says serves the connection (the first of [`SERVER_THREAD_QUERIES`] that
/// `ask`, which runs a statement and returns its first value, answers with a number).
pub fn server_thread(mut ask: impl FnMut(&str) -> Result<Option<String>, DbError>) -> Option<u64> {
    SERVER_THREAD_QUERIES.iter().find_map(|q| ask(q).ok().flatten()?.trim().parse().ok())
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
        if self.on.is_some() {
            let _ = sched_setaffinity(Pid::from_raw(0), &self.allowed);
        }
    }
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
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn loopback_tcp_is_followed_and_a_unix_socket_is_not() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mask = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let many_cpus = (0..CpuSet::count()).filter(|&c| mask.is_set(c).unwrap_or(false)).count() >= 2;
        assert_eq!(Follower::new(c.as_raw_fd()).is_some(), many_cpus);
        let (a, _b) = UnixStream::pair().unwrap();
        assert!(Follower::new(a.as_raw_fd()).is_none());
        assert!(!loopback_peer(-1));
    }

    #[test]
    fn a_unix_socket_follows_the_named_thread_of_its_peer() {
        // The peer of a socket pair is this process; this thread stands in for the server's thread.
        let (a, _b) = UnixStream::pair().unwrap();
        let tid = nix::unistd::gettid().as_raw() as u64;
        let mask = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let many_cpus = (0..CpuSet::count()).filter(|&c| mask.is_set(c).unwrap_or(false)).count() >= 2;
        let f = Follower::of_server_thread(a.as_raw_fd(), tid);
        assert_eq!(f.is_some(), many_cpus);
        let stat = File::open(format!("/proc/self/task/{tid}/stat")).unwrap();
        let cpu = thread_cpu(&stat).expect("a CPU");
        assert!(mask.is_set(cpu).unwrap(), "CPU {cpu} is not one this thread may use");
        assert!(Follower::of_server_thread(a.as_raw_fd(), u32::MAX as u64).is_none(), "no such thread");
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
