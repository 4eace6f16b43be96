//! Keeping passwords out of the results store: everything the store writes that could hold one (the
//! experiment definition, workload options, the run's command) goes through these functions first.

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// True when an option or key name looks like it holds a secret (`password`, `mysql-password`,
/// `pgsql_passwd`, `api_token`, `pwd` …). Names ending in `_env`, `_file` or `_path` (the *place* a
/// secret is kept, such as `password_env`) are not secrets.
pub fn is_secret_key(name: &str) -> bool {
    let n = name.trim().trim_start_matches('-').to_ascii_lowercase().replace('-', "_");
    if n.ends_with("_env") || n.ends_with("_file") || n.ends_with("_path") {
        return false;
    }
    ["password", "passwd", "secret", "token", "credential"].iter().any(|w| n.contains(w))
        || n == "pwd"
        || n == "pass"
        || n.ends_with("_pwd")
        || n.ends_with("_pass")
}

/// A copy of `value` with secrets redacted: values of secret-looking keys in objects, `--name=value`
/// strings with a secret-looking name, the element after a bare secret-looking `--name` in arrays, and
/// the password of `scheme://user:password@host` URLs.
pub fn scrub_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) && !v.is_null() { Value::from(REDACTED) } else { scrub_json(v) };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            let mut redact_next = false;
            for item in items {
                if redact_next && item.is_string() {
                    out.push(Value::from(REDACTED));
                    redact_next = false;
                    continue;
                }
                redact_next =
                    item.as_str().is_some_and(|s| s.starts_with("--") && !s.contains('=') && is_secret_key(s));
                out.push(scrub_json(item));
            }
            Value::Array(out)
        }
        Value::String(s) => Value::String(scrub_arg(s)),
        other => other.clone(),
    }
}

/// One command-line word with any secret redacted (`--mysql-password=x` → `--mysql-password=<redacted>`,
/// `mysql://u:pw@h` → `mysql://u:<redacted>@h`); other words are returned unchanged.
pub fn scrub_arg(arg: &str) -> String {
    if let Some(rest) = arg.strip_prefix("--")
        && let Some((name, _)) = rest.split_once('=')
        && is_secret_key(name)
    {
        return format!("--{name}={REDACTED}");
    }
    if let Some(scheme_end) = arg.find("://") {
        let after = &arg[scheme_end + 3..];
        let authority_end = after.find('/').unwrap_or(after.len());
        if let Some(at) = after[..authority_end].rfind('@')
            && let Some(colon) = after[..at].find(':')
        {
            let start = scheme_end + 3 + colon + 1;
            let end = scheme_end + 3 + at;
            return format!("{}{REDACTED}{}", &arg[..start], &arg[end..]);
        }
    }
    arg.to_string()
}

/// The TOML `text` with the values of secret-looking keys redacted. Lines of the form `key = value` keep
/// their layout; when a secret remains elsewhere (an inline table, say) the whole document is
/// re-serialised from the redacted tree instead, losing comments and layout but no secrets.
pub fn scrub_toml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&scrub_toml_line(line));
    }
    match out.parse::<toml::Table>() {
        Ok(table) if !toml_has_secret(&toml::Value::Table(table.clone())) => out,
        _ => match text.parse::<toml::Table>() {
            Ok(table) => {
                let scrubbed = scrub_toml_value(&toml::Value::Table(table));
                toml::to_string(&scrubbed).unwrap_or(out)
            }
            Err(_) => out,
        },
    }
}

/// `key = value` → `key = "<redacted>"` when the last segment of the (possibly dotted, possibly quoted)
/// key looks secret; any other line unchanged.
fn scrub_toml_line(line: &str) -> String {
    let Some(eq) = line.find('=') else { return line.to_string() };
    let key = line[..eq].trim();
    if key.is_empty() || key.starts_with('#') || key.starts_with('[') {
        return line.to_string();
    }
    let last = key.rsplit('.').next().unwrap_or(key).trim().trim_matches(|c| c == '"' || c == '\'');
    if !is_secret_key(last) {
        return line.to_string();
    }
    let newline = if line.ends_with("\r\n") {
        "\r\n"
    } else if line.ends_with('\n') {
        "\n"
    } else {
        ""
    };
    format!("{}= \"{REDACTED}\"{newline}", &line[..eq])
}

fn toml_has_secret(value: &toml::Value) -> bool {
    match value {
        toml::Value::Table(t) => t.iter().any(|(k, v)| {
            (is_secret_key(k) && v.as_str() != Some(REDACTED)) || (!is_secret_key(k) && toml_has_secret(v))
        }),
        toml::Value::Array(a) => a.iter().any(toml_has_secret),
        _ => false,
    }
}

fn scrub_toml_value(value: &toml::Value) -> toml::Value {
    match value {
        toml::Value::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) { toml::Value::from(REDACTED) } else { scrub_toml_value(v) };
                    (k.clone(), v)
                })
                .collect(),
        ),
        toml::Value::Array(a) => toml::Value::Array(a.iter().map(scrub_toml_value).collect()),
        other => other.clone(),
    }
}

/// A stable content hash, `fnv1a64:` and 16 hex digits (FNV-1a, 64 bits). Used to detect a changed
/// definition and to deduplicate variable snapshots; not a cryptographic hash.
pub fn content_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names() {
        for name in ["password", "mysql-password", "--mysql_password", "PGSQL_PASSWD", "api_token", "pwd", "db_pass"] {
            assert!(is_secret_key(name), "{name}");
        }
        for name in ["password_env", "password-file", "user", "passes", "threads", "key", "ssl_key"] {
            assert!(!is_secret_key(name), "{name}");
        }
    }

    #[test]
    fn json_secrets_are_redacted_everywhere() {
        let v = json!({
            "user": "bench",
            "mysql-password": "hunter2",
            "password_env": "VERSUS_PW",
            "nested": {"token": "abc", "list": [{"passwd": "x"}]},
            "args": ["sysbench", "--mysql-password=hunter2", "--password", "hunter2", "--threads=8",
                     "mysql://bench:hunter2@127.0.0.1:3306/db"],
            "empty_password": null
        });
        let s = scrub_json(&v);
        let text = s.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("abc") && !text.contains("\"x\""), "{text}");
        assert_eq!(s["user"], "bench");
        assert_eq!(s["password_env"], "VERSUS_PW");
        assert_eq!(s["args"][1], "--mysql-password=<redacted>");
        assert_eq!(s["args"][2], "--password");
        assert_eq!(s["args"][3], REDACTED);
        assert_eq!(s["args"][4], "--threads=8");
        assert_eq!(s["args"][5], "mysql://bench:<redacted>@127.0.0.1:3306/db");
        assert!(s["empty_password"].is_null());
    }

    #[test]
    fn plain_args_unchanged() {
        for a in ["--threads=8", "oltp_read_write", "http://example.com/a:b@c", "mysql://bench@host/db"] {
            assert_eq!(scrub_arg(a), a);
        }
    }

    #[test]
    fn toml_lines_keep_layout() {
        let text = "name = \"x\" # comment\n[[targets]]\nlabel = \"ext\"\npassword = \"hunter2\"\npassword_env = \"PW\"\nserver.\"mysql-password\" = 'p'\n";
        let s = scrub_toml(text);
        assert!(!s.contains("hunter2") && !s.contains("'p'"), "{s}");
        assert!(s.starts_with("name = \"x\" # comment\n[[targets]]\nlabel = \"ext\"\n"), "{s}");
        assert!(s.contains("password_env = \"PW\""));
        assert!(s.contains("password = \"<redacted>\"\n"));
    }

    #[test]
    fn toml_inline_tables_fall_back_to_reserialising() {
        let text = "name = \"x\"\ntarget = { user = \"u\", password = \"hunter2\" }\n";
        let s = scrub_toml(text);
        assert!(!s.contains("hunter2"), "{s}");
        let t: toml::Table = s.parse().unwrap();
        assert_eq!(t["target"]["password"].as_str(), Some(REDACTED));
        assert_eq!(t["target"]["user"].as_str(), Some("u"));
    }

    #[test]
    fn toml_without_secrets_is_unchanged() {
        let text = "name = \"x\"\n# note = 1\nthreads = [1, 8]\n[[workloads]]\ntest = \"oltp_read_only\"\n";
        assert_eq!(scrub_toml(text), text);
    }

    #[test]
    fn hash_is_stable_and_content_sensitive() {
        // FNV-1a 64 reference values.
        assert_eq!(content_hash(""), "fnv1a64:cbf29ce484222325");
        assert_eq!(content_hash("a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(content_hash("threads = 1"), content_hash("threads = 2"));
    }
}
