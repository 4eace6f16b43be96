//! One measured step: open every worker's connection, start the clock, run the statement makers,
//! writers and query workers of all clients, report each interval, and sum up what was measured.
//!
//! l.x runs the write path for its 100 rows per client, then builds the indexes (one ALTER per table);
//! query steps end when the background writes are done and the scheduled time has passed, or at the
//! time cap when the server cannot keep up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, mpsc};
use std::time::{Duration, Instant};

use super::measure::{self, Deltas, ServerProbe, Snapshot};
use super::options::{Options, Step, StepKind};
use super::query::query_worker;
use super::result::{
    FetchCheck, GetMin, IntervalLine, RatePercentile, Retries, Sla, StepEfficiency, StepResult, StepStatus,
};
use super::stats::{Kind, Latency, rate_at_percentile};
use super::writer::{QUEUE, Statement, StepCtx, maker, writer};
use super::{Env, StepObserver};
use crate::driver::Connection;
use crate::workload::sysbench::stats::percentile;

/// The extra time a query step may take beyond its scheduled length when the server cannot keep up:
/// 10 % of the step, at least 2 s.
pub fn query_time_cap(o: &Options) -> Duration {
    let s = o.query_seconds.max(1) as f64;
    Duration::from_secs_f64(s + (s * 0.1).max(2.0))
}

/// Connections of one client, opened before the clock starts.
struct ClientConns {
    inserter: Box<dyn Connection>,
    deleter: Option<Box<dyn Connection>>,
    min_reader: Option<Box<dyn Connection>>,
    query: Option<Box<dyn Connection>>,
}

fn open_conns(ctx: &StepCtx) -> Result<Vec<ClientConns>, String> {
    let step = ctx.step;
    (0..ctx.opts.clients)
        .map(|c| {
            Ok(ClientConns {
                inserter: ctx.connect(&format!("client {} inserter", c + 1))?,
                deleter: step.deletes().then(|| ctx.connect(&format!("client {} deleter", c + 1))).transpose()?,
                min_reader: step.deletes().then(|| ctx.connect(&format!("client {} min reader", c + 1))).transpose()?,
                query: step.is_query().then(|| ctx.connect(&format!("client {} query", c + 1))).transpose()?,
            })
        })
        .collect()
}

/// What the interval loop adds up.
#[derive(Default)]
struct Running {
    ins: u64,
    del: u64,
    queries: u64,
    retries: Retries,
    lines: Vec<IntervalLine>,
    rss_max: Option<u64>,
}

fn interval_line(ctx: &StepCtx, run: &mut Running, since_start: f64, length: f64) -> IntervalLine {
    let i = ctx.rec.drain(Kind::Insert);
    let d = ctx.rec.drain(Kind::Delete);
    let q = ctx.rec.drain(Kind::Query);
    run.ins += i.rows;
    run.del += d.rows;
    run.queries += q.statements;
    run.retries.insert += i.retries;
    run.retries.delete += d.retries;
    run.retries.query += q.retries;
    let rate = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let primary = if ctx.step.is_query() { &q.interval } else { &i.interval };
    IntervalLine {
        i_sec: length,
        t_sec: since_start,
        i_ips: rate(i.rows, length),
        t_ips: rate(run.ins, since_start),
        i_dps: rate(d.rows, length),
        t_dps: rate(run.del, since_start),
        i_qps: rate(q.statements, length),
        t_qps: rate(run.queries, since_start),
        max_i_us: i.max_us,
        max_d_us: d.max_us,
        max_q_us: q.max_us,
        t_ins: run.ins,
        t_del: run.del,
        t_query: run.queries,
        retry_i: run.retries.insert,
        retry_d: run.retries.delete,
        retry_q: run.retries.query,
        p95_us: percentile(primary, 95.0),
        p99_us: percentile(primary, 99.0),
        statements_ps: rate(i.statements + d.statements + q.statements, length),
    }
}

/// Runs `step` (any step but the cleanup) and returns what it measured. Failures are part of the
/// result, never an `Err`.
pub fn run_step(env: &mut Env<'_>, step: Step, probe: &mut dyn ServerProbe, obs: &mut dyn StepObserver) -> StepResult {
    let o = env.opts.clone();
    let ctx = StepCtx::new(&o, step, env.driver.clone(), env.stop.clone(), &env.database);
    let mut result = empty_result(&o, step);
    let prepared = prepare(env, &ctx, step).and_then(|indexed| Ok((indexed, open_conns(&ctx)?)));
    let (indexed_before, conns) = match prepared {
        Ok(x) => x,
        Err(e) => {
            result.status = StepStatus::Failed;
            result.error = Some(server_message(probe, e));
            return result;
        }
    };
    obs.step_started(step);
    let before = Snapshot::take(probe);
    let t0 = Instant::now();
    *ctx.start.lock().unwrap_or_else(|p| p.into_inner()) = Some(t0);
    let alive = AtomicUsize::new(0);
    let writers_alive = AtomicUsize::new(0);
    let index_seconds = std::sync::Mutex::new(0.0f64);
    let mut run = Running::default();
    let interval = Duration::from_secs(o.report_interval.max(1) as u64);
    let scheduled_end = match step {
        Step::Query { rate, .. } => Some(t0 + Duration::from_secs_f64(o.rows_for(step) as f64 / f64::from(rate))),
        _ => None,
    };
    let cap = step.is_query().then(|| t0 + query_time_cap(&o));
    let mut cap_hit = false;
    let mut last = t0;
    let barrier = Barrier::new(o.clients as usize);
    let owners: Vec<bool> = (0..o.clients).map(|c| !o.shared_table || c == 0).collect();
    std::thread::scope(|scope| {
        for (c, conns) in conns.into_iter().enumerate() {
            let client = c as u32;
            let (itx, irx) = mpsc::sync_channel::<Statement>(QUEUE);
            let (dtx, drx) = if conns.deleter.is_some() {
                let (t, r) = mpsc::sync_channel::<Statement>(QUEUE);
                (Some(t), Some(r))
            } else {
                (None, None)
            };
            let ctx = &ctx;
            let min_reader = conns.min_reader;
            let (a, w) = (&alive, Some(&writers_alive));
            spawn_counted(scope, a, w, move || maker(ctx, client, itx, dtx, min_reader));
            let inserter = conns.inserter;
            let (barrier, owner, index_seconds) = (&barrier, owners[c], &index_seconds);
            spawn_counted(scope, a, w, move || {
                writer(ctx, Kind::Insert, inserter, irx);
                if step == Step::Index {
                    build_indexes(ctx, client, owner, barrier, index_seconds);
                }
            });
            if let (Some(conn), Some(rx)) = (conns.deleter, drx) {
                spawn_counted(scope, a, w, move || writer(ctx, Kind::Delete, conn, rx));
            }
            if let Some(conn) = conns.query {
                let point = matches!(step, Step::Query { point: true, .. });
                spawn_counted(scope, a, None, move || query_worker(ctx, client, point, conn));
            }
        }
        let mut next = t0 + interval;
        while alive.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            if env.stop.load(Ordering::Relaxed) {
                ctx.stop.store(true, Ordering::SeqCst);
            }
            if writers_alive.load(Ordering::SeqCst) == 0 && scheduled_end.is_none_or(|e| now >= e) {
                ctx.writes_done.store(true, Ordering::SeqCst);
            }
            if cap.is_some_and(|c| now >= c) && !ctx.stop.load(Ordering::Relaxed) {
                cap_hit = true;
                ctx.stop.store(true, Ordering::SeqCst);
            }
            if now >= next {
                let line = interval_line(&ctx, &mut run, (now - t0).as_secs_f64(), (now - last).as_secs_f64());
                obs.interval(step, &line);
                run.lines.push(line);
                if let Some(pid) = probe.server_pid()
                    && let Ok(s) = crate::sampler::ProcessSample::read(pid)
                {
                    run.rss_max = Some(run.rss_max.unwrap_or(0).max(s.rss_bytes));
                }
                last = now;
                while next <= now {
                    next += interval;
                }
            }
        }
    });
    let end = Instant::now();
    if (end - last).as_secs_f64() > 0.05 || run.lines.is_empty() {
        let line = interval_line(&ctx, &mut run, (end - t0).as_secs_f64(), (end - last).as_secs_f64());
        run.lines.push(line);
    }
    let deltas = Deltas::since(&before, probe);
    result.status = StepStatus::Done;
    let built = *index_seconds.lock().unwrap_or_else(|p| p.into_inner());
    if step == Step::Index && built > 0.0 {
        result.notes.push(format!("the indexes were built in {built:.1} s"));
    }
    let parts = Parts { run, seconds: (end - t0).as_secs_f64(), indexed_before, cap_hit };
    finish(env, &ctx, probe, parts, deltas, result)
}

/// Spawns `f` on `scope`, counted in `alive` (and in `writers` for the write path) while it runs.
fn spawn_counted<'scope, F: FnOnce() + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    alive: &'scope AtomicUsize,
    writers: Option<&'scope AtomicUsize>,
    f: F,
) {
    /// Decrements the counters however the thread ends (a panic included), so the step cannot hang.
    struct Done<'a>(&'a AtomicUsize, Option<&'a AtomicUsize>);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            if let Some(w) = self.1 {
                w.fetch_sub(1, Ordering::SeqCst);
            }
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    alive.fetch_add(1, Ordering::SeqCst);
    if let Some(w) = writers {
        w.fetch_add(1, Ordering::SeqCst);
    }
    scope.spawn(move || {
        let _done = Done(alive, writers);
        f();
    });
}

fn build_indexes(ctx: &StepCtx, client: u32, owner: bool, barrier: &Barrier, seconds: &std::sync::Mutex<f64>) {
    // Every client's rows are in before any table's indexes are built (one table may be shared).
    barrier.wait();
    if !owner || ctx.failed() || ctx.user_stop.load(Ordering::Relaxed) {
        return;
    }
    let table = ctx.opts.table_of(client);
    let t0 = Instant::now();
    let r = ctx.connect("index build").and_then(|mut c| {
        c.query_rows(&super::schema::add_indexes(&table))
            .map_err(|e| super::writer::describe(Kind::Insert, &format!("ALTER TABLE {table} ADD INDEX …"), &e))
    });
    match r {
        Ok(_) => {
            let mut s = seconds.lock().unwrap_or_else(|p| p.into_inner());
            *s = s.max(t0.elapsed().as_secs_f64());
        }
        Err(e) => ctx.fail(e),
    }
}

/// The figures the interval loop and the recorder hold at the end of the step.
struct Parts {
    run: Running,
    seconds: f64,
    indexed_before: Option<u64>,
    cap_hit: bool,
}

/// A result with nothing measured yet (status failed until the step says otherwise).
pub fn empty_result(o: &Options, step: Step) -> StepResult {
    StepResult {
        step,
        kind: step.kind(),
        status: StepStatus::Failed,
        error: None,
        clients: o.clients,
        seconds: 0.0,
        inserted_rows: 0,
        deleted_rows: 0,
        queries: 0,
        insert_statements: 0,
        delete_statements: 0,
        indexed_rows: None,
        ips: 0.0,
        dps: 0.0,
        qps: 0.0,
        operations: 0,
        rate: 0.0,
        retries: Retries::default(),
        sla: None,
        latency: Vec::new(),
        intervals: Vec::new(),
        rate_percentiles: Vec::new(),
        fetched: None,
        getmin: None,
        efficiency: StepEfficiency::default(),
        rows_after: None,
        notes: Vec::new(),
        histograms: Vec::new(),
        status_deltas: Vec::new(),
        status_ends: Vec::new(),
        store_efficiency: Default::default(),
        host_totals: None,
    }
}

/// The failure message, replaced by the probe's when the server is known to have stopped.
fn server_message(probe: &mut dyn ServerProbe, e: String) -> String {
    match probe.check_alive() {
        Err(why) => format!("{e}; the server stopped: {why}"),
        Ok(()) => e,
    }
}

/// Work outside the clock: l.i0 creates the database and the tables; other steps check the tables
/// exist; l.x learns how many rows it will index. Returns that count for l.x.
fn prepare(env: &mut Env<'_>, ctx: &StepCtx, step: Step) -> Result<Option<u64>, String> {
    let o = &ctx.opts;
    let mut c = ctx.driver.connect().map_err(|e| format!("cannot connect: {e}"))?;
    let run = |c: &mut Box<dyn Connection>, sql: &str| {
        c.query_rows(sql).map_err(|e| super::writer::describe(Kind::Insert, sql, &e))
    };
    if step == Step::Load {
        run(&mut c, &format!("CREATE DATABASE IF NOT EXISTS {}", env.database))?;
        run(&mut c, &format!("USE {}", env.database))?;
        for t in o.tables() {
            run(&mut c, &format!("DROP TABLE IF EXISTS {t}"))?;
            run(&mut c, &super::schema::create_table(&t, o))?;
        }
        env.table_rows = Some(0);
        return Ok(None);
    }
    run(&mut c, &format!("USE {}", env.database)).map_err(|e| format!("{e}; run step l.i0 first"))?;
    for t in o.tables() {
        if let Err(e) = c.query_rows(&format!("SELECT 1 FROM {t} LIMIT 1")) {
            return Err(match e.code {
                Some(1146) => format!("table {}.{t} does not exist; run step l.i0 first", env.database),
                _ => format!("cannot read table {}.{t}: {e}", env.database),
            });
        }
    }
    if step != Step::Index {
        return Ok(None);
    }
    let rows = match env.table_rows {
        Some(r) => r,
        None => count_rows(ctx, &mut c)?,
    };
    env.table_rows = Some(rows);
    Ok(Some(rows))
}

/// `SELECT COUNT(*)` summed over the tables (not recorded as a query of the step).
fn count_rows(ctx: &StepCtx, c: &mut Box<dyn Connection>) -> Result<u64, String> {
    let mut sum = 0;
    for t in ctx.opts.tables() {
        let sql = format!("SELECT COUNT(*) FROM {t}");
        let r = c.query_rows(&sql).map_err(|e| format!("counting the rows: {e}"))?;
        sum += r.first.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    }
    Ok(sum)
}

fn finish(
    env: &mut Env<'_>,
    ctx: &StepCtx,
    probe: &mut dyn ServerProbe,
    p: Parts,
    deltas: Deltas,
    mut r: StepResult,
) -> StepResult {
    let o = &ctx.opts;
    let step = ctx.step;
    let secs = p.seconds.max(1e-9);
    let totals: Vec<_> = Kind::ALL.iter().map(|k| (*k, ctx.rec.total(*k))).collect();
    let total = |k: Kind| &totals[k as usize].1;
    r.seconds = p.seconds;
    r.inserted_rows = total(Kind::Insert).rows;
    r.deleted_rows = total(Kind::Delete).rows;
    r.queries = total(Kind::Query).statements;
    r.insert_statements = total(Kind::Insert).statements;
    r.delete_statements = total(Kind::Delete).statements;
    r.retries = Retries {
        insert: total(Kind::Insert).retries,
        delete: total(Kind::Delete).retries,
        query: total(Kind::Query).retries,
    };
    r.ips = r.inserted_rows as f64 / secs;
    r.dps = r.deleted_rows as f64 / secs;
    r.qps = r.queries as f64 / secs;
    if step == Step::Index {
        r.indexed_rows = p.indexed_before.map(|n| n + r.inserted_rows);
    }
    r.operations = match step.kind() {
        StepKind::Query => r.queries,
        StepKind::Index => r.indexed_rows.unwrap_or(r.inserted_rows),
        _ => r.inserted_rows,
    };
    r.rate = r.operations as f64 / secs;
    r.sla = o.target_ips(step).map(|t| Sla::judge(t, r.ips));
    r.latency = totals.iter().filter_map(|(k, t)| Latency::of(*k, t)).collect();
    r.histograms =
        totals.iter().filter(|(_, t)| !t.histogram.is_empty()).map(|(k, t)| (*k, t.histogram.clone())).collect();
    let full: Vec<&IntervalLine> = p.run.lines.iter().filter(|l| l.i_sec >= 0.5).collect();
    let per_client = |f: &dyn Fn(&IntervalLine) -> f64| -> Vec<f64> {
        full.iter().map(|l| f(l) / f64::from(o.clients.max(1))).collect()
    };
    let (ins, del, qry) = (per_client(&|l| l.i_ips), per_client(&|l| l.i_dps), per_client(&|l| l.i_qps));
    r.rate_percentiles = [50.0, 75.0, 90.0, 95.0, 99.0]
        .into_iter()
        .map(|pct| RatePercentile {
            pct,
            insert: rate_at_percentile(&ins, pct),
            delete: step.deletes().then(|| rate_at_percentile(&del, pct)).flatten(),
            query: step.is_query().then(|| rate_at_percentile(&qry, pct)).flatten(),
        })
        .filter(|p| p.insert.is_some())
        .collect();
    r.intervals = p.run.lines;
    if step.is_query() {
        let (q, e, f) = (&ctx.fetch.0, &ctx.fetch.1, &ctx.fetch.2);
        let q = q.load(Ordering::Relaxed);
        r.fetched = (q > 0).then(|| FetchCheck {
            queries: q,
            expected_per_query: e.load(Ordering::Relaxed) as f64 / q as f64,
            fetched_per_query: f.load(Ordering::Relaxed) as f64 / q as f64,
        });
    }
    let g = ctx.getmin.0.load(Ordering::Relaxed);
    if g > 0 {
        r.getmin =
            Some(GetMin { queries: g, secs_per_query: ctx.getmin.1.load(Ordering::Relaxed) as f64 / 1e6 / g as f64 });
    }
    let per = match step.kind() {
        StepKind::Query => "query",
        StepKind::Index => "indexed row",
        _ => "insert",
    };
    r.efficiency = measure::efficiency(per, r.operations, r.inserted_rows, &deltas, p.run.rss_max);
    r.notes.extend(measure::coarse_cpu_note(&deltas));
    // A query step's client runs a query thread and two paced writers per client.
    let threads = o.clients * if step.is_query() { 3 } else { 1 };
    r.store_efficiency = measure::store_efficiency(r.operations, &deltas, threads);
    r.host_totals = deltas.host.as_ref().map(|h| (measure::host_busy_us(h), h.ctxt_switches));
    r.status_deltas = deltas.status;
    r.status_ends = deltas.ends;
    if p.cap_hit {
        r.notes.push(format!(
            "the background writes could not keep up: stopped at the time cap of {:.0} s",
            query_time_cap(o).as_secs_f64()
        ));
    }
    if let Some(e) = ctx.fatal.lock().unwrap_or_else(|p| p.into_inner()).take() {
        r.status = StepStatus::Failed;
        r.error = Some(server_message(probe, e));
    } else if env.stop.load(Ordering::Relaxed) {
        r.status = StepStatus::Interrupted;
    }
    env.table_rows = env.table_rows.map(|n| (n + r.inserted_rows).saturating_sub(r.deleted_rows));
    if o.count_rows
        && r.status == StepStatus::Done
        && let Ok(mut c) = ctx.connect("row count")
    {
        match count_rows(ctx, &mut c) {
            Ok(n) => {
                r.rows_after = Some(n);
                env.table_rows = Some(n);
            }
            Err(e) => r.notes.push(e),
        }
    }
    r
}
