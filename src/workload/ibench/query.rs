//! The query worker of one client in a query step: range queries on a uniformly chosen secondary index
//! (`qr`) or point queries of 10 ids between the current minimum and maximum key (`qp`), as fast as
//! possible until the background writes are done.

use std::sync::atomic::Ordering;

use super::rows::below;
use super::schema::{Range, point_sql};
use super::stats::Kind;
use super::writer::{StepCtx, describe, exec};
use crate::driver::Connection;
use crate::workload::sysbench::rng::Xoroshiro;

/// `max(transactionid)` is re-read every this many point queries (the reference's 100).
const MAX_REFRESH: u64 = 100;

fn read_max(conn: &mut dyn Connection, table: &str) -> Result<i64, String> {
    let sql = format!("SELECT max(transactionid) FROM {table}");
    let r = conn.query_rows(&sql).map_err(|e| describe(Kind::Query, &sql, &e))?;
    Ok(r.first.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
}

/// Runs queries for `client` on `conn` until the writes are done or the step stops. Also counts the
/// rows each query was expected to return and the rows it fetched.
pub fn query_worker(ctx: &StepCtx, client: u32, point: bool, mut conn: Box<dyn Connection>) {
    if let Err(e) = run(ctx, client, point, conn.as_mut()) {
        ctx.fail(e);
    }
}

fn run(ctx: &StepCtx, client: u32, point: bool, conn: &mut dyn Connection) -> Result<(), String> {
    let o = &ctx.opts;
    let table = o.table_of(client);
    let slot = ctx.table_index(client);
    let mut rng = Xoroshiro::seeded(o.seed_for(ctx.step, client) ^ 0x5155_4552_5921);
    let per_query = o.rows_per_query.max(1) as u64;
    let mut ids = Vec::with_capacity(per_query as usize);
    let mut sql = String::new();
    let mut max = if point { read_max(conn, &table)? } else { 0 };
    let mut n = 0u64;
    while !ctx.writes_done.load(Ordering::Relaxed) && !ctx.stopping() {
        if point {
            if n > 0 && n.is_multiple_of(MAX_REFRESH) {
                max = read_max(conn, &table)?;
            }
            let min = ctx.min_ids[slot].load(Ordering::Relaxed);
            let span = (max - min).max(1) as u64;
            ids.clear();
            ids.extend((0..per_query).map(|_| min + below(&mut rng, span) as i64));
            point_sql(&table, &ids, &mut sql);
        } else {
            let r = Range::ALL[below(&mut rng, 3) as usize];
            r.sql(&table, below(&mut rng, r.bound(o)), o, &mut sql);
        }
        let rows = exec(ctx, conn, Kind::Query, &sql, None)?;
        ctx.fetch.0.fetch_add(1, Ordering::Relaxed);
        ctx.fetch.1.fetch_add(per_query, Ordering::Relaxed);
        ctx.fetch.2.fetch_add(rows.fetched, Ordering::Relaxed);
        n += 1;
    }
    Ok(())
}
