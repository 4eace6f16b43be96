//! A user's Lua script: its text, read once, compiled once to catch syntax errors before any server is
//! touched, and the places `require` looks for its sibling modules.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where sysbench's packages install the bundled scripts and `oltp_common.lua`.
const SYSTEM_DIRS: [&str; 2] = ["/usr/local/share/sysbench", "/usr/share/sysbench"];

/// A script to run.
#[derive(Debug, Clone)]
pub struct Script {
    /// Its path as given.
    pub path: PathBuf,
    /// Its text.
    pub source: String,
}

impl Script {
    /// Reads the script at `path` and checks that it compiles.
    pub fn load(path: &Path) -> Result<Script> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            Error::Other(format!(
                "cannot read the Lua script {}: {e}; give the path of a sysbench Lua script",
                path.display()
            ))
        })?;
        let script = Script { path: path.to_path_buf(), source };
        script.check_syntax()?;
        Ok(script)
    }

    /// Compiles the script without running it: a syntax error names the file and line.
    fn check_syntax(&self) -> Result<()> {
        let lua = mlua::Lua::new();
        lua.load(self.source.as_str())
            .set_name(format!("@{}", self.path.display()))
            .into_function()
            .map(|_| ())
            .map_err(|e| Error::Other(format!("{}: syntax error: {}", self.path.display(), first_line(&e.to_string()))))
    }

    /// `package.path` for the script: its own folder first, then the working directory and the system
    /// sysbench folders (where `oltp_common.lua` lives), then Lua's defaults.
    pub fn package_path(&self, default: String) -> String {
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut dirs = vec![dir.display().to_string(), ".".to_string()];
        dirs.extend(SYSTEM_DIRS.iter().map(|d| d.to_string()));
        let mut parts: Vec<String> =
            dirs.iter().flat_map(|d| [format!("{d}/?.lua"), format!("{d}/?/init.lua")]).collect();
        parts.push(default);
        parts.join(";")
    }

    /// The modules the script requires from its own folder, with the script itself: what travels with it
    /// and what a changed definition is made of.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out = vec![self.path.clone()];
        let dir = self.path.parent().unwrap_or(Path::new("."));
        for name in required_modules(&self.source) {
            let p = dir.join(format!("{}.lua", name.replace('.', "/")));
            if p.is_file() && !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

/// Names passed to `require("…")` or `require "…"` in `source`.
fn required_modules(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(i) = rest.find("require") {
        rest = &rest[i + "require".len()..];
        let r = rest.trim_start().trim_start_matches('(').trim_start();
        let Some(q) = r.chars().next().filter(|c| *c == '"' || *c == '\'') else { continue };
        if let Some(end) = r[1..].find(q) {
            out.push(r[1..1 + end].to_string());
        }
    }
    out
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_required_modules() {
        let s = "require(\"oltp_common\")\nlocal x = require 'tpcc_common'\nrequire(name)\n";
        assert_eq!(required_modules(s), vec!["oltp_common", "tpcc_common"]);
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.lua");
        std::fs::write(&p, "function event()\n  x = = 1\nend\n").unwrap();
        let e = Script::load(&p).unwrap_err().to_string();
        assert!(e.contains("bad.lua:2:") && e.contains("syntax error"), "{e}");
    }
}
