//! Every command line in README.md's code blocks is written to run as it stands: each `versus …` line
//! is accepted by versus's own command-line parser (and a `versus sysbench` line by the sysbench option
//! parser), has no placeholder (`PORT`, `RUN`, a literal `...`), and every file it names is in the
//! repository. The lines are read from README.md itself, not from a copy, so an edit that breaks one
//! fails here, naming the README line.
//!
//! `readme_command_lines_run_in_order` then EXECUTES them, in README order, in a temporary versus home
//! against real sandboxes, and fails on the first that does not exit 0, naming its README line. What it
//! changes is in the tables below: sizes made smaller ([`SMALLER`], [`APPENDED`], [`SMALLER_FILES`]),
//! builds registered beforehand instead of downloaded ([`PREREGISTERED`]) and the lines it does not
//! execute, each with the reason ([`NOT_EXECUTED`]). Every line of a README code block is either executed
//! or listed there; a table entry that matches no README line fails the test too.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser as _;

/// (README line number, command line) for every `versus` line of a fenced code block, continuation
/// lines joined and trailing `# comments` removed.
fn command_lines(readme: &str) -> Vec<(usize, String)> {
    block_lines(readme).into_iter().filter(|(_, l)| l.starts_with("versus ")).collect()
}

/// (README line number, line) for every non-empty line of a fenced code block, continuation lines
/// joined and `# comments` removed.
fn block_lines(readme: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let text = strip_comment(line);
        let (start, mut joined) = match pending.take() {
            Some((n, s)) => (n, s + " " + text.trim()),
            None => (i + 1, text.trim().to_string()),
        };
        if let Some(rest) = joined.strip_suffix('\\') {
            joined = rest.trim_end().to_string();
            pending = Some((start, joined));
            continue;
        }
        if !joined.is_empty() {
            out.push((start, joined));
        }
    }
    out
}

/// `line` without a `#` comment (a `#` after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev_space) = (false, false, true);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Shell words: whitespace-separated, with '…' and "…" quoting.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut any) = (Vec::new(), String::new(), false);
    let (mut single, mut double) = (false, false);
    for c in line.chars() {
        match c {
            '\'' if !double => {
                single = !single;
                any = true;
            }
            '"' if !single => {
                double = !double;
                any = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The builds a README command line uses (which an earlier line must have fetched), and the build it
/// fetches, if any.
fn builds(argv: &[String]) -> (Vec<String>, Option<String>) {
    let a: Vec<&str> = argv.iter().map(String::as_str).collect();
    let positional = |from: usize| -> Vec<String> {
        a.iter().skip(from).take_while(|w| !w.starts_with('-')).map(|w| w.to_string()).collect()
    };
    match a.get(1..3) {
        Some(["server", "fetch"]) => {
            let name = a.iter().position(|w| *w == "--name").and_then(|i| a.get(i + 1)).or(a.get(3));
            (Vec::new(), name.map(|n| n.to_string()))
        }
        Some(["server", "start"]) => {
            // A sandbox started under --name is a name the later lines may use like a build's.
            let name = a.iter().position(|w| *w == "--name").and_then(|i| a.get(i + 1));
            (positional(3), name.map(|n| n.to_string()))
        }
        Some(["server", "vars" | "stop" | "snapshot" | "restore"]) => (positional(3), None),
        Some(["series" | "diff-vars", _]) => (positional(2), None),
        Some(["explain", _]) => {
            (positional(2).iter().map(|t| t.split(':').next().unwrap().to_string()).collect(), None)
        }
        _ => (Vec::new(), None),
    }
}

/// What keeps `argv` (a README command line) from running as written, if anything.
fn problem(argv: &[String], root: &Path) -> Option<String> {
    for w in argv {
        let value = w.split_once('=').map_or(w.as_str(), |(_, v)| v);
        if w.contains("...") || w.contains('…') {
            return Some(format!("`{w}` is an ellipsis, not an argument"));
        }
        if value.len() >= 3 && value.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            return Some(format!("`{w}` is a placeholder"));
        }
        let file_like = [".toml", ".sql", ".cnf", ".sh"].iter().any(|e| value.ends_with(e));
        if file_like && !root.join(value).exists() {
            return Some(format!("`{value}` is not in the repository"));
        }
        if value.ends_with(".cnf")
            && let Err(e) = versus::server::managed::check_config_file(&root.join(value))
        {
            return Some(format!("`{value}` would be refused: {e}"));
        }
    }
    if let Err(e) = versus::cli::Cli::try_parse_from(argv) {
        return Some(format!("the parser refuses it: {}", e.to_string().lines().next().unwrap_or("")));
    }
    // A Lua script's options are the script's own: the execution below checks those lines.
    if argv.get(1).map(String::as_str) == Some("sysbench")
        && !versus::workload::lua::wants(&argv[2..])
        && let Err(e) = versus::workload::sysbench::options::parse(&argv[2..])
    {
        return Some(format!("the sysbench options are refused: {e}"));
    }
    None
}

#[test]
fn every_readme_command_line_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = command_lines(&readme);
    assert!(lines.len() >= 25, "found only {} versus lines in README.md's code blocks", lines.len());
    let mut fetched: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in &lines {
        let argv = words(line);
        let (uses, fetches) = builds(&argv);
        let unfetched = uses
            .iter()
            .find(|b| !fetched.contains(b))
            .map(|b| format!("build `{b}` is not fetched by an earlier line"));
        if let Some(p) = problem(&argv, root).or(unfetched) {
            problems.push(format!("README.md line {n}: {line}\n  {p}"));
        }
        fetched.extend(fetches);
    }
    assert!(
        problems.is_empty(),
        "{} README command line(s) do not run as written:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_reader_of_the_readme_sees_what_is_wrong() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = "```sh\nversus server start system   # a comment\nversus show RUN\n\
                versus sysbench oltp_read_write --threads=4 \\\n    ... run\nversus run nothere.toml\n\
                versus frobnicate\nversus server vars system --like 'innodb_flush%'\n```\nversus outside\n";
    let lines = command_lines(text);
    let got: Vec<(usize, Option<String>)> = lines.iter().map(|(n, l)| (*n, problem(&words(l), root))).collect();
    assert_eq!(got.len(), 6, "{lines:?}");
    assert_eq!(got[0], (2, None));
    assert!(got[1].1.as_deref().unwrap().contains("`RUN` is a placeholder"));
    assert_eq!(got[2].0, 4, "a continued line is one command, numbered by its first line");
    assert!(got[2].1.as_deref().unwrap().contains("ellipsis"));
    assert!(got[3].1.as_deref().unwrap().contains("not in the repository"));
    assert!(got[4].1.as_deref().unwrap().contains("parser refuses"));
    assert_eq!(got[5].1, None, "a quoted pattern with % is one word");
    assert_eq!(words("a 'b c' \"d\"")[1..], ["b c".to_string(), "d".to_string()]);
    let argv = |l: &str| words(l);
    assert_eq!(builds(&argv("versus server fetch mariadb-11.8 --name m11")), (vec![], Some("m11".to_string())));
    assert_eq!(builds(&argv("versus series a b --workload x")).0, ["a", "b"]);
    assert_eq!(builds(&argv("versus explain system:log-bin,x=1 m:y=2 --workload w")).0, ["system", "m"]);
}

/// README lines the test does not execute (matched by prefix), and why.
const NOT_EXECUTED: &[(&str, &str)] = &[
    (
        "bash scripts/quickstart.sh",
        "installs packages with apt, builds versus and runs a 20-run job: the set-up this test runs in",
    ),
    ("bash scripts/test.sh", "runs the whole test suite, this test included"),
    (
        "versus server fetch mysql-8.0.36",
        "downloads Oracle's tarball (hundreds of MB) and checks it against the catalog's checksum; vendor \
         fetches run against a local mirror in tests/archives.rs, whose repackaged tarballs cannot carry 8.0.36's checksum",
    ),
    ("versus server fetch mysql-8.0.30..8.0.36", "downloads seven Oracle tarballs (see the line above)"),
    ("versus server available mariadb-10.11", "reads Debian's package lists over the network"),
    (
        "versus calibrate",
        "measures this host's noise (A/A): with test-sized runs on a loaded 2-core machine it rightly refuses \
         (CV 54-77 % with 1-2 s runs here) and runs long enough to pass take minutes; tests/calibrate.rs runs it",
    ),
];

/// Builds the README fetches from Debian's archives. The test registers each in its home beforehand, as
/// the build the version tests keep in the shared test-build cache (`common::fetched_build`), so the
/// README's fetch line runs and says the build is already fetched: the line itself downloads nothing.
const PREREGISTERED: &[&str] = &["mariadb-11.8", "mysql-9.7", "mariadb-10.5"];

/// Sizes made smaller: (line prefix, README word, word the test runs), whole words only.
const SMALLER: &[(&str, &str, &str)] = &[
    ("versus sysbench oltp_read_write", "--table-size=100000", "--table-size=1000"),
    ("versus sysbench oltp_read_write", "--time=60", "--time=2"),
    ("versus script examples/checkout.sql", "--time=60", "--time=2"),
    ("versus sysbench examples/lua/tpcc_like.lua", "--time=60", "--time=2"),
    ("versus ibench", "200000", "2000"),
    ("versus ibench", "20000", "500"),
    ("versus ibench", "5000", "200"),
    ("versus ibench", "30", "1"),
];

/// Flags appended to lines whose defaults measure for minutes: (line prefix, flags).
const APPENDED: &[(&str, &str)] = &[
    ("versus explain", "--duration 1s --repetitions 2 --tables 1 --table-size 1000 --no-confirm --extra-rounds 0"),
    ("versus series", "--duration 1s --repetitions 1 --tables 1 --table-size 1000"),
    // The cleanup waits a minute by default whatever the size: nothing the test needs.
    ("versus ibench", "--cleanup-seconds 2"),
];

/// Example files the test's working directory gets with smaller sizes: (file, README text, test text).
/// The other files of examples/ are copied as they are.
const SMALLER_FILES: &[(&str, &str, &str)] = &[
    ("examples/durability.toml", "duration = \"30s\"", "duration = \"1s\""),
    ("examples/durability.toml", "warmup = \"5s\"", "warmup = \"0s\""),
    ("examples/durability.toml", "repetitions = 3", "repetitions = 1"),
    ("examples/durability.toml", "table-size = 100000", "table-size = 1000"),
    ("examples/why.toml", "duration = \"30s\"", "duration = \"2s\""),
    ("examples/why.toml", "warmup = \"5s\"", "warmup = \"0s\""),
    ("examples/why.toml", "threads = [1, 4]", "threads = [2]"),
    ("examples/why.toml", "repetitions = 3", "repetitions = 1"),
    ("examples/why.toml", "table-size = 10000", "table-size = 1000"),
];

/// The port the README's lines give a sandbox and connect to.
const README_PORT: &str = "3407";

/// The port the test runs the README's lines on: [`README_PORT`] when it is free on 127.0.0.1, else a
/// free one (said in the test's output), so that another program holding the port cannot fail the test.
fn port_to_run_on() -> String {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    if free(README_PORT.parse().unwrap()) {
        return README_PORT.to_string();
    }
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    eprintln!("README: port {README_PORT} is taken on this machine; its lines run with port {other} instead");
    other.to_string()
}

/// `argv` with the README's port replaced by `port` (as a word of its own or after `=`).
fn on_port(argv: Vec<String>, port: &str) -> Vec<String> {
    argv.into_iter()
        .map(|w| match w.strip_suffix(README_PORT) {
            Some(head) if head.is_empty() || head.ends_with('=') => format!("{head}{port}"),
            _ => w,
        })
        .collect()
}

#[test]
fn the_readme_port_is_replaced_as_a_word_or_a_value_only() {
    let argv = words("versus server start system --port 3407 --mysql-port=3407 --x=13407 34070");
    let got = on_port(argv, "4000");
    assert_eq!(got[4..], ["--port", "4000", "--mysql-port=4000", "--x=13407", "34070"]);
}

/// `line` as the test runs it (after [`SMALLER`] and [`APPENDED`]), and the table entries it used.
fn as_run(line: &str) -> (Vec<String>, Vec<String>) {
    let (mut argv, mut used) = (words(line), Vec::new());
    for (prefix, from, to) in SMALLER {
        if line.starts_with(prefix) {
            for w in argv.iter_mut().filter(|w| w == from) {
                *w = to.to_string();
                used.push(format!("{prefix} {from}"));
            }
        }
    }
    for (prefix, flags) in APPENDED {
        if line.starts_with(prefix) {
            argv.extend(flags.split(' ').map(String::from));
            used.push(format!("{prefix} +"));
        }
    }
    (argv, used)
}

fn not_executed(line: &str) -> Option<&'static str> {
    NOT_EXECUTED.iter().find(|(p, _)| line == *p || line.starts_with(&format!("{p} "))).map(|(_, why)| *why)
}

/// The test's home and working directory; dropping it stops every sandbox the README started and
/// removes both.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn cwd(&self) -> PathBuf {
        self.dir.path().join("cwd")
    }
    fn versus(&self, argv: &[String]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_versus"))
            .args(&argv[1..])
            .env("VERSUS_HOME", self.home())
            .env_remove("VERSUS_MIRROR")
            .current_dir(self.cwd())
            .output()
            .expect("runs versus")
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir(self.home().join("sandboxes")) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let _ = self.versus(&["versus".into(), "server".into(), "stop".into(), name]);
        }
    }
}

/// Copies examples/ (with its sub-folders) into `to`, with [`SMALLER_FILES`] applied (each replacement
/// must match once).
fn copy_examples(root: &Path, to: &Path) {
    copy_folder(root, to, "examples");
}

fn copy_folder(root: &Path, to: &Path, folder: &str) {
    std::fs::create_dir_all(to.join(folder)).unwrap();
    for e in std::fs::read_dir(root.join(folder)).unwrap().flatten() {
        let rel = format!("{folder}/{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            copy_folder(root, to, &rel);
            continue;
        }
        let mut text = std::fs::read_to_string(e.path()).unwrap();
        for (file, from, into) in SMALLER_FILES.iter().filter(|(f, _, _)| *f == rel) {
            assert_eq!(text.matches(from).count(), 1, "SMALLER_FILES: `{from}` is not once in {file}");
            text = text.replace(from, into);
        }
        std::fs::write(to.join(&rel), text).unwrap();
    }
}

#[test]
fn readme_command_lines_run_in_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let world = World { dir: tempfile::Builder::new().prefix("versus-readme-").tempdir().unwrap() };
    std::fs::create_dir_all(world.cwd()).unwrap();
    copy_examples(root, &world.cwd());
    let home = versus::server::Home::at(world.home());
    for name in PREREGISTERED {
        home.register(&common::fetched_build(name)).unwrap();
    }
    let port = port_to_run_on();
    let (mut used, mut skipped, started) = (Vec::new(), Vec::new(), std::time::Instant::now());
    for (n, line) in block_lines(&readme) {
        if let Some(why) = not_executed(&line) {
            eprintln!("README.md:{n} not executed ({why}): {line}");
            skipped.push(line);
            continue;
        }
        assert!(line.starts_with("versus "), "README.md:{n} is neither a versus line nor in NOT_EXECUTED: {line}");
        let (argv, entries) = as_run(&line);
        let argv = on_port(argv, &port);
        used.extend(entries);
        let t = std::time::Instant::now();
        let out = world.versus(&argv);
        eprintln!("README.md:{n} {:.1} s: {}", t.elapsed().as_secs_f64(), argv.join(" "));
        let tail = |b: &[u8]| {
            let s = String::from_utf8_lossy(b).into_owned();
            s.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
        };
        assert!(
            out.status.success(),
            "README.md line {n} does not work: {line}\n  ran: {}\n  exit: {}\n--- stdout (end)\n{}\n--- stderr (end)\n{}",
            argv.join(" "),
            out.status,
            tail(&out.stdout),
            tail(&out.stderr)
        );
    }
    for (prefix, from, _) in SMALLER {
        assert!(
            used.contains(&format!("{prefix} {from}")),
            "SMALLER entry `{prefix}` / `{from}` matches no README line"
        );
    }
    for (prefix, _) in APPENDED {
        assert!(used.contains(&format!("{prefix} +")), "APPENDED entry `{prefix}` matches no README line");
    }
    for (prefix, _) in NOT_EXECUTED {
        assert!(skipped.iter().any(|l| l.starts_with(prefix)), "NOT_EXECUTED entry `{prefix}` matches no README line");
    }
    assert!(
        world.cwd().join("durability.html").exists(),
        "`versus report durability -o durability.html` wrote nothing"
    );
    eprintln!("README: every line executed or listed, {:.0} s", started.elapsed().as_secs_f64());
}
