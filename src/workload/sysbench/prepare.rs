//! `prepare`, `prewarm` and `cleanup`: the tables of sysbench 1.0.20 (DDL, row values, 512 KiB multi-row
//! INSERTs, index after load), split across `--threads` connections by table.

use std::fmt::Write;
use std::sync::Mutex;

use super::options::{Options, PrepareMethod, Test};
use super::rng::{C_TEMPLATE, PAD_TEMPLATE, Random};
use crate::driver::{Connection, DbError, Driver, ErrorKind};
use crate::error::{Error, Result};

/// Where progress lines go (`Creating table 'sbtest1'...`).
pub type Log<'a> = &'a (dyn Fn(&str) + Sync);

/// The CREATE TABLE statement of table `t`.
pub fn create_table_sql(o: &Options, t: u32) -> String {
    let oo = &o.oltp;
    let id = if oo.auto_inc { "id INTEGER NOT NULL AUTO_INCREMENT" } else { "id INTEGER NOT NULL" };
    let key = if oo.secondary { "KEY xid (id)" } else { "PRIMARY KEY (id)" };
    format!(
        "CREATE TABLE sbtest{t}(\n  {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key}\n) /*! ENGINE = {} */ {}",
        oo.storage_engine, oo.create_table_options
    )
}

/// Maps a driver error during `what` to a one-line [`Error`], with a hint for the usual causes.
pub fn sql_error(what: &str, e: DbError) -> Error {
    let hint = match e.code {
        Some(1050) => "; run cleanup first",
        Some(1146) => "; run prepare first",
        Some(1049) => "; create the database first (CREATE DATABASE) or pass --mysql-db",
        Some(1045) => "; check --mysql-user and --mysql-password",
        _ => "",
    };
    Error::Sql { context: what.to_string(), code: e.code, message: format!("{e}{hint}") }
}

fn connect(driver: &dyn Driver) -> Result<Box<dyn Connection>> {
    driver.connect_first().map_err(|e| sql_error("connect", e))
}

fn exec(conn: &mut dyn Connection, sql: &str) -> Result<()> {
    conn.query(sql).map(|_| ()).map_err(|e| sql_error(&format!("query '{}'", first_line(sql)), e))
}

fn first_line(sql: &str) -> &str {
    let s = sql.trim_start().lines().next().unwrap_or(sql);
    if s.len() > 80 { &s[..80] } else { s }
}

/// Statements run once on each connection before its tables.
type Setup<'a> = &'a (dyn Fn(&mut dyn Connection) -> Result<()> + Sync);

/// Runs `work(conn, table)` for every table, table t on thread (t-1) % threads, as sysbench does, after
/// `setup` on each connection.
fn per_table<F>(o: &Options, driver: &dyn Driver, tables: u32, log: Log<'_>, setup: Setup<'_>, work: F) -> Result<()>
where
    F: Fn(&mut dyn Connection, u32) -> Result<()> + Sync,
{
    let threads = o.threads.max(1);
    if threads == 1 {
        let mut conn = connect(driver)?;
        setup(conn.as_mut())?;
        for t in 1..=tables {
            work(conn.as_mut(), t)?;
        }
        return Ok(());
    }
    log("Initializing worker threads...\n");
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for th in 0..threads {
            let work = &work;
            let first_error = &first_error;
            s.spawn(move || {
                let r = (|| {
                    let mut conn = connect(driver)?;
                    setup(conn.as_mut())?;
                    let mut t = th + 1;
                    while t <= tables {
                        if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                            break;
                        }
                        work(conn.as_mut(), t)?;
                        t += threads;
                    }
                    Ok::<(), Error>(())
                })();
                if let Err(e) = r {
                    let mut g = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    g.get_or_insert(e);
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Creates and loads the tables (`prepare`).
pub fn prepare(test: Test, o: &Options, driver: &dyn Driver, log: Log<'_>) -> Result<()> {
    if test == Test::BulkInsert {
        // One table per thread, created from a single connection as bulk_insert.lua does.
        let mut conn = connect(driver)?;
        for t in 1..=o.threads.max(1) {
            log(&format!("Creating table 'sbtest{t}'..."));
            exec(
                conn.as_mut(),
                &format!(
                    "        CREATE TABLE IF NOT EXISTS sbtest{t} (\n          id INTEGER NOT NULL,\n          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))"
                ),
            )?;
        }
        return Ok(());
    }
    // oltp_insert with client ids starts from empty tables, so that its unique ids cannot clash.
    let rows = if test == Test::OltpInsert && !o.oltp.auto_inc { 0 } else { o.oltp.table_size };
    per_table(o, driver, o.oltp.tables, log, &|_| Ok(()), |conn, t| create_table(o, conn, t, rows, log))
}

/// Creates and loads table `t` with `rows` rows.
pub fn create_table(o: &Options, conn: &mut dyn Connection, t: u32, rows: u32, log: Log<'_>) -> Result<()> {
    log(&format!("Creating table 'sbtest{t}'..."));
    exec(conn, &create_table_sql(o, t))?;
    if rows > 0 {
        log(&format!("Inserting {rows} records into 'sbtest{t}'"));
        // Like sysbench with one thread, prepare data does not depend on --rand-seed: a fixed stream per table.
        let rnd = Random::new(&o.rand, 0x5eed_0000 + t as u64);
        let loaded = match o.prepare_method {
            PrepareMethod::Insert => false,
            m => load_local(o, conn, t, rows, rnd.clone(), m == PrepareMethod::Load)?,
        };
        if !loaded {
            let mut rnd = rnd;
            load_rows(o, conn, t, 1, rows, &mut rnd)?;
        }
    }
    if o.oltp.create_secondary {
        log(&format!("Creating a secondary index on 'sbtest{t}'..."));
        exec(conn, &format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))?;
    }
    Ok(())
}

/// Draws one row's values in sysbench's order (c, pad, then k); returns k.
fn draw_row(rnd: &mut Random, table_size: u32, c: &mut String, pad: &mut String) -> u32 {
    rnd.fill_template(C_TEMPLATE, c);
    rnd.fill_template(PAD_TEMPLATE, pad);
    rnd.default(1, table_size)
}

/// Loads rows 1..=rows with `LOAD DATA LOCAL INFILE`, the same values as [`load_rows`] would insert.
/// Returns false when the server or driver does not allow it and `required` is false.
fn load_local(
    o: &Options,
    conn: &mut dyn Connection,
    t: u32,
    rows: u32,
    mut rnd: Random,
    required: bool,
) -> Result<bool> {
    let auto_inc = o.oltp.auto_inc;
    let table_size = o.oltp.table_size;
    let cols = if auto_inc { "(k, c, pad)" } else { "(id, k, c, pad)" };
    let sql = format!("LOAD DATA LOCAL INFILE 'sbtest{t}.tsv' INTO TABLE sbtest{t} {cols}");
    let data: crate::driver::LocalData = Box::new(move |w| {
        let (mut c, mut pad) = (String::with_capacity(120), String::with_capacity(60));
        let mut buf = String::with_capacity(64 * 1024 + 256);
        for j in 1..=rows {
            let k = draw_row(&mut rnd, table_size, &mut c, &mut pad);
            if auto_inc {
                let _ = writeln!(buf, "{k}\t{c}\t{pad}");
            } else {
                let _ = writeln!(buf, "{j}\t{k}\t{c}\t{pad}");
            }
            if buf.len() >= 64 * 1024 {
                w.write_all(buf.as_bytes())?;
                buf.clear();
            }
        }
        w.write_all(buf.as_bytes())
    });
    match conn.load_local(&sql, data) {
        Ok(_) => Ok(true),
        // Not allowed by the client, or local_infile=OFF on the server (1148 MariaDB, 3948 MySQL).
        Err(e) if !required && (e.kind == ErrorKind::Client || matches!(e.code, Some(1148 | 3948 | 2068))) => Ok(false),
        Err(e) => Err(sql_error(&format!("query '{sql}'"), e)),
    }
}

/// Inserts rows `first..=last` into table `t` in multi-row INSERTs of at most 512 KiB.
pub fn load_rows(
    o: &Options,
    conn: &mut dyn Connection,
    t: u32,
    first: u32,
    last: u32,
    rnd: &mut Random,
) -> Result<()> {
    let prefix = if o.oltp.auto_inc {
        format!("INSERT INTO sbtest{t}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{t}(id, k, c, pad) VALUES")
    };
    let mut sql = String::with_capacity(super::oltp::BULK_BUFFER + 256);
    let mut tuple = String::with_capacity(256);
    let (mut c, mut pad) = (String::with_capacity(120), String::with_capacity(60));
    sql.push_str(&prefix);
    let mut in_batch = 0u32;
    for j in first..=last {
        let k = draw_row(rnd, o.oltp.table_size, &mut c, &mut pad);
        tuple.clear();
        if o.oltp.auto_inc {
            let _ = write!(tuple, "({k}, '{c}', '{pad}')");
        } else {
            let _ = write!(tuple, "({j}, {k}, '{c}', '{pad}')");
        }
        if in_batch > 0 && sql.len() + 1 + tuple.len() > super::oltp::BULK_BUFFER {
            exec(conn, &sql)?;
            sql.truncate(prefix.len());
            in_batch = 0;
        }
        if in_batch > 0 {
            sql.push(',');
        }
        sql.push_str(&tuple);
        in_batch += 1;
    }
    if in_batch > 0 {
        exec(conn, &sql)?;
    }
    Ok(())
}

/// Loads the tables into the buffer pool before an experiment's run: per table, ANALYZE TABLE (as
/// sysbench's `prewarm`), one scan of the clustered index, and one of each secondary index a run reads
/// (`k_N` unless `--create_secondary=off`, `xid` with `--secondary`), each covering. Sysbench's own
/// statements (see [`prewarm`]) read each table through a derived table with a LIMIT: MySQL 8.0 and
/// later materialize it, which on 2 × 1.5M rows took about 10 s and filled the buffer pool with
/// temporary-table pages; these scans read the same data pages, and the indexes sysbench's never
/// reads, in under a second. `bulk_insert`'s tables start empty: nothing to load.
pub fn prewarm_scan(test: Test, o: &Options, driver: &dyn Driver, log: Log<'_>) -> Result<()> {
    if test == Test::BulkInsert {
        return Ok(());
    }
    per_table(o, driver, o.oltp.tables, log, &|_| Ok(()), |conn, t| {
        log(&format!("Prewarming table sbtest{t}"));
        exec(conn, &format!("ANALYZE TABLE sbtest{t}"))?;
        exec(conn, &format!("SELECT SUM(LENGTH(pad)) FROM sbtest{t}"))?;
        if o.oltp.create_secondary {
            exec(conn, &format!("SELECT SUM(k) FROM sbtest{t}"))?;
        }
        if o.oltp.secondary {
            exec(conn, &format!("SELECT SUM(id) FROM sbtest{t}"))?;
        }
        Ok(())
    })
}

/// Loads tables and indexes into the buffer pool (`prewarm`), with sysbench's statements.
pub fn prewarm(o: &Options, driver: &dyn Driver, log: Log<'_>) -> Result<()> {
    let size = o.oltp.table_size;
    let setup = |conn: &mut dyn Connection| {
        exec(conn, "SET tmp_table_size=2*1024*1024*1024")?;
        exec(conn, "SET max_heap_table_size=2*1024*1024*1024")
    };
    per_table(o, driver, o.oltp.tables, log, &setup, |conn, t| {
        log(&format!("Prewarming table sbtest{t}"));
        exec(conn, &format!("ANALYZE TABLE sbtest{t}"))?;
        exec(conn, &format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{t} FORCE KEY (PRIMARY) LIMIT {size}) t"))?;
        exec(conn, &format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{t} WHERE k LIKE '%0%' LIMIT {size}) t"))
    })
}

/// Drops the tables (`cleanup`), single-threaded.
pub fn cleanup(test: Test, o: &Options, driver: &dyn Driver, log: Log<'_>) -> Result<()> {
    let tables = if test == Test::BulkInsert { o.threads } else { o.oltp.tables };
    let mut conn = connect(driver)?;
    for t in 1..=tables {
        log(&format!("Dropping table 'sbtest{t}'..."));
        exec(conn.as_mut(), &format!("DROP TABLE IF EXISTS sbtest{t}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::mock::MockDriver;

    #[test]
    fn ddl_matches_sysbench() {
        let o = Options::default();
        assert_eq!(
            create_table_sql(&o, 3),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ "
        );
        let mut o2 = o.clone();
        o2.oltp.auto_inc = false;
        o2.oltp.secondary = true;
        let s = create_table_sql(&o2, 1);
        assert!(s.contains("id INTEGER NOT NULL,\n") && s.contains("  KEY xid (id)\n"));
    }

    #[test]
    fn batches_stay_under_512k_and_hold_every_row() {
        let mut o = Options::default();
        o.oltp.table_size = 10_000;
        o.oltp.tables = 2;
        o.threads = 2;
        let d = MockDriver::new().recording();
        let lines = Mutex::new(Vec::new());
        prepare(Test::OltpReadWrite, &o, &d, &|l| lines.lock().unwrap().push(l.to_string())).unwrap();
        let log = d.log();
        let inserts: Vec<&String> = log.iter().filter(|s| s.starts_with("INSERT INTO sbtest1(")).collect();
        assert!(inserts.iter().all(|s| s.len() < 512 * 1024));
        let rows: usize = inserts.iter().map(|s| s.matches("', '").count()).sum();
        assert_eq!(rows, 10_000);
        // about 2.7k rows per INSERT with 4-5 digit k
        assert_eq!(inserts.len(), 4);
        assert!(inserts[0].starts_with("INSERT INTO sbtest1(k, c, pad) VALUES("));
        assert!(log.iter().any(|s| s == "CREATE INDEX k_2 ON sbtest2(k)"));
        let lines = lines.into_inner().unwrap();
        assert!(lines.contains(&"Inserting 10000 records into 'sbtest2'".to_string()));
        assert_eq!(lines[0], "Initializing worker threads...\n");
    }

    #[test]
    fn prewarm_sets_session_sizes_once_per_connection() {
        let mut o = Options { threads: 2, ..Options::default() };
        o.oltp.tables = 4;
        let d = MockDriver::new().recording();
        prewarm(&o, &d, &|_| {}).unwrap();
        let log = d.log();
        assert_eq!(log.iter().filter(|s| s.starts_with("SET tmp_table_size")).count(), 2);
        assert_eq!(log.iter().filter(|s| s.starts_with("ANALYZE TABLE")).count(), 4);
    }

    #[test]
    fn the_experiments_prewarm_scans_every_table_without_a_derived_table() {
        let mut o = Options { threads: 2, ..Options::default() };
        o.oltp.tables = 3;
        let d = MockDriver::new().recording();
        prewarm_scan(Test::OltpReadWrite, &o, &d, &|_| {}).unwrap();
        let log = d.log();
        for t in 1..=3 {
            assert!(log.contains(&format!("SELECT SUM(LENGTH(pad)) FROM sbtest{t}")), "{log:?}");
            assert!(log.contains(&format!("SELECT SUM(k) FROM sbtest{t}")), "{log:?}");
        }
        assert!(!log.iter().any(|s| s.contains("LIMIT") || s.starts_with("SET ") || s.contains("SUM(id)")), "{log:?}");
        // Only the indexes the tables have; bulk_insert's tables hold neither pad nor rows.
        o.oltp.create_secondary = false;
        o.oltp.secondary = true;
        let d = MockDriver::new().recording();
        prewarm_scan(Test::OltpPointSelect, &o, &d, &|_| {}).unwrap();
        let log = d.log();
        assert!(log.contains(&"SELECT SUM(id) FROM sbtest2".to_string()) && !log.iter().any(|s| s.contains("SUM(k)")));
        let d = MockDriver::new().recording();
        prewarm_scan(Test::BulkInsert, &o, &d, &|_| {}).unwrap();
        assert!(d.log().is_empty(), "{:?}", d.log());
    }

    #[test]
    fn bulk_insert_creates_one_table_per_thread_like_its_script() {
        let o = Options { threads: 2, ..Options::default() };
        let d = MockDriver::new().recording();
        let lines = Mutex::new(Vec::new());
        prepare(Test::BulkInsert, &o, &d, &|l| lines.lock().unwrap().push(l.to_string())).unwrap();
        assert_eq!(lines.into_inner().unwrap(), ["Creating table 'sbtest1'...", "Creating table 'sbtest2'..."]);
        assert_eq!(d.log().iter().filter(|s| s.starts_with("        CREATE TABLE IF NOT EXISTS sbtest")).count(), 2);
    }
}
