//! Following a fleet job to its end: what to do about a block whose task has left the queue. The
//! results store, not the scheduler, knows whether a block was measured: a task killed mid-block
//! (SIGKILL, a lost node) leaves its attempt `running` and its block incomplete, and is run again. A
//! task cancelled on its own (`scancel JOB_K`, also `--signal=KILL`, which Slurm delivers as SIGTERM
//! first) is run again while the rest of its job goes on; when the whole job was cancelled, nothing is.
//! How a cancelled task's attempt ends depends on timing: versus stops cleanly and records it
//! `failed` (interrupted) when it can within Slurm's KillWait, and is SIGKILLed with its attempt still
//! `running` when it cannot. The scheduler's final state (`CANCELLED`) is the same either way, so it
//! decides: both are "stopped", never "died". A task that refused its block or whose runs failed is
//! not run again: a retry would not change that; nor is a task that reached its time limit (TIMEOUT:
//! the limit is twice the block's estimate plus ten minutes, so the same limit would be reached again).

use std::time::{Duration, Instant};

use crate::store::{Attempt, AttemptStatus};

use super::slurm::shell_quote;
use super::{EXIT_SPEC_ERROR, FleetJob};

/// Times the follower puts one block's task back in the queue.
pub const MAX_REQUEUES: u32 = 3;

/// How a task ended, as far as the scheduler still knows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskEnd {
    /// Its final state (`COMPLETED`, `FAILED`, `CANCELLED`, `NODE_FAIL` …), when still known.
    pub state: Option<String>,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
}

impl TaskEnd {
    /// Stopped by the scheduler (cancelled, preempted), which signals SIGTERM first and SIGKILL after
    /// its grace period. (Out of time is stopped the same way, but is never run again: see [`judge`].)
    fn stopped(&self) -> bool {
        matches!(self.state.as_deref(), Some("CANCELLED" | "PREEMPTED"))
    }
}

/// What the rest of an ended task's job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Other tasks are still queued or running, and none was cancelled before it started.
    GoesOn,
    /// The whole job was cancelled: a task was cancelled before it started its block.
    Cancelled,
    /// Nothing else is left in the queue: the task was the job's last. Slurm cannot tell a whole-job
    /// cancel (`scancel JOB`) from a cancel of that task alone (`scancel JOB_K`) then.
    Ended,
}

/// What to do about an ended task's block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// An attempt measured the block to the end.
    Complete,
    /// The task died before it finished the block: run it again (why).
    Requeue(String),
    /// The block stays incomplete: running the task again would not help, or it ran often enough (why).
    Incomplete(String),
}

/// The verdict on `block` from its `attempts` (any order; other blocks' are ignored), how its task
/// ended, how often the follower has requeued it already, and what the rest of its job does.
pub fn judge(block: u32, attempts: &[Attempt], end: &TaskEnd, requeued: u32, job: Job) -> Verdict {
    let mine: Vec<&Attempt> = attempts.iter().filter(|a| a.block == block).collect();
    if mine.iter().any(|a| a.status == AttemptStatus::Done) {
        return Verdict::Complete;
    }
    let last = mine.iter().max_by_key(|a| (a.attempt, a.started_at, a.id));
    let n = last.map_or(0, |a| a.attempt);
    // The time limit is twice the block's estimate plus ten minutes (`FleetJob::time_limit`): a task
    // that reaches it is stuck or far slower than estimated on this host, and a retry under the same
    // limit would most likely time out again, holding a node for as long each time.
    if end.state.as_deref() == Some("TIMEOUT") {
        let during = if n == 0 { "before it started the block".to_string() } else { format!("during attempt {n}") };
        return Verdict::Incomplete(format!(
            "its task reached its time limit (TIMEOUT) {during}; not requeued: a retry under the same limit would \
             most likely time out again (see the task's output; raise the limit with `scontrol update` before \
             running it again)"
        ));
    }
    let retry = match last.map(|a| a.status) {
        // Killed after the scheduler's grace period, before versus could record the interruption.
        Some(AttemptStatus::Running | AttemptStatus::Abandoned) if end.stopped() => match stopped(n, end, job) {
            Ok(why) => why,
            Err(v) => return v,
        },
        Some(AttemptStatus::Running | AttemptStatus::Abandoned) => format!("its task died during attempt {n}"),
        Some(AttemptStatus::Rejected) => "its host's canary was an outlier".to_string(),
        Some(AttemptStatus::Failed) => {
            let why = last.and_then(|a| a.error.clone()).unwrap_or_else(|| "runs failed".into());
            if why != "interrupted" || !end.stopped() {
                return Verdict::Incomplete(format!("attempt {n} failed: {why}"));
            }
            match stopped(n, end, job) {
                Ok(why) => why,
                Err(v) => return v,
            }
        }
        Some(AttemptStatus::Done) => unreachable!("handled above"),
        None if end.exit_code == Some(EXIT_SPEC_ERROR) => {
            return Verdict::Incomplete(format!(
                "its task refused the block (exit code {EXIT_SPEC_ERROR}: the file changed or is invalid; see the task's output)"
            ));
        }
        None if end.state.as_deref() == Some("CANCELLED") => {
            return Verdict::Incomplete("its task was cancelled before it started the block".into());
        }
        None => match end.exit_code {
            Some(code) => format!("its task exited with code {code} before it started the block"),
            None => "its task ended before it started the block".to_string(),
        },
    };
    if requeued >= MAX_REQUEUES {
        Verdict::Incomplete(format!("{retry}; requeued {requeued} times already"))
    } else {
        Verdict::Requeue(retry)
    }
}

/// Why a task the scheduler stopped during attempt `n` is run again, or the verdict that it is not.
fn stopped(n: u32, end: &TaskEnd, job: Job) -> Result<String, Verdict> {
    let state = end.state.as_deref().unwrap_or_default();
    match job {
        Job::Cancelled => Err(Verdict::Incomplete(format!("attempt {n} was stopped: its job was cancelled"))),
        // The user's cancel of what was left of the job must not be undone; a task cancelled alone is
        // one command away from running again, and the follower says which.
        Job::Ended if state == "CANCELLED" => Err(Verdict::Incomplete(format!(
            "its task was cancelled during attempt {n} and was the last of its job: taken as the whole job \
             cancelled (Slurm does not tell `scancel JOB` from `scancel JOB_TASK` then), not requeued"
        ))),
        Job::GoesOn | Job::Ended => Ok(format!("its task was stopped ({state}) during attempt {n}")),
    }
}

/// What the rest of the job does, seen from the follower: whether a task was cancelled before it
/// started its block (a whole-job cancel does that; a pending task cancelled alone is taken the same
/// way), and how many of its tasks are still queued.
pub fn job_context(cancelled_before_start: bool, queued: usize) -> Job {
    if cancelled_before_start {
        Job::Cancelled
    } else if queued == 0 {
        Job::Ended
    } else {
        Job::GoesOn
    }
}

/// A time during which what the follower reads (the results store, the queue) does not answer: a
/// store restarting is waited for, up to a bound, instead of ending the follower at its first error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outage {
    since: Option<Instant>,
}

/// What the follower does about a failed read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutageStep {
    /// The first failure: say so once, then wait.
    Began,
    /// Still failing, within the bound: wait quietly.
    Goes,
    /// Failing for longer than the bound (for how long): give up on the blocks not yet judged.
    GaveUp(Duration),
}

impl Outage {
    /// A read failed at `now`; `limit` bounds the wait.
    pub fn failed(&mut self, now: Instant, limit: Duration) -> OutageStep {
        match self.since {
            None => {
                self.since = Some(now);
                if limit.is_zero() { OutageStep::GaveUp(Duration::ZERO) } else { OutageStep::Began }
            }
            Some(t) if now.duration_since(t) >= limit => OutageStep::GaveUp(now.duration_since(t)),
            Some(_) => OutageStep::Goes,
        }
    }

    /// A read succeeded at `now`: how long the outage it ends lasted, if there was one.
    pub fn recovered(&mut self, now: Instant) -> Option<Duration> {
        self.since.take().map(|t| now.duration_since(t))
    }
}

/// What finishes the `incomplete` blocks of `job`: the job submitted again (its complete blocks are
/// skipped), or each block run by hand.
pub fn finish_command(job: &FleetJob, incomplete: &[u32]) -> String {
    let file = shell_quote(&job.file.display().to_string());
    let db = shell_quote(&job.store);
    let mut fleet = format!("versus fleet slurm {file} --hosts {}", job.hosts);
    for (flag, v) in [("--partition", &job.partition), ("--constraint", &job.constraint)] {
        if let Some(v) = v {
            fleet += &format!(" {flag} {}", shell_quote(v));
        }
    }
    let block = match incomplete {
        [k] => k.to_string(),
        _ => "K".to_string(),
    };
    format!(
        "finish them with `{fleet} --db {db} --submit` (complete blocks are skipped), or one block at a time \
         with `versus run {file} --block {block} --plan-id {} --db {db}`",
        job.plan_id
    )
}

/// `JobState` and `ExitCode` from one line of `scontrol show job -o`.
pub fn parse_scontrol(line: &str) -> TaskEnd {
    let field = |key: &str| line.split_whitespace().find_map(|w| w.strip_prefix(key)).map(str::to_string);
    TaskEnd {
        state: field("JobState="),
        exit_code: field("ExitCode=").and_then(|c| c.split(':').next().and_then(|n| n.parse().ok())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(block: u32, attempt: u32, status: AttemptStatus) -> Attempt {
        Attempt {
            id: i64::from(block * 10 + attempt),
            block,
            attempt,
            status,
            host: Some("n1".into()),
            host_class: None,
            canary: None,
            error: (status == AttemptStatus::Failed).then(|| "interrupted".to_string()),
            started_at: i64::from(attempt),
        }
    }

    fn ended(state: &str, code: i32) -> TaskEnd {
        TaskEnd { state: Some(state.into()), exit_code: Some(code) }
    }

    #[test]
    fn a_block_killed_mid_way_is_requeued_until_the_limit() {
        let a = [attempt(0, 1, AttemptStatus::Abandoned), attempt(0, 2, AttemptStatus::Running)];
        let v = judge(0, &a, &ended("FAILED", 0), 0, Job::Ended);
        assert_eq!(v, Verdict::Requeue("its task died during attempt 2".into()));
        let v = judge(0, &a, &ended("FAILED", 0), MAX_REQUEUES, Job::GoesOn);
        assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("requeued 3 times")), "{v:?}");
    }

    #[test]
    fn a_done_attempt_completes_the_block_whatever_came_before_or_after() {
        let a = [
            attempt(0, 1, AttemptStatus::Abandoned),
            attempt(0, 2, AttemptStatus::Done),
            attempt(1, 1, AttemptStatus::Running),
        ];
        assert_eq!(judge(0, &a, &TaskEnd::default(), 5, Job::GoesOn), Verdict::Complete);
        assert!(matches!(judge(1, &a, &TaskEnd::default(), 0, Job::GoesOn), Verdict::Requeue(_)));
    }

    #[test]
    fn a_task_cancelled_alone_is_requeued_but_not_when_its_job_was_cancelled() {
        // Stopped cleanly (interrupted recorded) or SIGKILLed after KillWait (attempt left running): the
        // scheduler's state decides, so both read the same.
        for status in [AttemptStatus::Failed, AttemptStatus::Running] {
            let stopped = [attempt(2, 1, status)];
            assert_eq!(
                judge(2, &stopped, &ended("CANCELLED", 0), 0, Job::GoesOn),
                Verdict::Requeue("its task was stopped (CANCELLED) during attempt 1".into()),
                "{status:?}"
            );
            assert_eq!(
                judge(2, &stopped, &ended("CANCELLED", 0), 0, Job::Cancelled),
                Verdict::Incomplete("attempt 1 was stopped: its job was cancelled".into()),
                "{status:?}"
            );
            let v = judge(2, &stopped, &ended("CANCELLED", 0), MAX_REQUEUES, Job::GoesOn);
            assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("requeued 3 times")), "{v:?}");
        }
        // Interrupted, but the task exited on its own (e.g. Ctrl-C in an interactive allocation).
        let stopped = [attempt(2, 1, AttemptStatus::Failed)];
        assert!(matches!(judge(2, &stopped, &ended("FAILED", 1), 0, Job::GoesOn), Verdict::Incomplete(_)));
    }

    #[test]
    fn the_last_task_cancelled_is_taken_as_the_job_cancelled_but_preempted_is_requeued() {
        for status in [AttemptStatus::Failed, AttemptStatus::Running] {
            let last = [attempt(4, 1, status)];
            let v = judge(4, &last, &ended("CANCELLED", 0), 0, Job::Ended);
            assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("last of its job")), "{v:?}");
            assert_eq!(
                judge(4, &last, &ended("PREEMPTED", 0), 0, Job::Ended),
                Verdict::Requeue("its task was stopped (PREEMPTED) during attempt 1".into())
            );
            assert!(matches!(judge(4, &last, &ended("PREEMPTED", 0), 0, Job::Cancelled), Verdict::Incomplete(_)));
        }
        // Killed outright as the job's last task: nobody cancelled anything, it is run again.
        let killed = [attempt(4, 1, AttemptStatus::Running)];
        assert_eq!(
            judge(4, &killed, &ended("FAILED", 0), 0, Job::Ended),
            Verdict::Requeue("its task died during attempt 1".into())
        );
        assert_eq!(job_context(true, 3), Job::Cancelled);
        assert_eq!(job_context(true, 0), Job::Cancelled);
        assert_eq!(job_context(false, 0), Job::Ended);
        assert_eq!(job_context(false, 2), Job::GoesOn);
    }

    #[test]
    fn a_task_out_of_time_is_never_requeued() {
        // Stopped cleanly (interrupted recorded), SIGKILLed after the grace period, or before its first
        // attempt: whatever the job does and however often it was requeued for other reasons.
        let cases: [&[Attempt]; 4] = [
            &[attempt(1, 1, AttemptStatus::Failed)],
            &[attempt(1, 1, AttemptStatus::Running)],
            &[attempt(1, 1, AttemptStatus::Abandoned), attempt(1, 2, AttemptStatus::Running)],
            &[],
        ];
        for attempts in cases {
            for job in [Job::GoesOn, Job::Ended, Job::Cancelled] {
                for requeued in [0, 1] {
                    let v = judge(1, attempts, &ended("TIMEOUT", 0), requeued, job);
                    assert!(
                        matches!(&v, Verdict::Incomplete(w) if w.contains("time limit (TIMEOUT)") && w.contains("not requeued")),
                        "{attempts:?} {job:?}: {v:?}"
                    );
                }
            }
        }
        let v = judge(1, &[attempt(1, 2, AttemptStatus::Running)], &ended("TIMEOUT", 0), 0, Job::GoesOn);
        assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("during attempt 2")), "{v:?}");
        // A block an attempt finished is complete even when its task then ran out of time.
        let done = [attempt(1, 1, AttemptStatus::Done)];
        assert_eq!(judge(1, &done, &ended("TIMEOUT", 0), 0, Job::GoesOn), Verdict::Complete);
    }

    #[test]
    fn refused_failed_or_cancelled_before_starting_is_not_requeued() {
        let mut failed = attempt(2, 1, AttemptStatus::Failed);
        failed.error = Some("1 run(s) failed".into());
        assert_eq!(
            judge(2, &[failed], &ended("FAILED", 1), 0, Job::GoesOn),
            Verdict::Incomplete("attempt 1 failed: 1 run(s) failed".into())
        );
        let v = judge(2, &[], &ended("FAILED", 3), 0, Job::GoesOn);
        assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("exit code 3")), "{v:?}");
        let v = judge(2, &[], &ended("CANCELLED", 0), 0, Job::GoesOn);
        assert!(matches!(&v, Verdict::Incomplete(w) if w.contains("cancelled")), "{v:?}");
        // A task that died before its first attempt (no state left: purged) is run again.
        assert!(matches!(judge(2, &[], &TaskEnd::default(), 0, Job::GoesOn), Verdict::Requeue(_)));
        assert!(matches!(judge(2, &[], &ended("NODE_FAIL", 0), 1, Job::GoesOn), Verdict::Requeue(_)));
        let rejected = [attempt(3, 1, AttemptStatus::Rejected)];
        let v = judge(3, &rejected, &ended("COMPLETED", 75), 0, Job::GoesOn);
        assert!(matches!(&v, Verdict::Requeue(w) if w.contains("canary")), "{v:?}");
    }

    #[test]
    fn an_outage_is_announced_once_waited_for_and_given_up_after_its_bound() {
        let t0 = Instant::now();
        let limit = Duration::from_secs(60);
        let mut o = Outage::default();
        assert_eq!(o.recovered(t0), None);
        assert_eq!(o.failed(t0, limit), OutageStep::Began);
        assert_eq!(o.failed(t0 + Duration::from_secs(30), limit), OutageStep::Goes);
        assert_eq!(o.recovered(t0 + Duration::from_secs(40)), Some(Duration::from_secs(40)));
        // A new outage starts its own clock.
        let t1 = t0 + Duration::from_secs(100);
        assert_eq!(o.failed(t1, limit), OutageStep::Began);
        assert_eq!(o.failed(t1 + Duration::from_secs(59), limit), OutageStep::Goes);
        assert_eq!(o.failed(t1 + Duration::from_secs(61), limit), OutageStep::GaveUp(Duration::from_secs(61)));
        assert_eq!(Outage::default().failed(t0, Duration::ZERO), OutageStep::GaveUp(Duration::ZERO));
    }

    #[test]
    fn scontrol_lines() {
        let line = "JobId=12 ArrayJobId=11 ArrayTaskId=0 JobName=versus-x UserId=root(0) JobState=CANCELLED \
                    Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:9";
        assert_eq!(parse_scontrol(line), TaskEnd { state: Some("CANCELLED".into()), exit_code: Some(0) });
        assert_eq!(parse_scontrol("JobState=FAILED ExitCode=3:0").exit_code, Some(3));
        assert_eq!(parse_scontrol(""), TaskEnd::default());
    }
}
