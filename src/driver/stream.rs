//! The socket under a protocol session: TCP or a unix socket, with the reads and writes on the
//! per-statement path kept in the hot code section.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

/// The connection to the server: TCP, or a unix socket read through poll.
pub(super) enum Stream {
    /// Over TCP.
    Tcp(TcpStream),
    /// Over a unix socket.
    Unix(UnixStream),
}

impl Read for Stream {
    #[unsafe(link_section = ".text.hot.versus")]
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => read_unix(s, b),
        }
    }
}

/// Reads from a unix socket, waiting in poll(POLLIN) rather than in the read itself when nothing is there.
/// A reader blocked in a unix socket's read shares the socket's wait queue with writers and is woken
/// (to find nothing and sleep again) each time the server drains our previous request: measured, 1.5–1.7
/// sleeps per statement instead of 1 (bench/kernel_profile.py). poll's wait is woken only for input, as
/// libmariadb's is.
fn read_unix(s: &UnixStream, b: &mut [u8]) -> io::Result<usize> {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::socket::{MsgFlags, recv};
    use std::os::fd::{AsFd, AsRawFd};
    loop {
        match recv(s.as_raw_fd(), b, MsgFlags::MSG_DONTWAIT) {
            Ok(n) => return Ok(n),
            Err(Errno::EAGAIN) => {
                let mut fds = [PollFd::new(s.as_fd(), PollFlags::POLLIN)];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

impl Write for Stream {
    #[unsafe(link_section = ".text.hot.versus")]
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
        }
    }
    // The default `write_all` is generic code placed wherever std's instances land; this one is on the
    // per-statement path, so it sits with the rest of it (see the crate docs on code layout).
    #[unsafe(link_section = ".text.hot.versus")]
    fn write_all(&mut self, mut b: &[u8]) -> io::Result<()> {
        while !b.is_empty() {
            match self.write(b) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => b = &b[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
