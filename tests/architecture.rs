//! The layering of the source tree: no folder imports a folder that imports it back, and inside a
//! folder no file (or sub-folder) imports one that imports it back. Read from the `crate::` and
//! `super::` paths of every file under src/, comments and `#[cfg(test)]` items left out (tests may
//! reach anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path of a file: `src/experiment/plan.rs` → [experiment, plan]; `mod.rs` names its folder.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` outside comments and `#[cfg(test)]` items.
fn code_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if line.starts_with("#[cfg(test)]") {
            // Skip the item: one `mod x;` line, or a block up to its closing brace at column 0.
            for next in lines.by_ref() {
                if next.starts_with("mod ") && next.trim_end().ends_with(';') || next.starts_with('}') {
                    break;
                }
            }
            continue;
        }
        out.push(line);
    }
    out
}

/// Every module path a file refers to, resolved to absolute paths from the crate root.
fn references(module: &[String], is_mod_file: bool, text: &str) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    // The module a `super::` in this file is relative to.
    let parent: Vec<String> = if is_mod_file {
        module[..module.len().saturating_sub(1)].to_vec()
    } else {
        module[..module.len() - 1].to_vec()
    };
    for line in code_lines(text) {
        let bytes = line.as_bytes();
        for start in ["crate::", "super::"] {
            let mut from = 0;
            while let Some(i) = line[from..].find(start) {
                let at = from + i;
                from = at + start.len();
                if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':') {
                    continue;
                }
                let rest: String =
                    line[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
                let mut parts: Vec<&str> = rest.split("::").filter(|p| !p.is_empty()).collect();
                let mut base = if parts.first() == Some(&"crate") { Vec::new() } else { parent.clone() };
                parts.remove(0);
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    base.pop();
                }
                base.extend(parts.iter().map(|p| p.to_string()));
                out.insert(base);
            }
        }
    }
    out
}

/// The cycles (strongly connected components of more than one node) of a graph.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = graph.keys().collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        if !reachable[n].contains(*n) {
            continue;
        }
        let mut scc: Vec<String> = nodes
            .iter()
            .filter(|m| reachable[n].contains(**m) && reachable[**m].contains(*n))
            .map(|m| m.to_string())
            .collect();
        scc.sort();
        if !out.contains(&scc) {
            out.push(scc);
        }
    }
    out
}

struct Source {
    /// Module path → the module paths it refers to.
    refs: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

fn source() -> Source {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut refs = BTreeMap::new();
    for f in files {
        let module = module_of(&src, &f);
        if module.is_empty() {
            continue;
        }
        let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(&f).unwrap();
        refs.insert(module.clone(), references(&module, is_mod, &text));
    }
    Source { refs }
}

/// The graph among the children of `folder` (its files and sub-folders).
fn graph_within(s: &Source, folder: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let n = folder.len();
    for (module, refs) in &s.refs {
        if module.len() <= n || module[..n] != *folder {
            continue;
        }
        let from = &module[n];
        g.entry(from.clone()).or_default();
        for r in refs {
            if r.len() > n && r[..n] == *folder && r[n] != *from {
                g.entry(from.clone()).or_default().insert(r[n].clone());
            }
        }
    }
    g
}

#[test]
fn no_folder_imports_a_folder_that_imports_it_back() {
    let s = source();
    let top = graph_within(&s, &[]);
    assert!(top.contains_key("experiment") && top["report"].contains("workload"), "the reader finds imports: {top:?}");
    let c = cycles(&top);
    assert!(c.is_empty(), "import cycles between the top-level modules: {c:?}\n{top:#?}");
}

#[test]
fn no_file_imports_a_file_of_its_folder_that_imports_it_back() {
    let s = source();
    let folders: BTreeSet<Vec<String>> = s.refs.keys().map(|m| m[..m.len() - 1].to_vec()).collect();
    let mut found = Vec::new();
    for folder in folders.iter().filter(|f| !f.is_empty()) {
        for c in cycles(&graph_within(&s, folder)) {
            found.push(format!("{}: {}", folder.join("/"), c.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "import cycles inside folders:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_a_cycle_when_there_is_one() {
    let a = vec!["a".to_string()];
    let text_a = "use crate::b::X;\n// use crate::c::Y;\n";
    let refs = references(&a, false, text_a);
    assert!(refs.contains(&vec!["b".to_string(), "X".to_string()]));
    assert!(!refs.iter().any(|r| r[0] == "c"), "comments are not imports");
    let tests = "use super::x;\n#[cfg(test)]\nmod tests {\n    use crate::z::Q;\n}\nuse crate::y::P;\n";
    let refs = references(&["f".to_string(), "g".to_string()], false, tests);
    assert!(
        refs.contains(&vec!["f".to_string(), "x".to_string()])
            && refs.contains(&vec!["y".to_string(), "P".to_string()])
    );
    assert!(!refs.iter().any(|r| r[0] == "z"), "test modules are left out: {refs:?}");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), ["a".to_string()].into());
    g.insert("d".into(), ["a".to_string()].into());
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}
