//! The layering of the source tree: no folder imports a folder that imports it back, and inside a
//! folder no file (or sub-folder) imports one that imports it back. Read as the compiler reads each
//! file under src/ (parsed with syn): `use` trees with their brace groups, paths from `crate`,
//! `super` and `self` in code, types and macro arguments; `#[cfg(test)]` items left out (tests may
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

/// Every module path a file refers to, resolved to absolute paths from the crate root, as the compiler
/// reads the file (syn): every `use` tree, brace groups included (`use super::{html, markdown}`), every
/// path in code and types that starts at `crate`, `super` or `self`, and those inside macro calls;
/// items under `#[cfg(test)]` are left out (tests may reach anywhere).
fn references(module: &[String], is_mod_file: bool, text: &str) -> BTreeSet<Vec<String>> {
    // `self::` names the file's module and `super::` its parent, in a mod.rs as in any other file
    // (`module_of` names a mod.rs by its folder).
    let _ = is_mod_file;
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", module.join("/")));
    let mut r = Refs { here: module.to_vec(), out: BTreeSet::new() };
    syn::visit::Visit::visit_file(&mut r, &file);
    r.out
}

/// Collects the references of one file.
struct Refs {
    /// The file's own module path.
    here: Vec<String>,
    out: BTreeSet<Vec<String>>,
}

impl Refs {
    /// Resolves `segments` (starting at `crate`, `super` or `self`) and records it.
    fn add(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else { return };
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "super" | "self" => self.here.clone(),
            _ => return,
        };
        let mut rest = &segments[1..];
        if first == "super" {
            base.pop();
        }
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().filter(|s| *s != "self").cloned());
        self.out.insert(base);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.add(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(n) => {
                prefix.push(n.ident.to_string());
                self.add(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.add(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string().trim() == "test"))
}

impl<'ast> syn::visit::Visit<'ast> for Refs {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(&segments);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro arguments are tokens to syn: find `crate :: a :: b` and `super :: x` runs in them.
        let text = m.tokens.to_string().replace(" :: ", "::");
        for start in ["crate::", "super::", "self::"] {
            let mut from = 0;
            while let Some(i) = text[from..].find(start) {
                let at = from + i;
                from = at + start.len();
                let before = text[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let run: String =
                    text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
                let segments: Vec<String> = run.split("::").filter(|p| !p.is_empty()).map(str::to_string).collect();
                self.add(&segments);
            }
        }
        syn::visit::visit_macro(self, m);
    }
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
    let v = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let text_a = "use crate::b::X;\n// use crate::c::Y;\nfn f() { let _ = \"crate::d::Z\"; }\n";
    let refs = references(&v(&["a"]), false, text_a);
    assert!(refs.contains(&v(&["b", "X"])));
    assert!(!refs.iter().any(|r| r[0] == "c" || r[0] == "d"), "comments and strings are not imports: {refs:?}");
    let tests = "use super::x;\n#[cfg(test)]\nmod tests {\n    use crate::z::Q;\n}\nuse crate::y::P;\n";
    let refs = references(&v(&["f", "g"]), false, tests);
    assert!(refs.contains(&v(&["f", "x"])) && refs.contains(&v(&["y", "P"])));
    assert!(!refs.iter().any(|r| r[0] == "z"), "test modules are left out: {refs:?}");
    // What a line reader missed: brace groups, bare calls through an imported module, macro arguments.
    let text = "use super::{html, markdown::write};\nfn f() { html::g(); super::svg::h(); format!(\"{}\", crate::fmt::p(1)); }\n";
    let refs = references(&v(&["report", "explain", "render"]), false, text);
    for want in [
        v(&["report", "explain", "html"]),
        v(&["report", "explain", "markdown", "write"]),
        v(&["report", "explain", "svg", "h"]),
        v(&["fmt", "p"]),
    ] {
        assert!(refs.contains(&want), "{want:?} in {refs:?}");
    }
    // In a mod.rs, `super::` is the folder's parent.
    let refs = references(&v(&["report", "explain"]), true, "use super::tables::T;\n");
    assert!(refs.contains(&v(&["report", "tables", "T"])), "{refs:?}");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), ["a".to_string()].into());
    g.insert("d".into(), ["a".to_string()].into());
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}
