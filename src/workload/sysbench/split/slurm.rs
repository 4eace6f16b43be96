//! Clients as the tasks of one Slurm job step: `srun --ntasks N`, inside an allocation (`salloc`,
//! `sbatch`) or as a job of its own. srun labels each task's lines with its task id, broadcasts the
//! coordinator's line to every task's stdin, and says on its stderr when a task fails or is killed; the
//! other tasks go on (`--kill-on-bad-exit=0`). versus must be at the same path on every node (a shared
//! file system, as for a fleet).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::launch::{Clients, Event, Launcher, client_command};
use crate::error::{Error, Result};

/// Clients as tasks of one `srun` job step.
pub struct Slurm;

struct Step {
    events: Receiver<Event>,
    stdin: Option<ChildStdin>,
    pid: Pid,
    ended: Arc<Mutex<bool>>,
}

/// `K: text` of `srun --label` as (K, text).
fn labelled(line: &str) -> Option<(usize, &str)> {
    let (k, rest) = line.split_once(": ")?;
    Some((k.trim().parse().ok()?, rest))
}

/// srun passes a task's output on in pieces of at most 1024 bytes, each on a labelled line of its own: a
/// JSON message cut there does not parse to its end yet.
fn cut_short(text: &str) -> bool {
    text.starts_with('{') && serde_json::from_str::<serde_json::Value>(text).is_err_and(|e| e.is_eof())
}

/// The task and what happened to it, from srun's own `srun: error: NODE: task K: WHAT`.
fn task_news(line: &str) -> Option<(usize, String, String)> {
    let rest = line.strip_prefix("srun: error: ")?;
    let (node, rest) = rest.split_once(": task ")?;
    let (k, what) = rest.split_once(": ")?;
    let k: usize = k.trim().parse().ok()?;
    Some((k, node.to_string(), what.trim().to_string()))
}

fn read_stderr(stderr: impl std::io::Read, tx: Sender<Event>, n: usize, told: Arc<Mutex<Vec<bool>>>) -> String {
    let mut last: Vec<String> = vec![String::new(); n];
    let mut own = String::new();
    for line in BufReader::new(stderr).lines().map_while(std::result::Result::ok) {
        if let Some((k, node, what)) = task_news(&line) {
            if k < n {
                let detail = if last[k].is_empty() { String::new() } else { format!(": {}", last[k]) };
                told.lock().unwrap_or_else(|p| p.into_inner())[k] = true;
                let how = match what.strip_prefix("Exited") {
                    Some(rest) => format!("exited{rest} on {node}"),
                    None => format!("was {} on {node}", what.to_lowercase()),
                };
                let _ = tx.send(Event::Ended(k, format!("{how}{detail}")));
            }
        } else if let Some((k, text)) = labelled(&line).filter(|(k, _)| *k < n) {
            if !text.trim().is_empty() {
                last[k] = text.trim().to_string();
            }
        } else if !line.trim().is_empty() {
            own = line.trim().to_string();
        }
    }
    own
}

impl Launcher for Slurm {
    fn launch(&self, n: usize, args: &[OsString], env: &[(&str, String)]) -> Result<Box<dyn Clients>> {
        let exe =
            std::env::current_exe().map_err(|e| Error::Other(format!("cannot find versus's own program: {e}")))?;
        let mut srun = Command::new("srun");
        srun.arg(format!("--ntasks={n}"))
            .args(["--overcommit", "--label", "--input=all", "--kill-on-bad-exit=0", "--job-name=versus-clients"])
            .arg(&exe)
            .args(args);
        let mut child =
            client_command(&mut srun, &format!("{}/{n}", super::SLURM_INDEX), env).spawn().map_err(|e| {
                Error::option("--clients-on", format!("cannot start srun ({e}); is Slurm's client installed here?"))
            })?;
        let (tx, events) = mpsc::channel();
        let told = Arc::new(Mutex::new(vec![false; n]));
        let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
        let errors = {
            let (tx, told) = (tx.clone(), told.clone());
            std::thread::spawn(move || read_stderr(stderr, tx, n, told))
        };
        let ended = Arc::new(Mutex::new(false));
        let step =
            Step { events, stdin: child.stdin.take(), pid: Pid::from_raw(child.id() as i32), ended: ended.clone() };
        std::thread::spawn(move || {
            let mut pending: Vec<String> = vec![String::new(); n];
            for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
                if let Some((k, text)) = labelled(&line).filter(|(k, _)| *k < n) {
                    pending[k].push_str(text);
                    if !cut_short(&pending[k]) {
                        let _ = tx.send(Event::Line(k, std::mem::take(&mut pending[k])));
                    }
                }
            }
            let own = errors.join().unwrap_or_default();
            let status = child.wait();
            *ended.lock().unwrap_or_else(|p| p.into_inner()) = true;
            let how = match status {
                Ok(s) => super::ending(s, &own),
                Err(e) => format!("could not be waited for: {e}"),
            };
            let told = told.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for (k, _) in told.iter().enumerate().filter(|(_, t)| !**t) {
                let _ = tx.send(Event::Ended(k, format!("ended with its job step (srun {how})")));
            }
        });
        Ok(Box::new(step))
    }
}

impl Clients for Step {
    fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    fn send_all(&mut self, line: &str) {
        if let Some(w) = &mut self.stdin
            && (w.write_all(line.as_bytes()).is_err() || w.flush().is_err())
        {
            self.stdin = None;
        }
    }

    fn interrupt(&mut self) {
        // srun passes SIGTERM on to every task, which reports what it measured as after a Ctrl-C.
        if !*self.ended.lock().unwrap_or_else(|p| p.into_inner()) {
            let _ = kill(self.pid, Signal::SIGTERM);
        }
    }

    fn host(&self, part: usize) -> String {
        format!("Slurm task {part}")
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        self.stdin = None;
        if !*self.ended.lock().unwrap_or_else(|p| p.into_inner()) {
            // Twice within a second: srun cancels the step.
            let _ = kill(self.pid, Signal::SIGINT);
            let _ = kill(self.pid, Signal::SIGINT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srun_lines_are_read_by_task() {
        assert_eq!(labelled("0: {\"a\":1}"), Some((0, "{\"a\":1}")));
        assert_eq!(labelled(" 3: text: with colon"), Some((3, "text: with colon")));
        assert_eq!(labelled("srun: job 12 queued"), None);
        assert_eq!(
            task_news("srun: error: node1: task 1: Killed"),
            Some((1, "node1".to_string(), "Killed".to_string()))
        );
        assert_eq!(
            task_news("srun: error: n2: task 0: Exited with exit code 1"),
            Some((0, "n2".to_string(), "Exited with exit code 1".to_string()))
        );
        assert_eq!(task_news("srun: error: something else"), None);
        assert!(cut_short("{\"done\":{\"a\"") && !cut_short("{\"done\":1}") && !cut_short("WARNING: x"));
    }
}
