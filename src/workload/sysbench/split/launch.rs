//! Where the clients of a split load run. Each place is one [`Launcher`] in its own file; the
//! coordinator talks to every one of them the same way: lines in, one line out to all, and the news of
//! a client that ended.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;

use crate::error::Result;

/// What the coordinator hears from its clients.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Client `.0` wrote line `.1` on its stdout.
    Line(usize, String),
    /// Client `.0` ended; `.1` says how (exit status, and its last line on stderr).
    Ended(usize, String),
}

/// Clients that were started.
pub trait Clients {
    /// What they say, in the order it arrived.
    fn events(&self) -> &Receiver<Event>;
    /// Sends `line` to every client still running.
    fn send_all(&mut self, line: &str);
    /// Asks every client still running to stop and report what it measured (SIGINT).
    fn interrupt(&mut self);
    /// The host client `part` runs on.
    fn host(&self, part: usize) -> String;
}

/// A place to run the clients of one load.
pub trait Launcher {
    /// Starts `n` clients, each running this program with `args` and `env` besides its own environment,
    /// knowing its part through [`super::PART_ENV`]. Dropping the returned clients kills those still
    /// running.
    fn launch(&self, n: usize, args: &[OsString], env: &[(&str, String)]) -> Result<Box<dyn Clients>>;
}

/// `cmd` set up to run clients: `part` (INDEX/COUNT) in [`super::PART_ENV`], `env` added, its stdio
/// piped to the coordinator, and a process group of its own (a Ctrl-C at the terminal reaches only the
/// coordinator, which passes it on once).
pub fn client_command<'a>(cmd: &'a mut Command, part: &str, env: &[(&str, String)]) -> &'a mut Command {
    cmd.env(super::PART_ENV, part)
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
}
