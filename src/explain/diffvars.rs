//! `versus diff-vars`: the `SHOW GLOBAL VARIABLES` of two targets side by side. Every variable whose
//! value differs, or that exists on one side only, is classified:
//!
//! - **changed default**: neither target's config sets it, so the build's default changed;
//! - **set on A / set on B / set on both**: a config (base file or override) of that side sets it;
//! - **new on B / removed on B**: the variable exists only on B / only on A;
//! - **noise** ([`super::noise`]): paths, ports, ids, versions, host-sized and derived values; hidden
//!   unless asked for.
//!
//! Values that differ only in spelling are equal: case (`ON`/`on`), number format (`10` and
//! `10.000000`), and the order of comma-separated lists (`sql_mode`). For lists the elements that
//! differ are given (`+a=on −b=off`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::noise::{NoiseKind, noise_of};
use crate::server::effective::{list_elements, same_value};
use crate::server::flavor::defaults;

/// The variables of one target with what its config sets.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Snapshot {
    /// How the target is called in output.
    pub label: String,
    /// The build it ran, when known.
    pub build: Option<String>,
    /// `SELECT VERSION()`, when known.
    pub server_version: Option<String>,
    /// `SHOW GLOBAL VARIABLES`, by name.
    pub variables: BTreeMap<String, String>,
    /// The variables (lower case) that the target's config file or overrides set.
    pub explicit: BTreeSet<String>,
    /// The session character sets and collation as a workload's connection sees them (read from a
    /// live server only; empty for stored runs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub session: BTreeMap<String, String>,
}

/// A session variable as both targets' workload connections see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// Variable name.
    pub name: String,
    /// A's connections.
    pub a: Option<String>,
    /// B's connections.
    pub b: Option<String>,
}

/// How a variable differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Both sides have it with different values.
    Changed,
    /// Only B has it.
    New,
    /// Only A has it.
    Removed,
}

/// Who decided the values of a differing variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Neither config sets it: the builds' defaults differ.
    Default,
    /// A's config sets it.
    SetOnA,
    /// B's config sets it.
    SetOnB,
    /// Both configs set it.
    SetOnBoth,
}

/// One differing variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarRow {
    /// Variable name.
    pub name: String,
    /// A's value (`None`: A has no such variable).
    pub a: Option<String>,
    /// B's value (`None`: B has no such variable).
    pub b: Option<String>,
    /// Changed, new or removed.
    pub change: Change,
    /// Default or set by a config.
    pub origin: Origin,
    /// Why the difference is noise, if it is.
    pub noise: Option<NoiseKind>,
    /// For comma-separated lists: the elements only B has (`+x`) and only A has (`−y`).
    pub detail: Option<String>,
    /// For a changed default: the documented change between the two versions
    /// (`MySQL 8.4.0 changed it: 200 → 10000`), from `data/defaults.toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documented: Option<String>,
}

impl VarRow {
    /// `changed default`, `set on A`, `new on B` … (`noise: path` for noise).
    pub fn what(&self) -> String {
        if let Some(k) = self.noise {
            return format!("noise: {}", k.label());
        }
        let origin = match self.origin {
            Origin::Default => None,
            Origin::SetOnA => Some("set on A"),
            Origin::SetOnB => Some("set on B"),
            Origin::SetOnBoth => Some("set on both"),
        };
        match (self.change, origin) {
            (Change::Changed, None) => "changed default".into(),
            (Change::Changed, Some(o)) => o.into(),
            (Change::New, None) => "new on B".into(),
            (Change::New, Some(o)) => format!("new on B, {o}"),
            (Change::Removed, None) => "removed on B".into(),
            (Change::Removed, Some(o)) => format!("removed on B, {o}"),
        }
    }
}

/// The difference between two targets' variables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VarDiff {
    /// Target A (the reference).
    pub a: Snapshot,
    /// Target B.
    pub b: Snapshot,
    /// Every differing variable, noise included, in the order of [`VarDiff::sort_key`].
    pub rows: Vec<VarRow>,
    /// Variables both have with the same value.
    pub equal: usize,
    /// The session character sets and collation of both targets' workload connections, when read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session: Vec<SessionRow>,
}

impl VarDiff {
    /// True when the workload connections of A and B differ in a session value.
    pub fn session_differs(&self) -> bool {
        self.session.iter().any(|r| match (&r.a, &r.b) {
            (Some(x), Some(y)) => !same_value(x, y),
            _ => false,
        })
    }

    /// The rows to show: all of them with `all`, otherwise those that are not noise.
    pub fn visible(&self, all: bool) -> impl Iterator<Item = &VarRow> {
        self.rows.iter().filter(move |r| all || r.noise.is_none())
    }

    /// How many differences are noise.
    pub fn noise_count(&self) -> usize {
        self.rows.iter().filter(|r| r.noise.is_some()).count()
    }

    /// Rows that are not noise and match `change` and `origin`.
    pub fn count(&self, change: Change, default: bool) -> usize {
        self.rows
            .iter()
            .filter(|r| r.noise.is_none() && r.change == change && (r.origin == Origin::Default) == default)
            .count()
    }

    /// Where a row goes: changed defaults first, then settings, new, removed, noise; by name within.
    pub fn sort_key(r: &VarRow) -> (u8, String) {
        let group = match (r.noise.is_some(), r.change, r.origin) {
            (true, _, _) => 5,
            (false, Change::Changed, Origin::Default) => 0,
            (false, Change::Changed, _) => 1,
            (false, Change::New, _) => 2,
            (false, Change::Removed, _) => 3,
        };
        (group, r.name.clone())
    }

    /// One sentence: what was compared and how many differences of each kind.
    pub fn summary(&self) -> String {
        let side = |s: &Snapshot| match &s.server_version {
            Some(v) => format!("{} ({v})", s.label),
            None => s.label.clone(),
        };
        let settings = self.count(Change::Changed, false);
        format!(
            "A = {}, B = {}: {} variables on both sides, {} equal; {} changed default(s), {} set by a config, {} new on B, \
             {} removed on B; {} noise difference(s) (paths, ports, ids, versions, host-sized or derived)",
            side(&self.a),
            side(&self.b),
            self.equal + self.rows.iter().filter(|r| r.change == Change::Changed).count(),
            self.equal,
            self.count(Change::Changed, true),
            settings,
            self.count(Change::New, true) + self.count(Change::New, false),
            self.count(Change::Removed, true) + self.count(Change::Removed, false),
            self.noise_count()
        )
    }
}

/// The differences of two targets without their full variable lists: what reports and JSON carry.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VarChanges {
    /// Label of target A (the reference).
    pub a: String,
    /// Label of target B.
    pub b: String,
    /// A's build, when known.
    pub a_build: Option<String>,
    /// B's build, when known.
    pub b_build: Option<String>,
    /// A's `SELECT VERSION()`, when known.
    pub a_version: Option<String>,
    /// B's `SELECT VERSION()`, when known.
    pub b_version: Option<String>,
    /// The differing variables (noise only when asked for).
    pub rows: Vec<VarRow>,
    /// Variables both have with the same value.
    pub equal: usize,
    /// Noise differences left out of `rows`.
    pub noise_hidden: usize,
    /// [`VarDiff::summary`].
    pub summary: String,
    /// The session character sets and collation of both targets' workload connections, when read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session: Vec<SessionRow>,
}

impl VarDiff {
    /// The compact form, noise rows kept only with `all`.
    pub fn changes(&self, all: bool) -> VarChanges {
        VarChanges {
            a: self.a.label.clone(),
            b: self.b.label.clone(),
            a_build: self.a.build.clone(),
            b_build: self.b.build.clone(),
            a_version: self.a.server_version.clone(),
            b_version: self.b.server_version.clone(),
            rows: self.visible(all).cloned().collect(),
            equal: self.equal,
            noise_hidden: if all { 0 } else { self.noise_count() },
            summary: self.summary(),
            session: self.session.clone(),
        }
    }
}

/// Compares the variables of `a` and `b`.
pub fn diff(a: &Snapshot, b: &Snapshot) -> VarDiff {
    let server = |s: &Snapshot| {
        s.server_version
            .as_deref()
            .or_else(|| s.variables.get("version").map(String::as_str))
            .and_then(defaults::server_of)
    };
    let servers = server(a).zip(server(b));
    let names: BTreeSet<&String> = a.variables.keys().chain(b.variables.keys()).collect();
    let mut rows = Vec::new();
    let mut equal = 0;
    for name in names {
        let va = a.variables.get(name);
        let vb = b.variables.get(name);
        let change = match (va, vb) {
            (Some(x), Some(y)) if same_value(x, y) => {
                equal += 1;
                continue;
            }
            (Some(_), Some(_)) => Change::Changed,
            (None, Some(_)) => Change::New,
            (Some(_), None) => Change::Removed,
            (None, None) => continue,
        };
        let lower = name.to_ascii_lowercase();
        let origin = match (a.explicit.contains(&lower), b.explicit.contains(&lower)) {
            (false, false) => Origin::Default,
            (true, false) => Origin::SetOnA,
            (false, true) => Origin::SetOnB,
            (true, true) => Origin::SetOnBoth,
        };
        let values: Vec<&str> = [va, vb].into_iter().flatten().map(String::as_str).collect();
        // A difference the user asked for is never noise.
        let noise = if origin == Origin::Default { noise_of(name, &values) } else { None };
        let detail = match (va, vb) {
            (Some(x), Some(y)) => list_detail(x, y),
            _ => None,
        };
        let documented = match (origin, change, servers) {
            (Origin::Default, Change::Changed, Some((sa, sb))) => defaults::describe(sa, sb, name),
            _ => None,
        };
        rows.push(VarRow {
            name: name.clone(),
            a: va.cloned(),
            b: vb.cloned(),
            change,
            origin,
            noise,
            detail,
            documented,
        });
    }
    rows.sort_by_key(VarDiff::sort_key);
    let names: BTreeSet<&String> = a.session.keys().chain(b.session.keys()).collect();
    let session = names
        .into_iter()
        .map(|n| SessionRow { name: n.clone(), a: a.session.get(n).cloned(), b: b.session.get(n).cloned() })
        .collect();
    VarDiff { a: a.clone(), b: b.clone(), rows, equal, session }
}

/// What differs between two comma-separated lists: for `key=value` lists (optimizer_switch) the keys
/// whose value changed (`mrr off→on`), and elements only B has (`+x`) or only A has (`−y`); `None` unless
/// both values are lists.
fn list_detail(a: &str, b: &str) -> Option<String> {
    if !(a.contains(',') && b.contains(',')) {
        return None;
    }
    let (ea, eb) = (list_elements(a), list_elements(b));
    let key = |e: &str| e.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()));
    let ka: BTreeMap<String, String> = ea.iter().filter_map(|e| key(e)).collect();
    let kb: BTreeMap<String, String> = eb.iter().filter_map(|e| key(e)).collect();
    let mut parts = Vec::new();
    for (k, vb) in &kb {
        if let Some(va) = ka.get(k).filter(|va| *va != vb) {
            parts.push(format!("{k} {va}→{vb}"));
        }
    }
    let changed = |e: &String| key(e).is_some_and(|(k, _)| ka.contains_key(&k) && kb.contains_key(&k));
    parts.extend(eb.difference(&ea).filter(|e| !changed(e)).map(|e| format!("+{e}")));
    parts.extend(ea.difference(&eb).filter(|e| !changed(e)).map(|e| format!("−{e}")));
    (!parts.is_empty()).then(|| parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(label: &str, vars: &[(&str, &str)], explicit: &[&str]) -> Snapshot {
        Snapshot {
            label: label.into(),
            variables: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            explicit: explicit.iter().map(|s| s.to_string()).collect(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn classifies_defaults_settings_new_removed_and_noise() {
        let a = snap(
            "A",
            &[
                ("sync_binlog", "0"),
                ("innodb_flush_log_at_trx_commit", "2"),
                ("binlog_format", "MIXED"),
                ("datadir", "/sb/a/data/"),
                ("port", "3401"),
                ("innodb_defragment", "OFF"),
                ("log_bin", "ON"),
                ("same", "x"),
            ],
            &["innodb_flush_log_at_trx_commit", "log_bin"],
        );
        let b = snap(
            "B",
            &[
                ("sync_binlog", "1"),
                ("innodb_flush_log_at_trx_commit", "1"),
                ("binlog_format", "ROW"),
                ("datadir", "/sb/b/data/"),
                ("port", "3402"),
                ("binlog_gtid_index", "ON"),
                ("log_bin", "ON"),
                ("same", "X"),
            ],
            &["innodb_flush_log_at_trx_commit", "port"],
        );
        let d = diff(&a, &b);
        let what: Vec<(String, String)> = d.rows.iter().map(|r| (r.name.clone(), r.what())).collect();
        let want = [
            ("binlog_format", "changed default"),
            ("sync_binlog", "changed default"),
            ("innodb_flush_log_at_trx_commit", "set on both"),
            ("port", "set on B"),
            ("binlog_gtid_index", "new on B"),
            ("innodb_defragment", "removed on B"),
            ("datadir", "noise: path"),
        ];
        let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(what, want);
        assert_eq!(d.equal, 2, "log_bin and same (case only)");
        assert_eq!(d.visible(false).count(), 6);
        assert_eq!(d.visible(true).count(), 7);
        assert_eq!(d.count(Change::Changed, true), 2);
        let s = d.summary();
        assert!(s.contains("2 changed default(s), 2 set by a config, 1 new on B, 1 removed on B; 1 noise"), "{s}");
    }

    #[test]
    fn lists_name_the_elements_that_differ() {
        let a = snap("A", &[("optimizer_switch", "index_merge=on,mrr=off,hash_join=off")], &[]);
        let b = snap("B", &[("optimizer_switch", "index_merge=on,mrr=on,hash_join=off,cset_narrowing=on")], &[]);
        let d = diff(&a, &b);
        assert_eq!(d.rows[0].detail.as_deref(), Some("mrr off→on +cset_narrowing=on"));
    }
}
