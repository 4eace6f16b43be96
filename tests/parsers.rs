//! Every parser of user input is total: whatever the text, it gives a value or one line that names
//! the place (the flag, the file, the key or the text), never a panic, an abort or a stack overflow.
//! Arbitrary strings and near-valid ones (pieces of the real syntax) feed each parser; the script
//! parser's own properties, with the deep-nesting bound, are beside it
//! (src/workload/script/parse/total.rs).

use std::path::Path;

use proptest::prelude::*;
use versus::experiment::ExperimentFile;
use versus::experiment::blocks::parse_range;
use versus::experiment::spec::parse_duration;
use versus::server::Flavor;
use versus::server::config::parse_override;
use versus::server::fetch::vendor::parse_want;
use versus::server::fetch::vendor::sites::Sites;
use versus::server::mycnf::{self, MyCnf};
use versus::store::Location;
use versus::workload::ibench::parse_steps;
use versus::workload::script::parse::file_and_weight;
use versus::workload::sysbench::options;

fn one_line(e: &str) -> bool {
    !e.is_empty() && !e.contains('\n')
}

/// Near-valid experiment files: keys, tables and values of the real format, in any order.
fn experiment_piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "name = \"x\"\n",
        "name = \" x\"\n",
        "builds = [\"system\"]\n",
        "threads = [1, 2]\n",
        "threads = [0]\n",
        "threads = []\n",
        "duration = \"2s\"\n",
        "duration = \"99999999999999999999h\"\n",
        "duration = \"9223372036854775807h\"\n",
        "warmup = \"1m\"\n",
        "repetitions = 2\n",
        "repetitions = { min = 3, max = 2 }\n",
        "repetitions = -1\n",
        "order = \"shuffled\"\n",
        "order = \"sideways\"\n",
        "[[configs]]\n",
        "name = \"c\"\n",
        "name = \"c \"\n",
        "set = { a = 1 }\n",
        "set = { log-bin = true, x = false }\n",
        "[[targets]]\n",
        "build = \"system\"\n",
        "address = \"127.0.0.1:1\"\n",
        "config = \"c\"\n",
        "charset = \"utf8mb4\"\n",
        "charset = \"nope\"\n",
        "[[workloads]]\n",
        "test = \"oltp_read_only\"\n",
        "test = \"nope\"\n",
        "options = { tables = 1 }\n",
        "options = { tables = -5 }\n",
        "script = \"/nonexistent.sql\"\n",
        "settle = \"soon\"\n",
        "pin_cpus = true\n",
        "=\n",
        "[\n",
        "\"\n",
        "é = 1\n",
        "\u{0}\n",
    ])
}

/// Near-valid my.cnf lines: groups, options, quotes, escapes, comments and directives.
fn mycnf_piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "[mysqld]\n",
        "[client]\n",
        "[\n",
        "]\n",
        "port = 1\n",
        "skip-log-bin\n",
        "a = \"b\n",
        "a = 'b'\n",
        "a = \"\\x\"\n",
        "a = b # c\n",
        "# comment\n",
        "; comment\n",
        "!include\n",
        "!include /nonexistent\n",
        "!includedir /nonexistent\n",
        "!nonsense\n",
        "=\n",
        " = 1\n",
        "\\\n",
        "a=\u{0}\n",
        "é = ü\n",
        "\n",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn durations(text in prop_oneof!["\\PC{0,12}", "[0-9]{1,22}[smh]{0,2}([0-9]{1,22}[smh])?"]) {
        if let Err(e) = parse_duration(&text) {
            prop_assert!(one_line(&e) && e.contains(&format!("'{text}'")), "{e}");
        }
    }

    #[test]
    fn experiment_files(pieces in prop::collection::vec(experiment_piece(), 0..25), junk in "\\PC{0,40}") {
        for text in [pieces.concat(), junk.clone(), format!("{}{junk}", pieces.concat())] {
            if let Err(e) = ExperimentFile::parse(&text) {
                prop_assert!(one_line(&e), "{text:?}: {e:?}");
            }
        }
    }

    #[test]
    fn mycnf_files(pieces in prop::collection::vec(mycnf_piece(), 0..20), junk in "\\PC{0,40}") {
        for text in [pieces.concat(), junk.clone()] {
            if let Err(e) = MyCnf::parse(&text, Path::new("fuzz.cnf")) {
                let e = e.to_string();
                prop_assert!(one_line(&e) && e.contains("fuzz.cnf"), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn set_overrides(text in prop_oneof!["\\PC{0,30}", "[a-z_-]{0,12}(=[^\n]{0,8})?"]) {
        if let Err(e) = parse_override(&text) {
            let e = e.to_string();
            prop_assert!(one_line(&e) && e.starts_with("--set: "), "{text:?}: {e}");
        }
    }

    #[test]
    fn version_ranges(text in prop_oneof!["\\PC{0,20}", "[0-9.]{0,10}(\\.\\.[0-9.-]{0,10})?"]) {
        for flavor in [Flavor::Mariadb, Flavor::Mysql, Flavor::Percona] {
            if let Err(e) = parse_want(flavor, &text) {
                prop_assert!(one_line(&e) && e.contains(&text), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn urls(text in prop_oneof!["\\PC{0,30}", "(https?|postgres(ql)?)://[^\n]{0,20}"]) {
        if let Err(e) = Sites::mirror(&text) {
            prop_assert!(one_line(&e) && e.contains("is not an http:// or https:// URL"), "{e}");
        }
        // The store's location shows a URL without its password, whatever the URL.
        let shown = Location::parse(&text).to_string();
        prop_assert!(!shown.contains('\n') || text.contains('\n'));
    }

    #[test]
    fn block_ranges_steps_and_script_weights(text in "\\PC{0,20}") {
        if let Err(e) = parse_range(&text) {
            prop_assert!(one_line(&e), "{e}");
        }
        if let Err(e) = parse_steps(&text, &[100, 500]) {
            let e = e.to_string();
            prop_assert!(one_line(&e) && e.starts_with("--steps: "), "{e}");
        }
        if let Err(e) = file_and_weight(&text) {
            prop_assert!(one_line(&e) && e.starts_with(&text), "{e}");
        }
    }

    #[test]
    fn sysbench_options(name in prop::sample::select(vec![
        "threads", "time", "events", "rate", "report-interval", "percentile", "rand-type", "rand-seed",
        "tables", "table-size", "mysql-port", "mysql-ssl", "client-threads", "warmup-time", "histogram",
    ]), value in prop_oneof!["\\PC{0,12}", "-?[0-9]{1,22}"]) {
        let args = vec!["oltp_read_only".to_string(), format!("--{name}={value}"), "run".to_string()];
        if let Err(e) = options::parse(&args) {
            let e = e.to_string();
            prop_assert!(one_line(&e) && e.starts_with("--"), "{args:?}: {e}");
        }
    }
}

/// Includes: a chain deeper than the bound stops there with a warning naming the file (as the server
/// skips it), and a cycle is one line naming a file; neither is a stack overflow.
#[test]
fn mycnf_includes_deep_and_cyclic() {
    let dir = tempfile::tempdir().unwrap();
    let n = 200;
    for i in 0..n {
        let next = dir.path().join(format!("{}.cnf", i + 1));
        std::fs::write(dir.path().join(format!("{i}.cnf")), format!("[mysqld]\n!include {}\n", next.display()))
            .unwrap();
    }
    std::fs::write(dir.path().join(format!("{n}.cnf")), "[mysqld]\nport = 1\n").unwrap();
    let o = mycnf::resolve(&dir.path().join("0.cnf"), &["mysqld"]).unwrap();
    assert!(o.warnings().iter().any(|w| w.contains("10.cnf") && w.contains("nest more than 10 levels")), "{o:?}");
    let a = dir.path().join("a.cnf");
    let b = dir.path().join("b.cnf");
    std::fs::write(&a, format!("[mysqld]\n!include {}\n", b.display())).unwrap();
    std::fs::write(&b, format!("[mysqld]\n!include {}\n", a.display())).unwrap();
    let e = mycnf::resolve(&a, &["mysqld"]).unwrap_err().to_string();
    assert!(one_line(&e) && e.contains(".cnf"), "{e}");
}

#[test]
fn a_duration_too_long_is_an_error_not_an_overflow() {
    let e = parse_duration("9223372036854775807h").unwrap_err();
    assert!(e.contains("too long a duration"), "{e}");
    assert_eq!(parse_duration("1h1m1s").unwrap().as_secs(), 3661);
}

/// Deeply nested TOML (arrays, inline tables) in an experiment file is one line, not a stack overflow.
#[test]
fn deeply_nested_experiment_files_are_one_line() {
    let n = 100_000;
    for text in [
        format!("name = {}1{}\n", "[".repeat(n), "]".repeat(n)),
        format!("name = {}1{}\n", "{a = ".repeat(n), "}".repeat(n)),
    ] {
        let e = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || ExperimentFile::parse(&text).map(|_| ()))
            .unwrap()
            .join()
            .expect("no stack overflow")
            .unwrap_err();
        assert!(one_line(&e) && e.starts_with("line 1"), "{e}");
    }
}

/// Files that never end or block (a device, a FIFO) given where versus reads a file are refused in one
/// line at once, as an experiment file, a script, an option file and an included option file.
#[test]
fn endless_or_blocking_files_are_refused_wherever_a_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    for bad in [Path::new("/dev/zero"), fifo.as_path()] {
        let e = ExperimentFile::load(bad).unwrap_err().to_string();
        assert!(one_line(&e) && e.contains("not a regular file"), "{e}");
        let e = mycnf::resolve(bad, &["mysqld"]).unwrap_err().to_string();
        assert!(one_line(&e) && e.contains("not a regular file"), "{e}");
        let top = dir.path().join("top.cnf");
        std::fs::write(&top, format!("[mysqld]\n!include {}\n", bad.display())).unwrap();
        let e = mycnf::resolve(&top, &["mysqld"]).unwrap_err().to_string();
        assert!(one_line(&e) && e.contains("not a regular file"), "{e}");
        let e = versus::workload::script::parse::load(bad, 1, &[]).unwrap_err().to_string();
        assert!(one_line(&e) && e.contains("not a regular file"), "{e}");
    }
}
