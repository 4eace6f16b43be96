//! Running a script: each client (a worker of sysbench's loop, so limits, `--rate`, warm-up, intervals,
//! reconnects and `--mysql-ignore-errors` work as for sysbench's tests) picks a transaction by weight,
//! runs its steps, and times every statement. Per-statement figures are kept per client and added up
//! at the end; an event that began in the warm-up does not count, as in sysbench.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::eval;
use super::expr::Value;
use super::parse::{CLIENT_ID_SLOT, DEFAULT_SEED_SLOT, Script, ScriptStep, Statement};
use super::random::Rng;
use crate::driver::{Connection, DbError, Param, StmtId};
use crate::error::Error;
use crate::workload::sysbench::oltp::{Abort, Exec};
use crate::workload::sysbench::runner::{EventFactory, Events};
use crate::workload::sysbench::stats::new_histogram;

/// What one client (or all of them, added up) measured per statement and per transaction.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Per statement (index = number − 1): latencies in µs of successful executions.
    pub latency: Vec<Histogram<u64>>,
    /// Per statement: executions that failed with an ignored error or a lost connection.
    pub errors: Vec<u64>,
    /// Per transaction: events that finished.
    pub transactions: Vec<u64>,
}

impl Figures {
    /// Empty figures for `script`.
    pub fn new(script: &Script) -> Figures {
        Figures {
            latency: script.statements.iter().map(|_| new_histogram()).collect(),
            errors: vec![0; script.statements.len()],
            transactions: vec![0; script.transactions.len()],
        }
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &Figures) {
        for (a, b) in self.latency.iter_mut().zip(&o.latency) {
            let _ = a.add(b);
        }
        for (a, b) in self.errors.iter_mut().zip(&o.errors) {
            *a += b;
        }
        for (a, b) in self.transactions.iter_mut().zip(&o.transactions) {
            *a += b;
        }
    }
}

/// The script's events for sysbench's loop, and the figures its clients keep.
pub struct ScriptEvents {
    script: Arc<Script>,
    weights: Arc<Vec<u64>>,
    clients: Vec<Arc<Mutex<Figures>>>,
    stop: Arc<AtomicBool>,
    default_seed: i64,
}

/// The variables before a transaction's first step: `default_seed`, then the `--define`s (which may
/// set `default_seed` too).
fn initial_vars(script: &Script, default_seed: i64) -> Vec<Value> {
    let mut vars = vec![Value::Int(0); script.vars.len()];
    vars[DEFAULT_SEED_SLOT] = Value::Int(default_seed);
    for (slot, v) in &script.defines {
        vars[*slot] = *v;
    }
    vars
}

/// The `default_seed` of a run: drawn from `--rand-seed` when it is given (not 0), else at random, as
/// pgbench draws it.
pub fn default_seed(rand_seed: u64) -> i64 {
    let seed = if rand_seed != 0 {
        rand_seed
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    };
    Rng::seeded(seed ^ 0x6465_6661_756c_7473).below(u64::MAX) as i64
}

/// The runner's source of events for `script` with `clients` clients (the run's threads), stopped early
/// by `stop` in a `\sleep`; `rand_seed` is the run's `--rand-seed` (for `default_seed`).
pub fn events(script: Arc<Script>, clients: usize, stop: Arc<AtomicBool>, rand_seed: u64) -> ScriptEvents {
    let mut total = 0u64;
    let weights = script
        .transactions
        .iter()
        .map(|t| {
            total += u64::from(t.weight);
            total
        })
        .collect();
    let clients = (0..clients).map(|_| Arc::new(Mutex::new(Figures::new(&script)))).collect();
    ScriptEvents { script, weights: Arc::new(weights), clients, stop, default_seed: default_seed(rand_seed) }
}

impl ScriptEvents {
    /// The factory sysbench's runner calls once per worker.
    pub fn factory(&self) -> Arc<EventFactory> {
        let (script, weights, clients, stop) =
            (self.script.clone(), self.weights.clone(), self.clients.clone(), self.stop.clone());
        let default_seed = self.default_seed;
        Arc::new(move |tid: usize, seed: u64| -> Box<dyn Events> {
            let mut vars = initial_vars(&script, default_seed);
            vars[CLIENT_ID_SLOT] = Value::Int(tid as i64);
            Box::new(Client {
                script: script.clone(),
                weights: weights.clone(),
                shared: clients[tid % clients.len()].clone(),
                figures: Figures::new(&script),
                stop: stop.clone(),
                stmts: Vec::new(),
                vars,
                rng: Rng::seeded(seed),
                text: Vec::new(),
                retry: None,
                done: None,
                timings: Vec::new(),
                failures: Vec::new(),
            })
        })
    }

    /// Every client's figures, added up (complete once the run has returned: each client adds its own
    /// when its worker ends).
    pub fn figures(&self) -> Figures {
        let mut all = Figures::new(&self.script);
        for c in &self.clients {
            all.add(&c.lock().unwrap_or_else(|p| p.into_inner()));
        }
        all
    }
}

/// One client's state.
struct Client {
    script: Arc<Script>,
    weights: Arc<Vec<u64>>,
    /// Where this client's figures go when it ends.
    shared: Arc<Mutex<Figures>>,
    /// This client's figures.
    figures: Figures,
    stop: Arc<AtomicBool>,
    stmts: Vec<StmtId>,
    vars: Vec<Value>,
    rng: Rng,
    /// Double values as text, for the parameters of one statement.
    text: Vec<String>,
    /// The transaction to run again after an ignored error.
    retry: Option<usize>,
    /// The transaction that finished in this event.
    done: Option<usize>,
    /// (statement, µs) of this event's executions.
    timings: Vec<(usize, u64)>,
    /// Statements that failed in this event.
    failures: Vec<usize>,
}

/// `file:line:col: what` for a step of the script.
fn at(script: &Script, loc: super::parse::Loc, what: impl std::fmt::Display) -> Error {
    Error::Other(format!("{}: {what}", script.at(loc)))
}

/// Most parameters a statement binds without an allocation.
const INLINE_PARAMS: usize = 8;

impl Client {
    fn pick(&mut self) -> usize {
        if let Some(t) = self.retry.take() {
            return t;
        }
        let total = *self.weights.last().unwrap_or(&1);
        let r = self.rng.below(total);
        self.weights.iter().position(|w| r < *w).unwrap_or(0)
    }
}

/// Executes statement `i` with the client's variables, timing it.
fn exec(st: &Statement, id: StmtId, vars: &[Value], text: &mut Vec<String>, x: &mut dyn Exec) -> Result<u64, Abort> {
    fn param<'a>(v: Value, doubles: &mut std::slice::Iter<'a, String>) -> Param<'a> {
        match v {
            Value::Int(i) => Param::Int(i),
            Value::Double(_) => Param::Str(doubles.next().map(String::as_str).unwrap_or("0")),
        }
    }
    let ints = st.params.iter().all(|s| matches!(vars[*s], Value::Int(_)));
    if !ints {
        text.clear();
        for slot in &st.params {
            if let Value::Double(d) = vars[*slot] {
                text.push(d.to_string());
            }
        }
    }
    let mut doubles = text.iter();
    let t0;
    if st.params.len() <= INLINE_PARAMS {
        let mut inline = [Param::Int(0); INLINE_PARAMS];
        for (p, slot) in inline.iter_mut().zip(&st.params) {
            *p = param(vars[*slot], &mut doubles);
        }
        t0 = Instant::now();
        x.exec(id, &inline[..st.params.len()])?;
    } else {
        let params: Vec<Param<'_>> = st.params.iter().map(|s| param(vars[*s], &mut doubles)).collect();
        t0 = Instant::now();
        x.exec(id, &params)?;
    }
    Ok((t0.elapsed().as_nanos() as u64 / 1000).max(1))
}

impl Events for Client {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), DbError> {
        self.stmts = Vec::with_capacity(self.script.statements.len());
        for st in &self.script.statements {
            let id = conn
                .prepare(&st.sql)
                .map_err(|e| DbError { message: format!("{}: {}", self.script.at(st.loc), e.message), ..e })?;
            self.stmts.push(id);
        }
        Ok(())
    }

    fn event(&mut self, x: &mut dyn Exec) -> Result<(), Abort> {
        let t = self.pick();
        let script = &*self.script;
        let steps = &script.transactions[t].steps;
        let mut pc = 0;
        while let Some(step) = steps.get(pc) {
            pc += 1;
            match step {
                ScriptStep::Branch { cond, otherwise, loc } => {
                    let v =
                        eval::eval(cond, &self.vars, &mut self.rng).map_err(|m| Abort::Fatal(at(script, *loc, m)))?;
                    if !v.truth() {
                        pc = *otherwise;
                    }
                }
                ScriptStep::Jump { to } => pc = *to,
                ScriptStep::Set { slot, expr, loc } => {
                    let v =
                        eval::eval(expr, &self.vars, &mut self.rng).map_err(|m| Abort::Fatal(at(script, *loc, m)))?;
                    self.vars[*slot] = v;
                }
                ScriptStep::Sleep { expr, unit_us, loc } => {
                    let v =
                        eval::eval(expr, &self.vars, &mut self.rng).map_err(|m| Abort::Fatal(at(script, *loc, m)))?;
                    let us = match v {
                        Value::Int(i) if i >= 0 => i as u64 * unit_us,
                        Value::Double(d) if d >= 0.0 => (d * *unit_us as f64) as u64,
                        other => {
                            return Err(Abort::Fatal(at(script, *loc, format!("\\sleep {other}: not a duration"))));
                        }
                    };
                    let end = Instant::now() + Duration::from_micros(us);
                    while !self.stop.load(Ordering::Relaxed) && Instant::now() < end {
                        std::thread::sleep(
                            end.saturating_duration_since(Instant::now()).min(Duration::from_millis(50)),
                        );
                    }
                }
                ScriptStep::Sql(i) => {
                    let st = &script.statements[*i];
                    match exec(st, self.stmts[*i], &self.vars, &mut self.text, x) {
                        Ok(us) => self.timings.push((*i, us)),
                        Err(Abort::Fatal(e)) => {
                            return Err(Abort::Fatal(at(script, st.loc, format!("statement {}: {e}", st.number))));
                        }
                        Err(a) => {
                            self.failures.push(*i);
                            if matches!(a, Abort::Restart) {
                                self.retry = Some(t);
                            }
                            return Err(a);
                        }
                    }
                }
            }
        }
        self.done = Some(t);
        Ok(())
    }

    fn end_event(&mut self, measured: bool) {
        if measured {
            let f = &mut self.figures;
            for &(i, us) in &self.timings {
                let _ = f.latency[i].record(us);
            }
            for &i in &self.failures {
                f.errors[i] += 1;
            }
            if let Some(t) = self.done {
                f.transactions[t] += 1;
            }
        }
        self.timings.clear();
        self.failures.clear();
        self.done = None;
    }
}

impl Drop for Client {
    /// The client's figures join the run's when its worker ends (no lock per event).
    fn drop(&mut self) {
        self.shared.lock().unwrap_or_else(|p| p.into_inner()).add(&self.figures);
    }
}

/// Runs the setup on `conn`: its `\set`s with a generator seeded by `seed`, its statements as text
/// with the values in place. `log` gets one line per statement.
pub fn setup(script: &Script, conn: &mut dyn Connection, seed: u64, log: &dyn Fn(&str)) -> Result<(), Error> {
    let mut vars = initial_vars(script, default_seed(seed));
    let mut rng = Rng::seeded(seed);
    let mut pc = 0;
    while let Some(step) = script.setup_steps.get(pc) {
        pc += 1;
        match step {
            ScriptStep::Set { slot, expr, loc } => {
                vars[*slot] = eval::eval(expr, &vars, &mut rng).map_err(|m| at(script, *loc, m))?;
            }
            ScriptStep::Branch { cond, otherwise, loc } => {
                if !eval::eval(cond, &vars, &mut rng).map_err(|m| at(script, *loc, m))?.truth() {
                    pc = *otherwise;
                }
            }
            ScriptStep::Jump { to } => pc = *to,
            ScriptStep::Sleep { .. } => {}
            ScriptStep::Sql(i) => {
                let st = &script.setup[*i];
                let started = Instant::now();
                conn.query(&st.with_values(&vars))
                    .map_err(|e| at(script, st.loc, format!("the setup statement failed: {e}")))?;
                log(&format!(
                    "setup {}:{}: done in {:.1} s",
                    script.file,
                    st.loc.line,
                    started.elapsed().as_secs_f64()
                ));
            }
        }
    }
    Ok(())
}

/// One value of every variable as a transaction's `\set`s draw them (the first time, from `seed`),
/// for the statements of that transaction: what `EXPLAIN` is given. Every `\set` counts, in order,
/// whichever `\if` branch it is in, so that the statements of every branch get values.
pub fn sample_values(script: &Script, transaction: usize, seed: u64) -> Result<Vec<Value>, Error> {
    let mut vars = initial_vars(script, default_seed(seed.max(1)));
    let mut rng = Rng::seeded(seed);
    for step in &script.transactions[transaction].steps {
        if let ScriptStep::Set { slot, expr, loc } = step {
            vars[*slot] = eval::eval(expr, &vars, &mut rng).map_err(|m| at(script, *loc, m))?;
        }
    }
    Ok(vars)
}
