//! `--set NAME` without a value: accepted when the build's server takes NAME without one (a switch
//! such as `skip-name-resolve` or `performance-schema`, an option whose value is optional such as
//! `log-bin`), refused before the server starts when the server's own `--help` shows that NAME needs
//! a value (`--innodb-buffer-pool-size=#`), instead of the server refusing to start.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::server::Build;

/// Options that need a value, by name (`-` for `_`), with the shape the help shows (`#`, `name`).
type NeedsValue = HashMap<String, String>;

/// The first bare override of `overrides` that `build`'s server needs a value for, as the message
/// (without the flag). A server whose help cannot be read is not checked.
pub fn check(build: &Build, overrides: &[String]) -> Result<(), String> {
    for o in overrides {
        let Ok((name, None)) = crate::server::config::parse_override(o) else { continue };
        let n = name.to_ascii_lowercase().replace('_', "-");
        let n = n.strip_prefix("loose-").unwrap_or(&n);
        if ["skip-", "enable-", "disable-"].iter().any(|p| n.starts_with(p)) {
            continue;
        }
        let Some(needs) = needs_value(build) else { return Ok(()) };
        if let Some(shape) = needs.get(n) {
            return Err(format!(
                "'{name}' has no value, and {} takes one (--{n}={shape}); write {name}=VALUE",
                build.name
            ));
        }
    }
    Ok(())
}

/// What `build`'s server needs a value for, read once per binary from `--no-defaults --verbose --help`.
fn needs_value(build: &Build) -> Option<NeedsValue> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Option<NeedsValue>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .entry(build.layout.server.clone())
        .or_insert_with(|| {
            let out = Command::new(&build.layout.server)
                .arg("--no-defaults")
                .arg(format!("--lc-messages-dir={}", build.layout.messages_dir.display()))
                .args(["--verbose", "--help"])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()?;
            let needs = parse_help(&String::from_utf8_lossy(&out.stdout));
            (!needs.is_empty()).then_some(needs)
        })
        .clone()
}

/// The options of a server's `--verbose --help` whose value is required: `--name=#` or `--name=name`,
/// not `--name[=name]` (optional) nor `--name` (a switch).
pub fn parse_help(text: &str) -> NeedsValue {
    text.lines()
        .filter_map(|l| l.strip_prefix("  --"))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter_map(|word| word.split_once('='))
        .filter(|(name, _)| !name.ends_with('['))
        .map(|(name, shape)| (name.replace('_', "-"), shape.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_tells_required_values_from_optional_ones_and_switches() {
        let help = "Usage: mariadbd [OPTIONS]\n  --general-log       Log connections and queries\n  --innodb-buffer-pool-size=# \n  --log-bin[=name]    Log update queries\n  --max-connections=# The number of simultaneous clients\n  --pid-file=name     Pid file used by safe_mysqld\n  --skip-name-resolve Don't resolve hostnames\n\nVariables (--variable-name=value)\ninnodb-buffer-pool-size 134217728\n";
        let needs = parse_help(help);
        let mut names: Vec<&str> = needs.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["innodb-buffer-pool-size", "max-connections", "pid-file"]);
        assert_eq!(needs["pid-file"], "name");
    }
}
