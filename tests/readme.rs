//! Every command line in README.md's code blocks is written to run as it stands: each `versus …` line
//! is accepted by versus's own command-line parser (and a `versus sysbench` line by the sysbench option
//! parser), has no placeholder (`PORT`, `RUN`, a literal `...`), and every file it names is in the
//! repository. The lines are read from README.md itself, not from a copy, so an edit that breaks one
//! fails here, naming the README line.
//!
//! This checks that the lines parse and name real files; it does not start servers (the commands that
//! need a running sandbox are exercised by tests/sandbox.rs, tests/experiment.rs and the others).

use std::path::Path;

use clap::Parser as _;

/// (README line number, command line) for every `versus` line of a fenced code block, continuation
/// lines joined and trailing `# comments` removed.
fn command_lines(readme: &str) -> Vec<(usize, String)> {
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
        if joined.starts_with("versus ") {
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
        Some(["server", "start" | "vars" | "stop" | "snapshot" | "restore"]) => (positional(3), None),
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
    if argv.get(1).map(String::as_str) == Some("sysbench")
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
