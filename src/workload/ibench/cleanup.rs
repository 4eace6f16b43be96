//! The flush-and-wait cleanup between l.i2 and the query steps (the reference's "vac" step, MySQL
//! variant): drop the binary logs, ANALYZE every table in the background, make InnoDB flush dirty
//! pages aggressively, wait, then restore the settings. The query steps then start from a similar
//! state on every server.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::options::Step;
use super::result::StepStatus;
use super::{Env, StepObserver, measure::ServerProbe, result::StepResult};
use crate::driver::Connection;

/// InnoDB settings changed during the wait, with the values they get; saved and restored. Set in this
/// order (the low-water mark first, so it never exceeds the maximum) and restored in reverse.
const INNODB_FLUSH: [(&str, &str); 3] =
    [("innodb_max_dirty_pages_pct_lwm", "1"), ("innodb_max_dirty_pages_pct", "1"), ("innodb_idle_flush_pct", "100")];

fn first(c: &mut dyn Connection, sql: &str) -> Result<Option<String>, String> {
    c.query_rows(sql).map(|r| r.first).map_err(|e| format!("{sql}: {e}"))
}

/// Runs the cleanup; like the measured steps, failures are part of the result.
pub fn cleanup(env: &mut Env<'_>, probe: &mut dyn ServerProbe, obs: &mut dyn StepObserver) -> StepResult {
    let step = Step::Cleanup;
    let mut r = super::steps::empty_result(env.opts, step);
    obs.step_started(step);
    let t0 = Instant::now();
    match run(env, obs, t0, &mut r.notes) {
        Ok(()) => r.status = StepStatus::Done,
        Err(e) => {
            r.error = Some(match probe.check_alive() {
                Err(why) => format!("{e}; the server stopped: {why}"),
                Ok(()) => e,
            });
        }
    }
    if r.status == StepStatus::Done && env.stop.load(Ordering::Relaxed) {
        r.status = StepStatus::Interrupted;
    }
    r.seconds = t0.elapsed().as_secs_f64();
    r
}

fn run(env: &Env<'_>, obs: &mut dyn StepObserver, t0: Instant, notes: &mut Vec<String>) -> Result<(), String> {
    let o = env.opts;
    let connect = || -> Result<Box<dyn Connection>, String> {
        let mut c = env.driver.connect().map_err(|e| format!("cannot connect: {e}"))?;
        c.query(&format!("USE {}", env.database))
            .map_err(|e| format!("USE {}: {e}; run step l.i0 first", env.database))?;
        Ok(c)
    };
    let mut c = connect()?;
    if first(c.as_mut(), "SELECT @@log_bin")?.as_deref() == Some("1") {
        let dropped = ["RESET MASTER", "RESET BINARY LOGS AND GTIDS"].iter().any(|s| c.query(s).is_ok());
        if !dropped {
            notes.push("the binary logs were not reset (RESET MASTER failed)".into());
        }
    }
    let wait = Duration::from_secs(o.cleanup_wait());
    obs.note(Step::Cleanup, &format!("ANALYZE TABLE and flushing dirty pages; waiting {} s", wait.as_secs()));
    let mut saved: Vec<(&str, String)> = Vec::new();
    if o.engine.eq_ignore_ascii_case("innodb") {
        for (name, value) in INNODB_FLUSH {
            // A server without the variable (innodb_idle_flush_pct before MySQL 8.0.18, MariaDB) skips it.
            let Ok(Some(old)) = first(c.as_mut(), &format!("SELECT @@global.{name}")) else { continue };
            match c.query(&format!("SET GLOBAL {name} = {value}")) {
                Ok(_) => saved.push((name, old)),
                Err(e) => notes.push(format!(
                    "{name} was not changed, so dirty pages were not flushed as the reference does \
                     (SET GLOBAL needs SYSTEM_VARIABLES_ADMIN or SUPER; run as an account that has it): {e}"
                )),
            }
        }
    }
    let analyzed = std::thread::scope(|scope| {
        let handles: Vec<_> = o
            .tables()
            .into_iter()
            .map(|t| {
                let connect = &connect;
                scope.spawn(move || -> Result<(), String> {
                    let mut c = connect()?;
                    c.query_rows(&format!("ANALYZE TABLE {t}"))
                        .map(|_| ())
                        .map_err(|e| format!("ANALYZE TABLE {t}: {e}"))
                })
            })
            .collect();
        while t0.elapsed() < wait && !env.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("ANALYZE TABLE panicked".into())))
            .collect::<Vec<_>>()
    });
    let mut restore_error = None;
    for (name, old) in saved.iter().rev() {
        let value = if old.parse::<f64>().is_ok() { old.clone() } else { format!("'{old}'") };
        if let Err(e) = c.query(&format!("SET GLOBAL {name} = {value}")) {
            restore_error.get_or_insert(format!("cannot restore {name} to {old}: {e}"));
        }
    }
    for a in analyzed {
        a?;
    }
    match restore_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
