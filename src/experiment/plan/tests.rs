//! Tests of the plan: targets, cells, preparations, run order, rounds, estimates.

use super::*;
use crate::experiment::spec::Order;

fn plan(text: &str) -> Plan {
    Plan::new(&ExperimentFile::parse(text).unwrap(), Path::new("/exp")).unwrap()
}

const TWO_CONFIGS: &str = r#"
name = "x"
builds = ["a", "b"]
threads = [1, 8]
repetitions = 3
[[configs]]
name = "c1"
file = "base.cnf"
set = { sync_binlog = 1 }
[[configs]]
name = "c2"
set = { sync_binlog = 0, innodb_page_size = "8k" }
[[workloads]]
test = "oltp_read_write"
options = { tables = 2, table-size = 1000 }
[[workloads]]
test = "oltp_point_select"
options = { tables = 2, table_size = 1000 }
"#;

#[test]
fn builds_cross_configs_and_cells_cross_workloads_and_threads() {
    let p = plan(TWO_CONFIGS);
    let labels: Vec<&str> = p.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["a/c1", "a/c2", "b/c1", "b/c2"]);
    assert_eq!(p.cells.len(), 4 * 2 * 2);
    assert_eq!(p.runs.len(), 16 * 3);
    assert_eq!(p.cells[0].key, "target=a/c1;workload=oltp_read_write;threads=1");
    match &p.targets[0].kind {
        TargetKind::Sandbox { base_file, overrides, .. } => {
            assert_eq!(base_file.as_deref(), Some(Path::new("/exp/base.cnf")));
            assert_eq!(overrides, &["sync_binlog=1"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn data_is_prepared_once_per_build_and_shape_unless_init_options_differ() {
    let p = plan(TWO_CONFIGS);
    // Both workloads share the oltp shape; c2 has an init-time option, so it gets its own data.
    let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "build=a;oltp;table_size=1000;tables=2",
            "build=a;innodb_page_size=8k;oltp;table_size=1000;tables=2",
            "build=b;oltp;table_size=1000;tables=2",
            "build=b;innodb_page_size=8k;oltp;table_size=1000;tables=2",
        ]
    );
    assert_eq!(p.preparations[0].rows, 2000);
}

#[test]
fn targets_whose_data_shaping_values_differ_get_their_own_data() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("latin1.cnf"), "[mysqld]\ncharacter-set-server = latin1\nsync_binlog = 0\n")
        .unwrap();
    let text = r#"
name = "x"
[[configs]]
name = "l1"
file = "latin1.cnf"
[[targets]]
name = "utf8"
build = "b"
set = { character_set_server = "utf8mb4", collation_server = "utf8mb4_general_ci", sync_binlog = 1 }
[[targets]]
name = "latin1"
build = "b"
set = { collation-server = "latin1_swedish_ci", character-set-server = "latin1" }
charset = "latin1"
[[targets]]
name = "latin1-from-file"
build = "b"
config = "l1"
set = { collation_server = "latin1_swedish_ci", innodb_buffer_pool_size = "1G" }
[[targets]]
name = "checksums"
build = "b"
set = { innodb_checksum_algorithm = "crc32" }
[[workloads]]
test = "oltp_read_only"
options = { tables = 1, table-size = 100 }
"#;
    let file = ExperimentFile::parse(text).unwrap();
    let mariadb = |_: &str| Some((crate::server::Flavor::Mariadb, crate::server::Version::new(11, 8, 9)));
    let p = Plan::with_lines(&file, dir.path(), &mariadb).unwrap();
    let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "build=b;character_set_server=utf8mb4;collation_server=utf8mb4_general_ci;oltp;table_size=100;tables=1",
            "build=b;character_set_server=latin1;collation_server=latin1_swedish_ci;oltp;table_size=100;tables=1",
            "build=b;innodb_checksum_algorithm=crc32;oltp;table_size=100;tables=1",
        ],
        "the character set from a base config counts; the buffer pool and sync_binlog do not"
    );
    let prep: Vec<usize> = p.cells.iter().map(|c| c.preparation).collect();
    assert_eq!(prep, [0, 1, 1, 2]);
    assert_eq!(p.preparations[1].server_options, ["character_set_server=latin1", "collation_server=latin1_swedish_ci"]);
    // On MySQL the page checksum algorithm does not shape the data.
    let mysql = |_: &str| Some((crate::server::Flavor::Mysql, crate::server::Version::new(8, 0, 36)));
    let p = Plan::with_lines(&file, dir.path(), &mysql).unwrap();
    assert_eq!(p.preparations.len(), 3);
    assert!(p.preparations[2].key.starts_with("build=b;oltp"), "{}", p.preparations[2].key);
    // The client side is the target's, not the data's.
    assert_eq!(p.targets[1].charset.as_ref().map(|c| c.statement()).as_deref(), Some("SET NAMES latin1"));
    assert!(p.describe().contains("; connections run SET NAMES latin1"), "{}", p.describe());
}

#[test]
fn a_collation_needs_a_character_set() {
    let t = "name = \"x\"\n[[targets]]\nbuild = \"b\"\ncollation = \"latin1_bin\"\n[[workloads]]\ntest = \"oltp_read_only\"\n";
    let e = ExperimentFile::parse(t).unwrap_err();
    assert!(e.starts_with("target #1: collation 'latin1_bin' needs the character set too"), "{e}");
    let t = t.replace("collation = \"latin1_bin\"", "charset = \"latin1; DROP\"");
    assert!(ExperimentFile::parse(&t).unwrap_err().contains("is not a character set or collation name"));
}

#[test]
fn shuffled_rounds_contain_every_cell_once_and_depend_on_the_seed() {
    let a = order_runs(5, 4, Order::Shuffled, 1);
    for rep in 1..=4 {
        let mut cells: Vec<usize> = a.iter().filter(|r| r.repetition == rep).map(|r| r.cell).collect();
        cells.sort();
        assert_eq!(cells, vec![0, 1, 2, 3, 4]);
    }
    assert_eq!(a, order_runs(5, 4, Order::Shuffled, 1));
    assert_ne!(a, order_runs(5, 4, Order::Shuffled, 2));
    let i = order_runs(2, 2, Order::Interleaved, 1);
    assert_eq!(i.iter().map(|r| r.cell).collect::<Vec<_>>(), vec![0, 1, 0, 1]);
    let s = order_runs(2, 2, Order::Sequential, 1);
    assert_eq!(s.iter().map(|r| r.cell).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
}

#[test]
fn dry_run_lists_every_run_and_an_estimate() {
    let p = plan(TWO_CONFIGS);
    let text = p.describe();
    assert!(
        text.starts_with(
            "experiment x: 4 target(s) × 2 workload(s) × 2 thread count(s) → 16 cells × 3 repetition(s) = 48 runs"
        ),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.ends_with("  1 thread")).count(), 24, "{text}");
    assert_eq!(text.lines().filter(|l| l.ends_with("  8 threads")).count(), 24, "{text}");
    assert!(text.contains(&format!("estimated duration: about {}\n", human(p.estimate()))), "{text}");
    assert!(p.estimate() < Duration::from_secs(3600) && text.contains(" min "), "{text}");
    assert!(p.estimate() >= Duration::from_secs(48 * 60));
}

#[test]
fn dry_run_columns_stay_in_line_with_long_labels() {
    let long = TWO_CONFIGS.replacen("builds = [", "builds = [\"a-build-with-a-label-much-longer-than-24-chars\", ", 1);
    let p = plan(&long);
    let text = p.describe();
    let rows: Vec<&str> =
        text.lines().filter(|l| l.contains(" rep ") && (l.ends_with("thread") || l.ends_with("threads"))).collect();
    assert!(rows.len() > 10, "{text}");
    let col = |l: &str| l.rfind(" thread").map(|i| l[..i].trim_end().len());
    let at: Vec<_> = rows.iter().map(|l| col(l)).collect();
    assert!(at.windows(2).all(|w| w[0] == w[1]), "thread counts not in one column:\n{}", rows.join("\n"));
}

#[test]
fn adaptive_plans_run_the_minimum_first_and_extra_rounds_continue_the_shuffle() {
    let text = TWO_CONFIGS.replace("repetitions = 3", "repetitions = { min = 2, max = 6, until = \"±3%\" }");
    let p = plan(&text);
    assert_eq!(p.runs.len(), 16 * 2, "the first look comes after min rounds");
    let fixed = plan(&TWO_CONFIGS.replace("repetitions = 3", "repetitions = 6"));
    for rep in 1..=6u32 {
        let want: Vec<PlannedRun> = fixed.runs.iter().filter(|r| r.repetition == rep).copied().collect();
        assert_eq!(p.round(rep), want, "round {rep} is the fixed plan's round");
    }
    let text = p.describe();
    assert!(text.contains("16 cells × 2–6 repetition(s) = 32–96 runs"), "{text}");
    assert!(text.contains("until every comparison is decisive or narrower than ±3%"), "{text}");
    assert!(text.contains("(group-sequential, 95 % overall)"), "{text}");
    assert!(p.describe_at(0.999).contains("(group-sequential, 99.9 % overall)"));
    let est = text.lines().find(|l| l.starts_with("estimated duration")).unwrap();
    assert!(est.contains("(2 rounds) to ") && est.ends_with("(6 rounds)"), "{est}");
    assert!(p.estimate_max() > p.estimate() * 2, "{est}");
}

#[test]
fn duplicate_labels_are_refused() {
    let t = r#"
name = "x"
[[targets]]
build = "a"
[[targets]]
build = "a"
[[workloads]]
test = "oltp_read_only"
"#;
    let e = Plan::new(&ExperimentFile::parse(t).unwrap(), Path::new("/")).unwrap_err();
    assert!(e.contains("two targets are named 'a'; give them distinct `name`s"), "{e}");
    for (x, y) in [("caf\u{e9}", "cafe\u{301}"), ("a", "a ")] {
        let t = format!(
            "name = \"x\"\n[[targets]]\nname = \"{x}\"\nbuild = \"a\"\n[[targets]]\nname = \"{y}\"\nbuild = \"a\"\n[[workloads]]\ntest = \"oltp_read_only\"\n"
        );
        let e = ExperimentFile::parse(&t).unwrap_err();
        assert!(e.contains("differ only in how") || e.contains("\"a \" has leading or trailing whitespace"), "{e}");
    }
}

mod example_tests {
    use super::*;

    #[test]
    fn the_shipped_examples_parse_and_plan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let (file, _) = ExperimentFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
                let plan = Plan::new(&file, &dir).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!plan.runs.is_empty());
                n += 1;
            }
        }
        assert!(n >= 3, "examples/ holds the three seed matrices");
    }
}
