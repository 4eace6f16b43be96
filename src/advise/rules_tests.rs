use std::collections::BTreeMap;

use super::*;
use crate::advise::facts::{GIB, MIB, ProbeFacts};
use crate::advise::memory;

/// MySQL 9.7's defaults that the rules read (from `SHOW GLOBAL VARIABLES` of 9.7.4).
fn mysql97() -> BTreeMap<String, String> {
    [
        ("innodb_buffer_pool_size", "134217728"),
        ("innodb_buffer_pool_instances", "1"),
        ("innodb_redo_log_capacity", "104857600"),
        ("innodb_io_capacity", "10000"),
        ("innodb_flush_method", "O_DIRECT"),
        ("innodb_flush_neighbors", "0"),
        ("innodb_thread_concurrency", "0"),
        ("innodb_log_buffer_size", "67108864"),
        ("innodb_flush_log_at_trx_commit", "1"),
        ("innodb_doublewrite", "ON"),
        ("log_bin", "ON"),
        ("sync_binlog", "1"),
        ("table_open_cache", "4000"),
        ("table_definition_cache", "2000"),
        ("thread_cache_size", "9"),
        ("tmp_table_size", "16777216"),
        ("max_heap_table_size", "16777216"),
        ("temptable_max_ram", "1073741824"),
        ("sort_buffer_size", "262144"),
        ("read_buffer_size", "131072"),
        ("read_rnd_buffer_size", "262144"),
        ("join_buffer_size", "262144"),
        ("thread_stack", "1048576"),
        ("binlog_cache_size", "32768"),
        ("key_buffer_size", "8388608"),
        ("max_connections", "151"),
        ("general_log", "OFF"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn probe(redo_per_s: f64) -> ProbeFacts {
    let mut p = ProbeFacts { seconds: 20.0, tps: Some(300.0), ..ProbeFacts::default() };
    for (k, v) in [
        ("Innodb_os_log_written", (redo_per_s * 20.0) as i64),
        ("Table_open_cache_hits", 10_000),
        ("Table_open_cache_misses", 0),
        ("Threads_created", 0),
        ("Connections", 8),
        ("Created_tmp_tables", 0),
        ("Created_tmp_disk_tables", 0),
        ("Innodb_log_waits", 0),
    ] {
        p.deltas.insert(k.into(), v);
    }
    p
}

fn facts(flavor: Flavor, version: Version, vars: BTreeMap<String, String>) -> Facts {
    Facts { probe: Some(probe(2.0 * MIB as f64)), ..Facts::example(flavor, version, vars) }
}

fn find<'a>(c: &'a [Candidate], name: &str, risk: Risk) -> Option<&'a Candidate> {
    c.iter().find(|x| x.variable == name && x.risk == risk)
}

#[test]
fn the_field_case_on_mysql_9_7() {
    let f = facts(Flavor::Mysql, Version::new(9, 7, 4), mysql97());
    let (c, considered) = candidates(&f);
    let bp = find(&c, "innodb_buffer_pool_size", Risk::Memory).expect("a buffer pool");
    // The data wants 896M; a pool that must grow takes at least dedicated's half of 4 GiB.
    assert_eq!(bp.display, "2G", "{bp:?}");
    assert_eq!(bp.value, (2 * GIB).to_string());
    assert_eq!(bp.old.as_deref(), Some("134217728"));
    // 2 MiB/s for an hour is 7 GiB; a tenth of 28 GiB free caps it.
    let redo = find(&c, "innodb_redo_log_capacity", Risk::Safe).expect("redo");
    assert_eq!(redo.display, "2816M", "{redo:?}");
    // fsync of 2 ms: about 500 writes/s, far below 9.7's default of 10 000.
    assert_eq!(find(&c, "innodb_io_capacity", Risk::Safe).unwrap().value, "500");
    assert_eq!(find(&c, "innodb_thread_concurrency", Risk::Safe).unwrap().value, "5");
    for d in ["innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "innodb_doublewrite", "innodb_flush_method"] {
        let x = find(&c, d, Risk::Durability).unwrap_or_else(|| panic!("{d} in {c:?}"));
        assert!(x.loses.as_deref().is_some_and(|l| !l.is_empty()), "{d} says what a crash can lose");
    }
    // Nothing the probe did not call for, and nothing already set.
    for name in
        ["table_open_cache", "tmp_table_size", "join_buffer_size", "innodb_log_buffer_size", "thread_cache_size"]
    {
        assert!(c.iter().all(|x| x.variable != name), "{name} proposed: {c:?}");
        assert!(considered.iter().any(|x| x.variable == name), "{name} listed as considered");
    }
    // MySQL 8.4 and later size the instances themselves: 1 for a 2 GiB pool on 2 CPUs.
    assert!(find(&c, "innodb_buffer_pool_instances", Risk::Safe).is_none(), "{c:?}");
    let instances = considered.iter().find(|x| x.variable == "innodb_buffer_pool_instances").expect("considered");
    assert!(
        instances.outcome.contains("sizes the instances") && instances.outcome.contains("(1 for a 2 GiB pool on 2")
    );
    assert!(considered.iter().any(|x| x.variable == "innodb_flush_method" && x.risk == Risk::Safe));
    assert!(c.iter().all(|x| x.variable != "innodb_log_file_size"), "8.0.30+ sizes the redo by capacity");
}

#[test]
fn mariadb_gets_its_own_rows() {
    let mut vars = mysql97();
    vars.remove("innodb_redo_log_capacity");
    vars.remove("innodb_thread_concurrency");
    vars.remove("temptable_max_ram");
    vars.insert("innodb_log_file_size".into(), (96 * MIB).to_string());
    vars.insert("innodb_io_capacity".into(), "200".into());
    vars.insert("innodb_flush_neighbors".into(), "1".into());
    vars.insert("log_bin".into(), "OFF".into());
    vars.insert("sync_binlog".into(), "0".into());
    vars.insert("query_cache_type".into(), "OFF".into());
    vars.insert("query_cache_size".into(), "1048576".into());
    let f = facts(Flavor::Mariadb, Version::new(10, 11, 19), vars);
    let (c, considered) = candidates(&f);
    assert!(find(&c, "innodb_log_file_size", Risk::Safe).is_some(), "{c:?}");
    assert!(c.iter().all(|x| x.variable != "innodb_redo_log_capacity" && x.variable != "innodb_buffer_pool_instances"));
    assert!(c.iter().all(|x| x.variable != "innodb_thread_concurrency"), "removed in 10.6");
    assert_eq!(find(&c, "innodb_flush_neighbors", Risk::Safe).unwrap().value, "0");
    assert_eq!(find(&c, "innodb_io_capacity", Risk::Safe).unwrap().value, "500");
    assert!(find(&c, "sync_binlog", Risk::Durability).is_none() && find(&c, "log_bin", Risk::Durability).is_none());
    assert!(considered.iter().any(|x| x.variable == "sync_binlog" && x.outcome.contains("binary log is off")));
}

#[test]
fn without_a_probe_the_probe_rules_wait_for_it() {
    let mut f = facts(Flavor::Mysql, Version::new(9, 7, 4), mysql97());
    f.probe = None;
    f.data_bytes = None;
    let (c, considered) = candidates(&f);
    assert!(c.iter().all(|x| x.area != Area::Redo && x.area != Area::BufferPool), "{c:?}");
    let redo = considered.iter().find(|x| x.variable == "innodb_redo_log_capacity").unwrap();
    assert!(redo.outcome.contains("probe run"), "{redo:?}");
}

#[test]
fn the_buffer_pool_never_breaks_the_memory_bound() {
    for gib in [1u64, 2, 3, 4, 6, 8, 16, 64] {
        for data_mib in [10u64, 700, 3000, 20_000, 200_000] {
            for conns in ["151", "1000"] {
                let mut vars = mysql97();
                vars.insert("max_connections".into(), conns.into());
                let mut f = facts(Flavor::Mysql, Version::new(9, 7, 4), vars);
                f.memory = gib * GIB;
                f.data_bytes = Some(data_mib * MIB);
                let (c, _) = candidates(&f);
                let mut with = f.variables.clone();
                for x in c.iter().filter(|x| x.risk != Risk::Durability) {
                    with.insert(x.variable.clone(), x.value.clone());
                }
                let m = memory::worst_case(f.flavor, f.version, &|n| with.get(n).cloned(), f.memory);
                let without_pool = m.total - m.part("innodb_buffer_pool_size");
                assert!(
                    m.fits() || without_pool + 128 * MIB > m.limit,
                    "{gib} GiB, {data_mib} MiB, {conns} connections: {m:?}"
                );
            }
        }
    }
}

#[test]
fn every_row_names_its_rule_source_and_risk() {
    for r in RULES {
        assert!(!r.rule.is_empty() && !r.source.is_empty(), "{}", r.variable);
        assert_eq!(
            r.risk == Risk::Durability,
            !r.loses.is_empty(),
            "{}: durability rows say what a crash loses",
            r.variable
        );
        assert_eq!(r.risk == Risk::Durability, r.area == Area::Durability, "{}", r.variable);
        assert!(!r.applies.is_empty(), "{}", r.variable);
    }
    assert!(rule_for("innodb_flush_method", Risk::Durability).is_some_and(|r| r.rule.contains("NO_FSYNC")));
    assert!(rule_for("innodb_flush_method", Risk::Safe).is_some_and(|r| r.rule.starts_with("O_DIRECT instead")));
}

#[test]
fn a_value_within_a_quarter_of_the_current_is_not_worth_a_measurement() {
    // MariaDB's 400 table definitions against 2 tables + 400: 402 is no change a benchmark can see.
    let mut vars = mysql97();
    vars.insert("table_definition_cache".into(), "400".into());
    vars.insert("thread_cache_size".into(), "7".into());
    let mut f = facts(Flavor::Mysql, Version::new(9, 7, 4), vars);
    let p = f.probe.as_mut().unwrap();
    p.deltas.insert("Threads_created".into(), 8);
    let (c, considered) = candidates(&f);
    for name in ["table_definition_cache", "thread_cache_size"] {
        assert!(c.iter().all(|x| x.variable != name), "{name} proposed: {c:?}");
        let k = considered.iter().find(|x| x.variable == name).unwrap();
        assert!(k.outcome.contains("within 25 % of the current") && k.outcome.contains("too small a change"), "{k:?}");
    }
    // 200 tables: 600 is half again the current, a candidate.
    f.tables = Some(200);
    let (c, _) = candidates(&f);
    assert_eq!(find(&c, "table_definition_cache", Risk::Safe).map(|x| x.value.as_str()), Some("600"));
    assert!(too_close("134217728", "150M") && !too_close("134217728", "160M") && !too_close("0", "5"));
}

#[test]
fn io_capacity_follows_the_measured_fsync_over_the_rotational_flag() {
    let mut vars = mysql97();
    vars.insert("innodb_io_capacity".into(), "200".into());
    let mut f = facts(Flavor::Mysql, Version::new(9, 7, 4), vars);
    // A virtual disk that says rotational but syncs in 0.05 ms (this machine's /dev/vda).
    f.rotational = Some(true);
    f.fsync_us = Some(50.0);
    let (c, _) = candidates(&f);
    let io = find(&c, "innodb_io_capacity", Risk::Safe).expect("a candidate");
    assert_eq!(io.value, "20000");
    assert!(io.why.contains("the device says rotational, but syncs faster"), "{io:?}");
    // A real spinning disk: 8 ms per sync write.
    f.fsync_us = Some(8000.0);
    let (c, considered) = candidates(&f);
    assert!(find(&c, "innodb_io_capacity", Risk::Safe).is_none());
    let k = considered.iter().find(|k| k.variable == "innodb_io_capacity").unwrap();
    assert!(k.outcome.contains("a rotational disk: 200"), "{k:?}");
}

#[test]
fn the_probe_summary_gives_the_checkpoint_age_against_the_redo_log() {
    let mut f = facts(Flavor::Mysql, Version::new(9, 7, 4), mysql97());
    let mut p = probe(2.0 * MIB as f64);
    let s = crate::advise::inspect::summarize(&p, &f);
    assert_eq!((s.checkpoint_age, s.checkpoint_share), (None, None));
    p.ends.insert("Innodb_redo_log_current_lsn".into(), 900 * MIB as i64);
    p.ends.insert("Innodb_redo_log_checkpoint_lsn".into(), 825 * MIB as i64);
    let s = crate::advise::inspect::summarize(&p, &f);
    // 75 MiB of the 100 MiB redo capacity.
    assert_eq!((s.checkpoint_age, s.checkpoint_limit), (Some(75 * MIB), Some(100 * MIB)));
    assert!((s.checkpoint_share.unwrap() - 0.75).abs() < 1e-9, "{s:?}");
    // MariaDB: its own gauge, against its one log file.
    (f.flavor, f.version) = (Flavor::Mariadb, Version::new(11, 8, 6));
    f.variables.remove("innodb_redo_log_capacity");
    f.variables.insert("innodb_log_file_size".into(), (96 * MIB).to_string());
    p.ends.insert("Innodb_checkpoint_age".into(), 48 * MIB as i64);
    let s = crate::advise::inspect::summarize(&p, &f);
    assert_eq!((s.checkpoint_age, s.checkpoint_limit), (Some(48 * MIB), Some(96 * MIB)));
    assert!((s.checkpoint_share.unwrap() - 0.5).abs() < 1e-9, "{s:?}");
    // Against the limit the server reports, where it reports one.
    p.ends.insert("Innodb_checkpoint_max_age".into(), 80 * MIB as i64);
    let s = crate::advise::inspect::summarize(&p, &f);
    assert_eq!(s.checkpoint_limit, Some(80 * MIB));
    assert!((s.checkpoint_share.unwrap() - 0.6).abs() < 1e-9, "{s:?}");
}

#[test]
fn buffer_pool_instances_are_proposed_where_the_server_would_take_8() {
    let advice = |version: Version, cpus: u32| {
        let mut f = facts(Flavor::Mysql, version, mysql97());
        f.cpus = cpus;
        let (c, considered) = candidates(&f);
        let n = find(&c, "innodb_buffer_pool_instances", Risk::Safe).map(|x| x.value.clone());
        let why = considered.iter().find(|x| x.variable == "innodb_buffer_pool_instances").map(|x| x.outcome.clone());
        (n, why)
    };
    // MySQL 8.0 would take 8 instances for the advised 2 GiB pool: one per GiB, at most one per CPU.
    assert_eq!(advice(Version::new(8, 0, 40), 2).0.as_deref(), Some("2"));
    assert_eq!(advice(Version::new(8, 0, 40), 16).0.as_deref(), Some("2"));
    // MySQL 8.4: the server's own choice, half the pool's 128 MiB chunks and at most a quarter of the CPUs.
    let (n, why) = advice(Version::new(8, 4, 3), 16);
    assert_eq!(n, None);
    assert!(why.is_some_and(|w| w.contains("(4 for a 2 GiB pool on 16 CPU(s))")));
}
