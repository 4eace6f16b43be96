//! The floor client's replay over io_uring (`FLOOR_IO=uring` or `FLOOR_IO=uring:L`): whether batched
//! submission goes below the floor of `send` + `recv` per statement.
//!
//! Each statement is one submission of a `send` linked to a `recv` of the response, and one
//! `io_uring_enter` that submits both and waits: one syscall per statement instead of two. With
//! `uring` every connection has its own thread and ring (the thread-per-connection model, one syscall
//! less); with `uring:L`, L threads each serve their share of the connections from one ring, and one
//! `io_uring_enter` submits every statement that became ready and collects every response that
//! arrived (the event-loop model with batched submission). The rings are single-issuer with deferred
//! task work, so completions run in the waiting thread and not in interrupts of other threads.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use io_uring::{IoUring, opcode, squeue, types};

use super::{Pool, Tally, Walker};

/// One connection of a loop thread.
pub struct Conn<'a> {
    fd: RawFd,
    pool: &'a Pool,
    buf: Vec<u8>,
    walker: Walker,
    /// The event being replayed and its statement.
    event: usize,
    stmt: usize,
    /// Waiting for the response to the ROLLBACK after an error.
    rolling_back: bool,
    done: bool,
}

impl<'a> Conn<'a> {
    pub fn new(fd: RawFd, pool: &'a Pool) -> Self {
        let stmt = pool.events[0].0;
        Conn {
            fd,
            pool,
            buf: vec![0u8; 64 * 1024],
            walker: Walker::default(),
            event: 0,
            stmt,
            rolling_back: false,
            done: false,
        }
    }
}

const SEND: u64 = 1 << 63;

fn push(ring: &mut IoUring, e: &squeue::Entry) -> Result<(), String> {
    // SAFETY: the buffers an entry points at (a pool's bytes, a connection's buffer, the rollback
    // packet) outlive the ring's use of them: a connection's buffer is not resized while its recv is
    // in flight, and the ring is drained before any of them is dropped.
    unsafe { ring.submission().push(e) }.map_err(|_| "the submission queue is full".to_string())
}

/// Queues statement bytes `out` linked to a recv into the connection's buffer.
fn queue(ring: &mut IoUring, k: usize, c: &mut Conn<'_>, out: &[u8]) -> Result<(), String> {
    c.walker = Walker::default();
    let send = opcode::Send::new(types::Fd(c.fd), out.as_ptr(), out.len() as u32)
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .flags(squeue::Flags::IO_LINK)
        .user_data(SEND | k as u64);
    push(ring, &send)?;
    queue_recv(ring, k, c)
}

fn queue_recv(ring: &mut IoUring, k: usize, c: &mut Conn<'_>) -> Result<(), String> {
    let room = &mut c.buf[c.walker.have..];
    let recv = opcode::Recv::new(types::Fd(c.fd), room.as_mut_ptr(), room.len() as u32).build().user_data(k as u64);
    push(ring, &recv)
}

/// Replays the connections' pools until `deadline` or `stop`, all from one ring in this thread.
pub fn replay(conns: &mut [Conn<'_>], rollback: &[u8], deadline: Instant, stop: &AtomicBool) -> Result<Tally, String> {
    let entries = (4 * conns.len() as u32).next_power_of_two().max(8);
    let mut ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .map_err(|e| format!("io_uring_setup: {e}"))?;
    let mut t = Tally::default();
    for (k, c) in conns.iter_mut().enumerate() {
        let (s, e) = c.pool.stmts[c.stmt];
        let pool = c.pool;
        queue(&mut ring, k, c, &pool.bytes[s..e])?;
        t.queries += 1;
    }
    let mut in_flight = conns.len();
    let mut done = Vec::with_capacity(entries as usize);
    while in_flight > 0 {
        ring.submit_and_wait(1).map_err(|e| format!("io_uring_enter: {e}"))?;
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for &(data, res) in &done {
            let k = (data & !SEND) as usize;
            let c = &mut conns[k];
            if data & SEND != 0 {
                if res < 0 {
                    return Err(format!("send: {}", std::io::Error::from_raw_os_error(-res)));
                }
                continue;
            }
            match res {
                0 => return Err("the server closed the connection".into()),
                r if r < 0 => return Err(format!("recv: {}", std::io::Error::from_raw_os_error(-r))),
                n => c.walker.have += n as usize,
            }
            let Some(failed) = c.walker.walk(&mut c.buf) else {
                queue_recv(&mut ring, k, c)?;
                continue;
            };
            let pool = c.pool;
            if c.rolling_back {
                c.rolling_back = false;
                t.errors += 1;
                next_event(c, deadline, stop);
            } else if failed {
                c.rolling_back = true;
                queue(&mut ring, k, c, rollback)?;
                continue;
            } else {
                c.stmt += 1;
                if c.stmt == pool.events[c.event].1 {
                    t.events += 1;
                    next_event(c, deadline, stop);
                }
            }
            if c.done {
                in_flight -= 1;
            } else {
                let (s, e) = pool.stmts[c.stmt];
                queue(&mut ring, k, c, &pool.bytes[s..e])?;
                t.queries += 1;
            }
        }
    }
    Ok(t)
}

/// Moves to the next event, or ends the connection's run at the deadline (checked once per event).
fn next_event(c: &mut Conn<'_>, deadline: Instant, stop: &AtomicBool) {
    if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
        c.done = true;
        return;
    }
    c.event = (c.event + 1) % c.pool.events.len();
    c.stmt = c.pool.events[c.event].0;
}
