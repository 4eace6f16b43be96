//! The values a fleet job writes into what schedulers read, checked against the grammar of where each
//! goes before anything is written: a value stays one value, whatever characters it is given. Slurm
//! reads `#SBATCH` lines with its own parser (no shell quoting), so what goes there must need none;
//! Kubernetes refuses a manifest whose labels, names or image break its rules, so they are checked
//! here, where the flag can be named. Control characters are refused everywhere.

use crate::error::{Error, Result};

/// The first control character of `v` (newline, tab, NUL, DEL, C1 …), if any.
pub fn control_char(v: &str) -> Option<char> {
    v.chars().find(|c| c.is_control())
}

/// `c` as written in an error message: printable, never a line break.
pub fn shown(c: char) -> String {
    c.escape_default().to_string()
}

fn bad(flag: &str, v: &str, rule: &str) -> Error {
    // Error::option escapes the message's control characters.
    Error::option(flag, format!("'{v}' is not valid here: {rule}"))
}

/// A Slurm partition or node feature name: letters, digits, `_`, `-` and `.`, 1 to 64 of them.
pub fn slurm_name(flag: &str, v: &str) -> Result<()> {
    let ok = !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if ok { Ok(()) } else { Err(bad(flag, v, "a Slurm name is 1-64 ASCII letters, digits, '_', '-' or '.'")) }
}

/// A Slurm constraint: feature names joined by `&`, `|` and `,`, with `*N` counts, `[ ]` and `( )`
/// groups, `:` — no spaces, quotes, `$`, backslashes or control characters.
pub fn slurm_constraint(flag: &str, v: &str) -> Result<()> {
    let ok = !v.is_empty()
        && v.len() <= 256
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.&|,*[]:()".contains(&b))
        && v.bytes().any(|b| b.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(bad(
            flag,
            v,
            "a Slurm constraint is feature names (ASCII letters, digits, '_', '-', '.') joined by & | , with *N, [ ], ( ) and :",
        ))
    }
}

/// A Kubernetes label value: at most 63 characters, empty or alphanumeric at both ends with `-`, `_`
/// and `.` between.
pub fn label_value(flag: &str, v: &str) -> Result<()> {
    let b = v.as_bytes();
    let ok = v.len() <= 63
        && (b.is_empty()
            || (b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))));
    if ok {
        Ok(())
    } else {
        Err(bad(
            flag,
            v,
            "a Kubernetes label value is at most 63 ASCII letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        ))
    }
}

/// A Kubernetes object name (DNS-1123 subdomain): at most 253 lower-case letters, digits, `-` and
/// `.`, alphanumeric at both ends.
pub fn object_name(flag: &str, v: &str) -> Result<()> {
    let b = v.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 253
        && v.split('.').all(|part| {
            let p = part.as_bytes();
            !p.is_empty()
                && p[0].is_ascii_alphanumeric()
                && p[p.len() - 1].is_ascii_alphanumeric()
                && p.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        });
    if ok {
        Ok(())
    } else {
        Err(bad(
            flag,
            v,
            "a Kubernetes name is lower-case letters, digits, '-' and '.', starting and ending with a letter or digit",
        ))
    }
}

/// A ConfigMap key (a config file's name): at most 253 letters, digits, `-`, `_` and `.`.
pub fn config_map_key(v: &str) -> bool {
    !v.is_empty() && v.len() <= 253 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// A container image reference, `[HOST[:PORT]/]PATH[:TAG][@ALGORITHM:HEX]` as the distribution
/// reference grammar has it: lower-case path components separated by `.`, `_`, `__` or dashes; a tag
/// of at most 128 word characters, `.` and `-`, not starting with either; a digest.
pub fn image(flag: &str, v: &str) -> Result<()> {
    if image_ok(v) {
        Ok(())
    } else {
        Err(bad(flag, v, "an image reference is [HOST[:PORT]/]NAME[:TAG][@sha256:HEX], NAME in lower case"))
    }
}

fn image_ok(v: &str) -> bool {
    if v.is_empty() || v.len() > 4096 {
        return false;
    }
    let (rest, digest) = match v.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (v, None),
    };
    if let Some(d) = digest {
        let Some((alg, hex)) = d.split_once(':') else { return false };
        let alg_ok = !alg.is_empty()
            && alg.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+.-_".contains(&b))
            && alg.as_bytes()[0].is_ascii_alphanumeric();
        if !alg_ok || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return false;
        }
    }
    // The tag follows the last ':' after the last '/' (a ':' before it is the registry's port).
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let tb = t.as_bytes();
        let ok = !tb.is_empty()
            && tb.len() <= 128
            && (tb[0].is_ascii_alphanumeric() || tb[0] == b'_')
            && tb.iter().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b));
        if !ok {
            return false;
        }
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
        let host = parts.remove(0);
        let (h, port) = match host.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host, None),
        };
        let h_ok = !h.is_empty()
            && h.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            });
        if !h_ok || port.is_some_and(|p| p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit())) {
            return false;
        }
    }
    !parts.is_empty() && parts.iter().all(|p| path_component(p))
}

/// `[a-z0-9]+` joined by `.`, `_`, `__` or runs of `-`.
fn path_component(p: &str) -> bool {
    let b = p.as_bytes();
    if b.is_empty() || !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return false;
    }
    if !b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c)) {
        return false;
    }
    // Separators: '.', '_', '__' or dashes; never two different ones in a row.
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let sep = &p[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-')) {
            return false;
        }
    }
    true
}

/// A path written into a job script or manifest: no control characters (the flag or file named by
/// `what`).
pub fn path(what: &str, v: &str) -> Result<()> {
    match control_char(v) {
        Some(c) => Err(Error::Other(format!(
            "{what} '{}' has a control character ({}); rename it",
            crate::error::escape_controls(v),
            shown(c)
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_names_and_constraints() {
        for ok in ["bench", "gpu-a100", "epyc_9654", "n.1"] {
            assert!(slurm_name("--partition", ok).is_ok(), "{ok}");
            assert!(slurm_constraint("--constraint", ok).is_ok(), "{ok}");
        }
        for ok in ["epyc&nvme", "a|b", "[rack1*2&rack2*4]", "(a|b)&c", "intel:2"] {
            assert!(slurm_constraint("--constraint", ok).is_ok(), "{ok}");
        }
        for bad in ["", "bench\ntouch X", "a b", "$(id)", "a'b", "a\"b", "a\\b", "`x`", "a;b", "a\tb", "&|"] {
            assert!(slurm_name("--partition", bad).is_err(), "{bad:?}");
            assert!(slurm_constraint("--constraint", bad).is_err(), "{bad:?}");
        }
        let e = slurm_name("--partition", "bench\ntouch X").unwrap_err().to_string();
        assert!(e.starts_with("--partition: ") && !e.contains('\n') && e.contains("bench\\ntouch X"), "{e}");
    }

    #[test]
    fn kubernetes_labels_names_and_images() {
        for ok in ["", "hc-0123456789ab", "a", "A.b_c-9"] {
            assert!(label_value("--constraint", ok).is_ok(), "{ok}");
        }
        for bad in ["-a", "a-", "a b", "a/b", &"x".repeat(64), "é"] {
            assert!(label_value("--constraint", bad).is_err(), "{bad:?}");
        }
        for ok in ["versus-db", "a.b-c", "x"] {
            assert!(object_name("--password-secret", ok).is_ok(), "{ok}");
        }
        for bad in ["", "Versus", "a_b", "-a", "a..b", "a\n"] {
            assert!(object_name("--password-secret", bad).is_err(), "{bad:?}");
        }
        let digest = format!("sha256:{}", "a".repeat(64));
        for ok in [
            "versus:0.1.0".to_string(),
            "versus".into(),
            "registry.example/versus:0.1.0".into(),
            "registry.example:5000/team/versus".into(),
            "localhost/a__b/c-d.e".into(),
            format!("versus@{digest}"),
            format!("r.example/versus:1@{digest}"),
        ] {
            assert!(image("--image", &ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "Versus",
            "versus:",
            "versus:-x",
            "a b",
            "versus\nkind: Pod",
            "versus@sha256:zz",
            "a//b",
            "a._b",
            "host:/x",
            ":tag",
        ] {
            assert!(image("--image", bad).is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
#[path = "values_props.rs"]
mod props;
