//! A client thread that runs where its server thread runs (`--client-affinity=follow`, the default).
//!
//! With the server on the same host, each connection is a ping-pong between one client thread and one
//! server thread. When the two sit on different CPUs, every statement and every response is a wake-up
//! across CPUs, often of an idle one (an interrupt between CPUs; on a VM, an exit to the hypervisor), and
//! the server thread, finding no statement waiting after its response, goes to sleep as well. On one CPU
//! the hand-over is a plain switch. Which of the two a run gets is up to the scheduler and changes from
//! second to second, which is much of the run-to-run swing of the many-thread rows in BENCHMARKS.md.
//!
//! Over TCP the kernel records in each socket the CPU that last processed a segment for it
//! (`SO_INCOMING_CPU`); on loopback that is the CPU the server thread sent from. So every
//! [`CHECK_EVERY`] events the worker reads it and, when it differs, moves itself there. Only on loopback:
//! a remote server's CPUs are not this host's, and over a unix socket the kernel records nothing. The
//! thread never leaves the CPUs it was allowed at the start (an experiment's `pin_cpus`, a `taskset`),
//! and gets that mask back when the follower drops.

use std::os::fd::RawFd;

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::sys::socket::{SockaddrStorage, getpeername};
use nix::unistd::Pid;

/// Events between two looks at the socket's incoming CPU: one getsockopt per this many events.
pub const CHECK_EVERY: u32 = 64;

/// The calling thread's follower of its connection's server thread.
pub struct Follower {
    allowed: CpuSet,
    on: Option<usize>,
    countdown: u32,
    moves: u64,
}

impl Follower {
    /// A follower for the calling thread, whose connection is the socket `fd`; `None` where following
    /// cannot help: the peer is not a loopback TCP address, or the thread may use one CPU only.
    pub fn new(fd: RawFd) -> Option<Follower> {
        if !loopback_peer(fd) {
            return None;
        }
        let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
        let n = (0..CpuSet::count()).filter(|&c| allowed.is_set(c).unwrap_or(false)).count();
        (n >= 2).then_some(Follower { allowed, on: None, countdown: 1, moves: 0 })
    }

    /// Counts one event; every [`CHECK_EVERY`] events, asks `fd` for the connection's socket (it may
    /// be a new one after a reconnect) and moves the thread to the CPU the server last sent from, if
    /// that is another one it may use.
    #[inline]
    pub fn tick(&mut self, fd: impl FnOnce() -> Option<RawFd>) {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = CHECK_EVERY;
            if let Some(fd) = fd() {
                self.check(fd);
            }
        }
    }

    #[unsafe(link_section = ".text.hot.versus")]
    fn check(&mut self, fd: RawFd) {
        let Some(cpu) = incoming_cpu(fd) else { return };
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
}
