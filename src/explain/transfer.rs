//! How A's values are given to B. The differing variables are sorted into candidates for the search
//! and variables that are not bisected, by what each one is ([`crate::server::variables`]): values that
//! shape the data are marked so that the probes setting them run on data prepared under them;
//! variables only valid together (a character set and its collation) move as one; flag lists
//! (`optimizer_switch`) are taken flag by flag, B getting A's value of every flag B has; values whose
//! type changed between versions are mapped where the vendor documents how, or not given; session
//! values are the client's to set, and derived values follow the variable they come from. Every
//! decision is kept as a row of the mapping the report shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bisect::{Suspect, Transfer};
use super::diffvars::{Change, VarDiff, VarRow};
use super::skip::{SkipReason, Skipped};
use super::targets::TargetSpec;
use crate::server::effective::option_variables;
use crate::server::variables::{self, Line, ListForm, Mapping, Role};
use crate::workload::ConnectionCharset;

/// One decision on how a differing variable is given to B, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mapped {
    /// The variable (or variables moved together).
    pub variable: String,
    /// A's value.
    pub a: Option<String>,
    /// B's value.
    pub b: Option<String>,
    /// What is given to B and why (`flag by flag: …`, `moved together: …`, `not given: …`).
    pub how: String,
    /// Where the rule comes from (the vendor's documentation), when it is not obvious.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The differing variables, sorted.
#[derive(Debug, Clone, Default)]
pub struct Sorted {
    /// What the search may set on B.
    pub candidates: Vec<Suspect>,
    /// What it may not, with why.
    pub skipped: Vec<Skipped>,
    /// How the variables that are not simply `name=value` are given to B.
    pub mapping: Vec<Mapped>,
}

/// The override that gives a variable a value at startup (`log_bin` is an option without a value).
pub fn override_for(name: &str, value: &str) -> String {
    match (name, value.to_ascii_uppercase().as_str()) {
        ("log_bin", "ON" | "1") => "log-bin".into(),
        ("log_bin", "OFF" | "0") => "skip-log-bin".into(),
        _ => format!("{name}={value}"),
    }
}

/// The startup options that give B A's value of `c` (none for a client-side setting).
pub fn options_of(c: &Suspect) -> Vec<String> {
    match (&c.transfer.charset, c.transfer.options.is_empty()) {
        (Some(_), true) => vec![],
        (None, true) => vec![override_for(&c.name, &c.a)],
        _ => c.transfer.options.clone(),
    }
}

/// The connection character set of B with A's values of `set`: a client-side candidate's, else B's own.
pub fn charset_with(b: &TargetSpec, candidates: &[Suspect], set: &[usize]) -> Option<ConnectionCharset> {
    set.iter().rev().find_map(|&i| candidates[i].transfer.charset.clone()).or_else(|| b.charset.clone())
}

/// The flag-list variable an option assigns (`optimizer_switch=a=on` → `optimizer_switch`), if it is one.
fn flags_variable(option: &str) -> Option<String> {
    let var = variables::option_variable(option);
    (variables::list_form(&var, None) == Some(ListForm::Flags) && option.contains('=')).then_some(var)
}

/// `options` with every assignment of one flag list merged into one option where the first stood,
/// later flags winning: `optimizer_switch=a=off` and `optimizer_switch=b=on` become
/// `optimizer_switch=a=off,b=on`.
pub fn combine(options: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut merged: BTreeMap<String, (usize, Vec<(String, String)>)> = BTreeMap::new();
    for o in options {
        let Some(var) = flags_variable(&o) else {
            out.push(o);
            continue;
        };
        let value = o.split_once('=').map(|(_, v)| v).unwrap_or("");
        let entry = merged.entry(var.clone()).or_insert_with(|| {
            out.push(String::new());
            (out.len() - 1, Vec::new())
        });
        for (k, v) in variables::flags(value) {
            match entry.1.iter_mut().find(|(x, _)| *x == k) {
                Some(have) => have.1 = v,
                None => entry.1.push((k, v)),
            }
        }
    }
    for (var, (at, flags)) in merged {
        let list: Vec<String> = flags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out[at] = format!("{var}={}", list.join(","));
    }
    out
}

/// The assignments an option makes, one per flag for a flag list (`optimizer_switch=a=off,b=on` →
/// `optimizer_switch=a=off`, `optimizer_switch=b=on`), the option itself otherwise.
pub fn atoms(option: &str) -> Vec<String> {
    match flags_variable(option) {
        Some(var) => {
            let value = option.split_once('=').map(|(_, v)| v).unwrap_or("");
            variables::flags(value).into_iter().map(|(k, v)| format!("{var}={k}={v}")).collect()
        }
        None => vec![option.to_string()],
    }
}

/// `base` with `extra` on top: an override of `base` that sets a variable of `extra` is dropped, so
/// that `skip-log-bin` does not fight `log-bin`; flag lists are merged flag by flag instead.
pub fn merge_overrides(base: &[String], extra: &[String]) -> Vec<String> {
    let vars_of = |o: &str| {
        let name = o.split('=').next().unwrap_or(o);
        option_variables(name)
    };
    let replaced: Vec<String> = extra.iter().filter(|o| flags_variable(o).is_none()).flat_map(|o| vars_of(o)).collect();
    let mut out: Vec<String> =
        base.iter().filter(|o| !vars_of(o).iter().any(|v| replaced.contains(v))).cloned().collect();
    out.extend(extra.iter().cloned());
    combine(out)
}

/// The overrides that give B A's values of `set`.
pub fn overrides_with(b: &TargetSpec, candidates: &[Suspect], set: &[usize]) -> Vec<String> {
    let extra: Vec<String> = set.iter().flat_map(|&i| options_of(&candidates[i])).collect();
    merge_overrides(&b.overrides, &extra)
}

/// What B must report after being given `c`: (variable, value), one per flag for a flag list (as
/// `optimizer_switch:flag`).
pub fn expectations(c: &Suspect) -> Vec<(String, String)> {
    if c.transfer.charset.is_some() && c.transfer.options.is_empty() {
        return vec![];
    }
    if c.transfer.options.is_empty() {
        return vec![(c.name.clone(), c.a.clone())];
    }
    c.transfer
        .options
        .iter()
        .flat_map(|o| atoms(o))
        .filter_map(|o| {
            let (name, value) = o.split_once('=')?;
            let var = variables::option_variable(name);
            Some(match value.split_once('=').filter(|_| flags_variable(&o).is_some()) {
                Some((flag, v)) => (format!("{var}:{flag}"), v.to_string()),
                None => (var, value.to_string()),
            })
        })
        .collect()
}

/// The value B reports for an expectation's variable (`optimizer_switch:flag` looks the flag up).
pub fn reported(vars: &BTreeMap<String, String>, name: &str) -> Option<String> {
    match name.split_once(':') {
        Some((var, flag)) => variables::flags(vars.get(var)?).into_iter().find(|(k, _)| k == flag).map(|(_, v)| v),
        None => vars.get(name).cloned(),
    }
}

/// Sorts the differing variables of `diff` for a search on B (`a_line`, `b_line`: the flavor and
/// version of each side, where known).
pub fn sort(diff: &VarDiff, a_line: Option<Line>, b_line: Option<Line>) -> Sorted {
    let mut s = Sorted::default();
    let mut linked_done: Vec<String> = Vec::new();
    let mut client: Vec<String> = Vec::new();
    let line = b_line.or(a_line);
    for r in &diff.rows {
        let skip = |reason: SkipReason| Skipped { name: r.name.clone(), a: r.a.clone(), b: r.b.clone(), reason };
        if let Some(k) = r.noise {
            s.skipped.push(skip(SkipReason::Noise(k)));
            continue;
        }
        match variables::role(&r.name, line) {
            Some(Role::Follows(source)) => {
                s.mapping.push(mapped(r, format!("follows {source}: moved with it, not set itself")));
                s.skipped.push(skip(SkipReason::Follows(source)));
                continue;
            }
            Some(Role::Client) => {
                client.push(r.name.clone());
                s.skipped.push(skip(SkipReason::Client));
                continue;
            }
            _ => {}
        }
        let (Some(a), Some(b)) = (&r.a, &r.b) else {
            s.skipped.push(skip(if r.change == Change::Removed { SkipReason::NotOnB } else { SkipReason::OnlyOnB }));
            continue;
        };
        let shapes = variables::shapes_data(&r.name, b_line);
        if let Some(group) = variables::linked(&r.name) {
            if !linked_done.contains(&r.name) {
                linked_done.extend(group.variables.iter().cloned());
                s.linked(diff, &group.variables, &group.why, b_line);
            }
            continue;
        }
        let flavor = line.map(|l| l.0);
        if variables::list_form(&r.name, flavor) == Some(ListForm::Flags) {
            s.flags(r, a, b);
            continue;
        }
        if let (Some(rt), Some((_, bv)), Some((_, av))) =
            (line.and_then(|l| variables::retyped(&r.name, l.0)), b_line, a_line)
        {
            match rt.map(a, av, b, bv) {
                Mapping::Same => {}
                Mapping::Value { value, how } => {
                    s.mapping.push(Mapped {
                        source: Some(rt.source.clone()),
                        ..mapped(r, format!("mapped to B's type: {how}"))
                    });
                    let note = Some(format!("mapped: {how}"));
                    let transfer = Transfer {
                        options: vec![format!("{}={value}", r.name)],
                        shapes_data: shapes,
                        note,
                        ..Transfer::default()
                    };
                    s.candidates.push(Suspect { name: r.name.clone(), a: a.clone(), b: b.clone(), transfer });
                    continue;
                }
                Mapping::None(why) => {
                    s.mapping
                        .push(Mapped { source: Some(rt.source.clone()), ..mapped(r, format!("not given: {why}")) });
                    s.skipped.push(skip(SkipReason::NotGiven(why)));
                    continue;
                }
            }
        }
        let mut c = Suspect::new(r.name.clone(), a.clone(), b.clone());
        if shapes {
            c.transfer.shapes_data = true;
            s.mapping.push(mapped(r, "shapes the data: the probes that set it run on data prepared under it".into()));
        }
        s.candidates.push(c);
    }
    if !client.is_empty() {
        let how = "session values: each connection's client sets them (handshake or SET NAMES); these global values \
                   are only the default of connections that set nothing, so the workload connections' own values are \
                   compared instead (connection_charset)";
        s.mapping.push(Mapped { variable: client.join(", "), a: None, b: None, how: how.into(), source: None });
    }
    s.session(diff);
    s.candidates.sort_by(|x, y| x.name.cmp(&y.name));
    s
}

/// The name of the client-side candidate: the character set and collation of B's workload connections.
pub const CONNECTION_CHARSET: &str = "connection_charset";

fn mapped(r: &VarRow, how: String) -> Mapped {
    Mapped { variable: r.name.clone(), a: r.a.clone(), b: r.b.clone(), how, source: None }
}

impl Sorted {
    /// The workload connections' session values: when A's and B's differ, a client-side candidate that
    /// gives B's connections A's character set and collation with `SET NAMES`.
    fn session(&mut self, diff: &VarDiff) {
        if !diff.session_differs() {
            return;
        }
        let get = |side: bool, name: &str| {
            diff.session.iter().find(|r| r.name == name).and_then(|r| if side { r.a.clone() } else { r.b.clone() })
        };
        let describe = |side: bool| {
            let cs = get(side, "character_set_client").unwrap_or_else(|| "?".into());
            let co = get(side, "collation_connection").unwrap_or_else(|| "?".into());
            format!("{cs} / {co}")
        };
        let (a, b) = (describe(true), describe(false));
        let sets: Vec<Option<String>> = ["character_set_client", "character_set_connection", "character_set_results"]
            .iter()
            .map(|v| get(true, v))
            .collect();
        let one = sets.iter().all(|x| x.is_some() && *x == sets[0]);
        let (Some(Some(charset)), Some(collation), true) = (sets.first(), get(true, "collation_connection"), one)
        else {
            let why = "A's connections use different character sets for client, connection and results: SET NAMES \
                       sets all three to one"
                .to_string();
            self.mapping.push(Mapped {
                variable: CONNECTION_CHARSET.into(),
                a: Some(a.clone()),
                b: Some(b.clone()),
                how: why.clone(),
                source: None,
            });
            self.skipped.push(Skipped {
                name: CONNECTION_CHARSET.into(),
                a: Some(a),
                b: Some(b),
                reason: SkipReason::NotGiven(why),
            });
            return;
        };
        let charset = ConnectionCharset { charset: charset.clone(), collation: Some(collation) };
        let how = format!(
            "client side: B's workload connections run {} (what A's connections use; read from both servers as a \
             workload connects)",
            charset.statement()
        );
        self.mapping.push(Mapped {
            variable: CONNECTION_CHARSET.into(),
            a: Some(a.clone()),
            b: Some(b.clone()),
            how,
            source: None,
        });
        let transfer = Transfer {
            charset: Some(charset),
            note: Some("client side: SET NAMES on every workload connection".into()),
            ..Transfer::default()
        };
        self.candidates.push(Suspect { name: CONNECTION_CHARSET.into(), a, b, transfer });
    }

    /// Variables only valid together: one candidate with A's value of each.
    fn linked(&mut self, diff: &VarDiff, group: &[String], why: &str, b_line: Option<Line>) {
        let on = |side: &BTreeMap<String, String>, v: &str| side.get(v).cloned();
        let members: Vec<(&String, Option<String>, Option<String>)> =
            group.iter().map(|v| (v, on(&diff.a.variables, v), on(&diff.b.variables, v))).collect();
        let name = group.join("+");
        let join = |side_a: bool| {
            let values: Vec<String> = members
                .iter()
                .map(|m| if side_a { &m.1 } else { &m.2 }.clone().unwrap_or_else(|| "—".into()))
                .collect();
            values.join(" / ")
        };
        let (a, b) = (join(true), join(false));
        if members.iter().any(|m| m.1.is_none() || m.2.is_none()) {
            let reason = if members.iter().any(|m| m.2.is_none()) { SkipReason::NotOnB } else { SkipReason::OnlyOnB };
            self.skipped.push(Skipped { name, a: Some(a), b: Some(b), reason });
            return;
        }
        let shapes = group.iter().any(|v| variables::shapes_data(v, b_line));
        let options: Vec<String> =
            members.iter().map(|(v, a, _)| format!("{v}={}", a.clone().unwrap_or_default())).collect();
        let mut how = format!("moved together ({}): {why}", options.join(", "));
        if shapes {
            how.push_str("; they shape the data: the probes that set them run on data prepared under them");
        }
        self.mapping.push(Mapped { variable: name.clone(), a: Some(a.clone()), b: Some(b.clone()), how, source: None });
        let note = Some(format!("moved together: {why}"));
        self.candidates.push(Suspect {
            name,
            a,
            b,
            transfer: Transfer { options, shapes_data: shapes, note, ..Transfer::default() },
        });
    }

    /// A flag list: one candidate per flag B has whose value differs; flags only one side has are
    /// listed and not given.
    fn flags(&mut self, r: &VarRow, a: &str, b: &str) {
        let fa: BTreeMap<String, String> = variables::flags(a).into_iter().collect();
        let fb = variables::flags(b);
        let mut given = Vec::new();
        let mut only_b = Vec::new();
        for (flag, vb) in &fb {
            let name = format!("{}:{flag}", r.name);
            match fa.get(flag) {
                Some(va) if !va.eq_ignore_ascii_case(vb) => {
                    given.push(format!("{flag}={va}"));
                    let transfer = Transfer {
                        options: vec![format!("{}={flag}={va}", r.name)],
                        note: Some(format!("one flag of {}, the others keep B's values", r.name)),
                        ..Transfer::default()
                    };
                    self.candidates.push(Suspect { name, a: va.clone(), b: vb.clone(), transfer });
                }
                Some(_) => {}
                None => {
                    only_b.push(format!("{flag}={vb}"));
                    self.skipped.push(Skipped { name, a: None, b: Some(vb.clone()), reason: SkipReason::OnlyOnB });
                }
            }
        }
        let mut only_a = Vec::new();
        for (flag, va) in variables::flags(a) {
            if !fb.iter().any(|(k, _)| *k == flag) {
                only_a.push(format!("{flag}={va}"));
                let name = format!("{}:{flag}", r.name);
                self.skipped.push(Skipped { name, a: Some(va), b: None, reason: SkipReason::NotOnB });
            }
        }
        let mut how = vec![format!(
            "flag by flag: B gets A's value of {} flag(s){}",
            given.len(),
            if given.is_empty() { String::new() } else { format!(" ({})", given.join(", ")) }
        )];
        if !only_a.is_empty() {
            how.push(format!("only A has {} (not given)", only_a.join(", ")));
        }
        if !only_b.is_empty() {
            how.push(format!("only B has {} (B keeps them)", only_b.join(", ")));
        }
        self.mapping.push(mapped(r, how.join("; ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::diffvars::{Snapshot, diff};
    use crate::server::{Flavor, Version};

    fn snap(label: &str, vars: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            label: label.into(),
            variables: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn flag_lists_are_combined_split_and_merged_into_overrides() {
        let o =
            combine(vec!["optimizer_switch=a=off".into(), "sync_binlog=0".into(), "optimizer-switch=b=on,a=on".into()]);
        assert_eq!(o, ["optimizer_switch=a=on,b=on", "sync_binlog=0"]);
        assert_eq!(atoms("optimizer_switch=a=on,b=off"), ["optimizer_switch=a=on", "optimizer_switch=b=off"]);
        assert_eq!(atoms("sync_binlog=0"), ["sync_binlog=0"]);
        let base: Vec<String> = ["skip-log-bin", "optimizer_switch=mrr=on", "sync_binlog=1"].map(String::from).into();
        let got = merge_overrides(&base, &["log-bin".into(), "optimizer_switch=rowid_filter=off".into()]);
        assert_eq!(got, ["optimizer_switch=mrr=on,rowid_filter=off", "sync_binlog=1", "log-bin"]);
    }

    #[test]
    fn charset_and_collation_move_together_and_shape_the_data() {
        let a = snap(
            "A",
            &[
                ("character_set_server", "latin1"),
                ("collation_server", "latin1_swedish_ci"),
                ("character_set_database", "latin1"),
                ("character_set_client", "latin1"),
                ("sync_binlog", "0"),
            ],
        );
        let b = snap(
            "B",
            &[
                ("character_set_server", "utf8mb4"),
                ("collation_server", "utf8mb4_uca1400_ai_ci"),
                ("character_set_database", "utf8mb4"),
                ("character_set_client", "utf8mb4"),
                ("sync_binlog", "1"),
            ],
        );
        let line = Some((Flavor::Mariadb, Version::new(11, 8, 9)));
        let s = sort(&diff(&a, &b), Some((Flavor::Mariadb, Version::new(10, 11, 19))), line);
        let names: Vec<&str> = s.candidates.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["character_set_server+collation_server", "sync_binlog"]);
        let cs = &s.candidates[0];
        assert_eq!(cs.transfer.options, ["character_set_server=latin1", "collation_server=latin1_swedish_ci"]);
        assert!(cs.transfer.shapes_data && !s.candidates[1].transfer.shapes_data);
        assert_eq!(cs.a, "latin1 / latin1_swedish_ci");
        assert_eq!(
            expectations(cs),
            [
                ("character_set_server".to_string(), "latin1".to_string()),
                ("collation_server".into(), "latin1_swedish_ci".into())
            ]
        );
        let reason = |n: &str| s.skipped.iter().find(|k| k.name == n).map(|k| k.reason.clone());
        assert_eq!(reason("character_set_database"), Some(SkipReason::Follows("character_set_server".into())));
        assert_eq!(reason("character_set_client"), Some(SkipReason::Client));
        assert!(
            s.mapping
                .iter()
                .any(|m| m.variable == "character_set_server+collation_server" && m.how.contains("moved together"))
        );
    }

    /// The values of MariaDB 10.11.19 and 11.8.9 (read from both servers' defaults).
    const SWITCH_10_11: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,\
        index_merge_sort_intersection=off,engine_condition_pushdown=off,index_condition_pushdown=on,derived_merge=on,\
        derived_with_keys=on,firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,\
        partial_match_rowid_merge=on,partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,\
        mrr_sort_keys=off,outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,\
        join_cache_bka=on,optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,\
        orderby_uses_equalities=on,condition_pushdown_for_derived=on,split_materialized=on,\
        condition_pushdown_for_subquery=on,rowid_filter=on,condition_pushdown_from_having=on,not_null_range_scan=off,\
        hash_join_cardinality=off,cset_narrowing=off";
    const SWITCH_11_8: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,\
        index_merge_sort_intersection=off,index_condition_pushdown=on,derived_merge=on,derived_with_keys=on,\
        firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,partial_match_rowid_merge=on,\
        partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,mrr_sort_keys=off,\
        outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,join_cache_bka=on,\
        optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,orderby_uses_equalities=on,\
        condition_pushdown_for_derived=on,split_materialized=on,condition_pushdown_for_subquery=on,rowid_filter=on,\
        condition_pushdown_from_having=on,not_null_range_scan=off,hash_join_cardinality=on,cset_narrowing=on,\
        sargable_casefold=on";

    #[test]
    fn optimizer_switch_of_10_11_goes_to_11_8_flag_by_flag_and_retyped_values_are_mapped() {
        let a = snap(
            "A",
            &[
                ("optimizer_switch", SWITCH_10_11),
                ("optimizer_adjust_secondary_key_costs", "fix_reuse_range_for_ref,fix_card_multiplier"),
            ],
        );
        let b = snap("B", &[("optimizer_switch", SWITCH_11_8), ("optimizer_adjust_secondary_key_costs", "0")]);
        let (m1011, m118) = ((Flavor::Mariadb, Version::new(10, 11, 19)), (Flavor::Mariadb, Version::new(11, 8, 9)));
        let s = sort(&diff(&a, &b), Some(m1011), Some(m118));
        let got: Vec<(&str, &str, &str, Vec<String>)> =
            s.candidates.iter().map(|c| (c.name.as_str(), c.a.as_str(), c.b.as_str(), options_of(c))).collect();
        assert_eq!(
            got,
            [
                (
                    "optimizer_switch:cset_narrowing",
                    "off",
                    "on",
                    vec!["optimizer_switch=cset_narrowing=off".to_string()]
                ),
                (
                    "optimizer_switch:hash_join_cardinality",
                    "off",
                    "on",
                    vec!["optimizer_switch=hash_join_cardinality=off".into()]
                ),
            ]
        );
        let reason = |n: &str| s.skipped.iter().find(|k| k.name == n).map(|k| k.reason.clone());
        assert_eq!(reason("optimizer_switch:engine_condition_pushdown"), Some(SkipReason::NotOnB));
        assert_eq!(reason("optimizer_switch:sargable_casefold"), Some(SkipReason::OnlyOnB));
        match reason("optimizer_adjust_secondary_key_costs") {
            Some(SkipReason::NotGiven(why)) => assert!(why.contains("unused from 11.0.0"), "{why}"),
            other => panic!("{other:?}"),
        }
        let how = &s.mapping.iter().find(|m| m.variable == "optimizer_switch").unwrap().how;
        assert_eq!(
            how,
            "flag by flag: B gets A's value of 2 flag(s) (hash_join_cardinality=off, cset_narrowing=off); only A has \
             engine_condition_pushdown=off (not given); only B has sargable_casefold=on (B keeps them)"
        );
        // Both flags set on B at once: one option.
        let b_spec = TargetSpec::default();
        assert_eq!(
            overrides_with(&b_spec, &s.candidates, &[0, 1]),
            ["optimizer_switch=cset_narrowing=off,hash_join_cardinality=off"]
        );
        assert_eq!(
            expectations(&s.candidates[0]),
            [("optimizer_switch:cset_narrowing".to_string(), "off".to_string())]
        );
        let reported_vars: BTreeMap<String, String> =
            [("optimizer_switch".to_string(), SWITCH_10_11.replace(' ', ""))].into();
        assert_eq!(reported(&reported_vars, "optimizer_switch:cset_narrowing").as_deref(), Some("off"));
    }
}
