//! The Debian archive URIs the system's own apt sources use, read from deb822 `.sources` files or the
//! one-line `sources.list` format. versus reuses them for its private apt state, so it reaches the same
//! mirror the machine is already configured for.

use std::path::Path;

/// The keyring Debian installs for its archive, used when a source names none.
pub const DEFAULT_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The archives found in the system's apt sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archives {
    /// The main archive (`…/debian`), serving `bookworm`, `trixie`, `sid` …
    pub main: String,
    /// The security archive (`…/debian-security`), serving `bookworm-security` …, when configured.
    pub security: Option<String>,
    /// The keyring that signs them.
    pub keyring: String,
}

impl Archives {
    /// The URI serving `suite`.
    pub fn uri_for(&self, suite: &str) -> Option<&str> {
        if suite.ends_with("-security") { self.security.as_deref() } else { Some(&self.main) }
    }
}

/// One `deb` entry: URI, suites, and the keyring if it names a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Archive URI, without a trailing slash.
    pub uri: String,
    /// Suites (`bookworm`, `bookworm-security` …).
    pub suites: Vec<String>,
    /// `Signed-By`/`signed-by=` when it is a file path.
    pub signed_by: Option<String>,
}

/// Parses deb822 stanzas (`Types:`, `URIs:`, `Suites:`, `Signed-By:`), skipping comments, `deb-src` and
/// stanzas with `Enabled: no`.
pub fn parse_deb822(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n").filter(|s| !s.trim().is_empty()) {
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in stanza.lines() {
            if line.trim_start().starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                // Continuation line (an inline key block): belongs to the previous field.
                if let Some(last) = fields.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line.trim());
                }
            } else if let Some((k, v)) = line.split_once(':') {
                fields.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let types = get("types").unwrap_or("");
        if !types.split_whitespace().any(|t| t == "deb") || get("enabled").is_some_and(|e| e.eq_ignore_ascii_case("no"))
        {
            continue;
        }
        let suites: Vec<String> = get("suites").unwrap_or("").split_whitespace().map(String::from).collect();
        let signed_by = get("signed-by").filter(|s| s.starts_with('/') && !s.contains('\n')).map(String::from);
        for uri in get("uris").unwrap_or("").split_whitespace() {
            out.push(Entry {
                uri: uri.trim_end_matches('/').to_string(),
                suites: suites.clone(),
                signed_by: signed_by.clone(),
            });
        }
    }
    out
}

/// Parses the one-line format: `deb [signed-by=/k.gpg arch=amd64] URI SUITE COMPONENT…`.
pub fn parse_one_line(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(rest) = line.strip_prefix("deb ").or_else(|| line.strip_prefix("deb\t")) else { continue };
        let mut rest = rest.trim_start();
        let mut signed_by = None;
        if let Some(opts) = rest.strip_prefix('[') {
            let Some((opts, after)) = opts.split_once(']') else { continue };
            for opt in opts.split_whitespace() {
                if let Some(v) = opt.strip_prefix("signed-by=") {
                    signed_by = Some(v.to_string());
                }
            }
            rest = after.trim_start();
        }
        let mut words = rest.split_whitespace();
        let (Some(uri), Some(suite)) = (words.next(), words.next()) else { continue };
        out.push(Entry { uri: uri.trim_end_matches('/').to_string(), suites: vec![suite.to_string()], signed_by });
    }
    out
}

/// Picks the main and security archives out of `entries`: the first entry serving a `-security` suite is
/// the security archive, the first serving any other suite is the main one.
pub fn archives(entries: &[Entry]) -> Option<Archives> {
    let is_sec = |s: &String| s.ends_with("-security") || s.ends_with("/updates");
    let main = entries.iter().find(|e| e.suites.iter().any(|s| !is_sec(s)))?;
    let security = entries.iter().find(|e| e.suites.iter().any(is_sec));
    Some(Archives {
        main: main.uri.clone(),
        security: security.map(|e| e.uri.clone()),
        keyring: main.signed_by.clone().unwrap_or_else(|| DEFAULT_KEYRING.to_string()),
    })
}

/// Reads the archives from `/etc/apt/sources.list.d/*.sources`, `*.list` and `/etc/apt/sources.list`.
pub fn system_archives(etc_apt: &Path) -> Option<Archives> {
    let mut entries = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(etc_apt.join("sources.list.d"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        match f.extension().and_then(|e| e.to_str()) {
            Some("sources") => entries.extend(parse_deb822(&text)),
            Some("list") => entries.extend(parse_one_line(&text)),
            _ => {}
        }
    }
    if let Ok(text) = std::fs::read_to_string(etc_apt.join("sources.list")) {
        entries.extend(parse_one_line(&text));
    }
    // Only Debian archives are useful: the suites versus asks for exist nowhere else.
    entries.retain(|e| e.uri.contains("debian"));
    archives(&entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEB822: &str = "Types: deb\n# http://snapshot.example/archive/debian/20250520T000000Z\n\
        URIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\
        Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
        Types: deb deb-src\nURIs: http://mirror.example/debian-security/\nSuites: bookworm-security\n\
        Components: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n\n\
        Types: deb\nEnabled: no\nURIs: http://disabled.example/debian\nSuites: sid\n";

    #[test]
    fn reads_deb822_stanzas() {
        let e = parse_deb822(DEB822);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].uri, "http://mirror.example/debian");
        assert_eq!(e[0].suites, ["bookworm", "bookworm-updates"]);
        assert_eq!(e[0].signed_by.as_deref(), Some(DEFAULT_KEYRING));
        assert_eq!(e[1].uri, "http://mirror.example/debian-security");
        assert_eq!(e[1].signed_by, None, "an inline key is not a keyring path");
        let a = archives(&e).unwrap();
        assert_eq!(a.main, "http://mirror.example/debian");
        assert_eq!(a.security.as_deref(), Some("http://mirror.example/debian-security"));
        assert_eq!(a.uri_for("bullseye-security"), Some("http://mirror.example/debian-security"));
        assert_eq!(a.uri_for("trixie"), Some("http://mirror.example/debian"));
    }

    #[test]
    fn reads_one_line_sources() {
        let text = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://m.example/debian/ bookworm main\n\
                    deb-src http://m.example/debian bookworm main\n\
                    deb http://s.example/debian-security bookworm-security main # trailing\n";
        let e = parse_one_line(text);
        assert_eq!(e.len(), 2);
        assert_eq!(
            e[0],
            Entry {
                uri: "http://m.example/debian".into(),
                suites: vec!["bookworm".into()],
                signed_by: Some("/k.gpg".into())
            }
        );
        let a = archives(&e).unwrap();
        assert_eq!(a.keyring, "/k.gpg");
        assert_eq!(a.security.as_deref(), Some("http://s.example/debian-security"));
    }

    #[test]
    fn no_archive_without_a_main_suite() {
        assert_eq!(archives(&parse_one_line("deb http://s.example/debian-security bookworm-security main")), None);
        assert_eq!(archives(&[]), None);
    }
}
