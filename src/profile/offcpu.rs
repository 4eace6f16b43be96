//! Where the server waited: off-CPU time per stack, from the scheduler's `sched:sched_switch`
//! tracepoint recorded on every CPU with call graphs.
//!
//! A server thread switched out leaves a record in its own context, with its stack at that moment
//! (an fsync, a mutex, a condition variable, a read from the client); the thread switched in later is
//! named in another record's `next_pid`. The time between the two is what the thread spent off the
//! CPU, and it is added to the stack it left with. Each completed switch-out counts as one sample.
//! A thread preempted while runnable (state `R`) waited for a CPU, not for the server: its stacks
//! carry a `[preempted]` frame under the root, so the two kinds of off-CPU time stay apart.
//!
//! Every stack ends in the scheduler (`__schedule`, `schedule`, `io_schedule_timeout` …), which says
//! nothing about why the thread stopped; those frames are dropped from the leaf end, so that a wait's
//! own frame is the call it blocked in (a journal commit for an fsync, a futex for a mutex, a socket
//! read for a client), and the self costs of waits say something.
//!
//! This needs every CPU's records (the switch-in is recorded in the context of whatever ran
//! before), so only where the kernel lets versus sample every CPU (root).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

use super::fold::ROOT;

/// The tracepoint recorded.
pub const EVENT: &str = "sched:sched_switch";

/// The frame under the root of stacks switched out while runnable (waiting for a CPU).
pub const PREEMPTED: &str = "[preempted]";

/// One `perf script` record's header, as far as folding needs it.
#[derive(Debug, PartialEq)]
struct Switch {
    /// The process (thread group) of the task switched out.
    pid: u32,
    /// The task switched out.
    tid: u32,
    /// When, in nanoseconds.
    time_ns: u64,
    /// The task switched in.
    next: u32,
    /// The state the task left in (`S`, `D`, `R`, `R+` …).
    state: String,
}

/// Reads a record header: `comm PID/TID SECONDS.MICROS: sched:sched_switch: prev_comm=… prev_state=S
/// ==> next_comm=… next_pid=N …`.
fn header(line: &str) -> Option<Switch> {
    let (left, fields) = line.split_once(": sched:sched_switch:")?;
    let mut tokens = left.split_whitespace().rev();
    let time = tokens.next()?;
    let (pid, tid) = tokens.next()?.split_once('/')?;
    let (secs, frac) = time.split_once('.').unwrap_or((time, "0"));
    let frac_ns: u64 = format!("{frac:0<9}").get(..9)?.parse().ok()?;
    let field = |name: &str| fields.split_whitespace().find_map(|f| f.strip_prefix(name));
    Some(Switch {
        pid: pid.parse().ok()?,
        tid: tid.parse().ok()?,
        time_ns: secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac_ns)?,
        next: field("next_pid=")?.parse().ok()?,
        state: field("prev_state=").unwrap_or("").to_string(),
    })
}

/// A frame line (`ADDR SYMBOL (OBJECT)`) as the on-CPU profiles name frames: the symbol; a kernel
/// symbol with `_[k]`; an unnamed address as its object file in brackets.
fn frame(line: &str) -> Option<String> {
    let line = line.trim();
    let (_, rest) = line.split_once(char::is_whitespace)?;
    let (sym, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (rest[..i].trim(), &rest[i + 2..rest.len() - 1]),
        _ => (rest.trim(), ""),
    };
    if dso == "[kernel.kallsyms]" {
        return Some(format!("{sym}_[k]"));
    }
    if sym.is_empty() || sym == "[unknown]" {
        let object = dso.rsplit('/').next().filter(|o| !o.is_empty()).unwrap_or("unknown");
        return Some(format!("[{}]", object.trim_matches(['[', ']'])));
    }
    Some(sym.to_string())
}

/// Thread names beyond which no filter is made (the kernel's filter text stays short).
const MAX_FILTER_NAMES: usize = 64;

/// A tracepoint filter that keeps the switches in which a thread named like one of the server's
/// threads (`names`) leaves or takes the CPU, so the kernel drops the client's and everybody else's
/// switches before their stacks are copied. `None` (record every switch) when there are no names, too
/// many, or one that the filter's quoting cannot carry. A thread created later under another name is
/// then missed; the server's threads keep their names (MariaDB names them all after the process).
pub fn thread_filter(names: &[String]) -> Option<String> {
    let clean = |n: &String| !n.is_empty() && !n.contains(['"', '\\', '\n']);
    if names.is_empty() || names.len() > MAX_FILTER_NAMES || !names.iter().all(clean) {
        return None;
    }
    let terms: Vec<String> =
        names.iter().flat_map(|n| [format!("prev_comm == \"{n}\""), format!("next_comm == \"{n}\"")]).collect();
    Some(terms.join(" || "))
}

/// True for a kernel frame of the scheduler itself (the top of every off-CPU stack).
fn is_scheduler(frame: &str) -> bool {
    frame.strip_suffix("_[k]").is_some_and(|f| {
        ["__schedule", "schedule", "io_schedule", "preempt_schedule", "__cond_resched", "_cond_resched"]
            .iter()
            .any(|p| f.starts_with(p))
    })
}

/// Folds the `perf script` output of a `sched:sched_switch` recording (fields `comm,pid,tid,time,
/// event,trace,ip,sym,dso`) as it streams: the off-CPU nanoseconds of process `server`'s threads per
/// stack, sorted by stack, and the number of completed switch-outs.
///
/// Errors: unreadable input. Records it cannot read are skipped.
pub fn fold_switches(input: impl std::io::Read, server: u32) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let reader = std::io::BufReader::new(input);
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    // Server threads switched out and not yet back: tid → (when, stack).
    let mut away: HashMap<u32, (u64, String)> = HashMap::new();
    let mut samples = 0u64;
    // The record being read: its header, and its frames (leaf first) when it is the server's.
    let mut current: Option<(Switch, Vec<String>)> = None;
    let mut finish = |rec: Option<(Switch, Vec<String>)>, away: &mut HashMap<u32, (u64, String)>| {
        let Some((s, frames)) = rec else { return };
        if let Some((left, stack)) = away.remove(&s.next)
            && s.time_ns >= left
        {
            let e = out.entry(stack).or_default();
            *e = e.saturating_add(s.time_ns - left);
            samples += 1;
        }
        if s.pid == server && s.tid != 0 {
            let mut stack = String::from(ROOT);
            if s.state.starts_with('R') {
                stack.push(';');
                stack.push_str(PREEMPTED);
            }
            let keep = frames.len() - frames.iter().take_while(|f| is_scheduler(f)).count().min(frames.len() - 1);
            for f in frames[frames.len() - keep..].iter().rev() {
                stack.push(';');
                stack.push_str(f);
            }
            away.insert(s.tid, (s.time_ns, stack));
        }
    };
    for line in reader.lines() {
        let line = line.map_err(|e| format!("perf script output could not be read: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let Some((s, frames)) = current.as_mut()
                && s.pid == server
                && let Some(f) = frame(&line)
            {
                frames.push(f);
            }
            continue;
        }
        finish(current.take(), &mut away);
        current = header(&line).map(|s| (s, Vec::new()));
    }
    finish(current.take(), &mut away);
    Ok((out.into_iter().collect(), samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
mariadbd 100/101 10.000000: sched:sched_switch: prev_comm=mariadbd prev_pid=101 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
\tffffffff82249848 __schedule ([kernel.kallsyms])
\tffffffff8100aaaa do_fsync ([kernel.kallsyms])
\t           ee137 fdatasync (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          146f7c [unknown] (/usr/sbin/mariadbd)

one connection 100/102 10.000500: sched:sched_switch: prev_comm=one connection prev_pid=102 prev_prio=120 prev_state=R+ ==> next_comm=sysbench next_pid=7 next_prio=120
\tffffffff82249848 __schedule ([kernel.kallsyms])
\t          146f00 JOIN::exec (/usr/sbin/mariadbd)

swapper     0/0     10.002000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=mariadbd next_pid=101 next_prio=120
\tffffffff82249848 __schedule ([kernel.kallsyms])

sysbench 7/7 10.002500: sched:sched_switch: prev_comm=sysbench prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=one connection next_pid=102 next_prio=120
\t          146f7c recv (/usr/lib/x86_64-linux-gnu/libc.so.6)

mariadbd 100/101 10.003000: sched:sched_switch: prev_comm=mariadbd prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
\tffffffff82249848 __schedule ([kernel.kallsyms])
";

    #[test]
    fn off_cpu_time_goes_to_the_stack_a_server_thread_left_with() {
        let (stacks, samples) = fold_switches(SCRIPT.as_bytes(), 100).unwrap();
        assert_eq!(samples, 2, "{stacks:?}");
        assert_eq!(
            stacks,
            vec![
                ("server;[mariadbd];fdatasync;do_fsync_[k]".to_string(), 2_000_000),
                ("server;[preempted];JOIN::exec".to_string(), 2_000_000),
            ]
        );
    }

    #[test]
    fn headers_and_frames_are_read_and_odd_lines_skipped() {
        let s = header("a b 100/101 12.5: sched:sched_switch: prev_state=S ==> next_comm=x next_pid=9").unwrap();
        assert_eq!((s.pid, s.tid, s.time_ns, s.next, s.state.as_str()), (100, 101, 12_500_000_000, 9, "S"));
        assert_eq!(header("garbage"), None);
        assert_eq!(frame("\t  7f00 [unknown] ([vdso])").unwrap(), "[vdso]");
        assert_eq!(frame("\t  7f00 operator new[] (/usr/lib/libstdc++.so.6)").unwrap(), "operator new[]");
        let (stacks, n) = fold_switches("junk\n\tjunk\n".as_bytes(), 1).unwrap();
        assert!(stacks.is_empty() && n == 0);
    }

    #[test]
    fn the_filter_names_each_thread_name_both_ways_or_gives_up() {
        let names = vec!["mariadbd".to_string(), "ib_io_wr-1".to_string()];
        assert_eq!(
            thread_filter(&names).unwrap(),
            "prev_comm == \"mariadbd\" || next_comm == \"mariadbd\" || prev_comm == \"ib_io_wr-1\" || \
             next_comm == \"ib_io_wr-1\""
        );
        assert_eq!(thread_filter(&[]), None);
        assert_eq!(thread_filter(&["a\"b".to_string()]), None);
        assert_eq!(thread_filter(&vec!["t".to_string(); 65]), None);
    }

    #[test]
    fn the_scheduler_frames_are_dropped_but_never_the_whole_stack() {
        assert!(is_scheduler("__schedule_[k]") && is_scheduler("io_schedule_timeout_[k]"));
        assert!(!is_scheduler("schedule") && !is_scheduler("jbd2_log_wait_commit_[k]"));
        let only = "mariadbd 100/101 1.0: sched:sched_switch: prev_state=S ==> next_comm=x next_pid=0\n\tffff __schedule ([kernel.kallsyms])\n\nx 0/0 1.5: sched:sched_switch: prev_state=R ==> next_comm=m next_pid=101\n";
        let (stacks, _) = fold_switches(only.as_bytes(), 100).unwrap();
        assert_eq!(stacks, vec![("server;__schedule_[k]".to_string(), 500_000_000)]);
    }
}
