//! Clients as processes on this host: for tests, and for hosts with more cores than one client
//! process keeps busy. Each runs in its own process group, so that a Ctrl-C at the terminal reaches
//! only the coordinator, which passes it on once.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::launch::{Clients, Event, Launcher, client_command};
use crate::error::{Error, Result};

/// Clients as child processes of this one.
pub struct Local;

struct Children {
    events: Receiver<Event>,
    stdins: Vec<Option<ChildStdin>>,
    pids: Vec<Pid>,
    /// Set once a client was reaped: its pid may belong to another process from then on.
    ended: Arc<Mutex<Vec<bool>>>,
    host: String,
}

impl Launcher for Local {
    fn launch(&self, n: usize, args: &[OsString], env: &[(&str, String)]) -> Result<Box<dyn Clients>> {
        let exe =
            std::env::current_exe().map_err(|e| Error::Other(format!("cannot find versus's own program: {e}")))?;
        let (tx, events) = mpsc::channel();
        let ended = Arc::new(Mutex::new(vec![false; n]));
        let mut children =
            Children { events, stdins: Vec::new(), pids: Vec::new(), ended: ended.clone(), host: super::this_host() };
        for part in 0..n {
            let mut child = client_command(Command::new(&exe).args(args), &format!("{part}/{n}"), env)
                .spawn()
                .map_err(|e| Error::Other(format!("cannot start client {} of {n}: {e}", part + 1)))?;
            children.pids.push(Pid::from_raw(child.id() as i32));
            children.stdins.push(child.stdin.take());
            let (stdout, mut stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
            let errors = std::thread::spawn(move || {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                text
            });
            let (tx, ended) = (tx.clone(), ended.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    match line {
                        Ok(l) => {
                            let _ = tx.send(Event::Line(part, l));
                        }
                        Err(_) => break,
                    }
                }
                let errors = errors.join().unwrap_or_default();
                let status = child.wait();
                ended.lock().unwrap_or_else(|p| p.into_inner())[part] = true;
                let how = match status {
                    Ok(s) => super::ending(s, &errors),
                    Err(e) => format!("could not be waited for: {e}"),
                };
                let _ = tx.send(Event::Ended(part, how));
            });
        }
        Ok(Box::new(children))
    }
}

impl Children {
    fn signal(&self, sig: Signal) {
        let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        for (pid, done) in self.pids.iter().zip(ended.iter()) {
            if !done {
                let _ = kill(*pid, sig);
            }
        }
    }
}

impl Clients for Children {
    fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    fn send_all(&mut self, line: &str) {
        for stdin in self.stdins.iter_mut() {
            if let Some(w) = stdin
                && (w.write_all(line.as_bytes()).is_err() || w.flush().is_err())
            {
                *stdin = None;
            }
        }
    }

    fn interrupt(&mut self) {
        self.signal(Signal::SIGINT);
    }

    fn host(&self, _part: usize) -> String {
        self.host.clone()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.stdins.clear();
        self.signal(Signal::SIGKILL);
    }
}
