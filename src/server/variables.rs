//! What server variables mean to a benchmark beyond their value, per flavor and version, from the table
//! in `data/variables.toml`: which ones fix the datadir when it is initialised or decide what a
//! workload's prepare creates (so a target that sets them needs data prepared under them), which ones
//! the client decides per connection (not startup options), which global values follow another
//! variable, which variables are only valid together, which comma-separated values are given element
//! by element, and how values whose type changed between versions map onto each other.

use crate::server::flavor::Family;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::server::build::{Flavor, Version};
use crate::server::effective;
use crate::server::mycnf::normalize_key;

/// The table, compiled in.
const TABLE: &str = include_str!("../../data/variables.toml");

/// A server line: flavor and version.
pub type Line = (Flavor, Version);

/// What a variable means to a benchmark beyond its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Fixed when the data directory is initialised: data are prepared under it.
    Init,
    /// Decides what prepare creates: data prepared under another value are other data.
    Shape,
    /// A session value each connection's client decides (handshake or `SET NAMES`).
    Client,
    /// A global value derived at startup from the named variable.
    Follows(String),
}

impl Role {
    /// True for the roles whose values need data prepared under them.
    pub fn shapes_data(&self) -> bool {
        matches!(self, Role::Init | Role::Shape)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RoleName {
    Init,
    Shape,
    Client,
    Follows,
}

/// One `[[variable]]` row.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct VarRow {
    name: String,
    family: Option<Family>,
    since: Option<String>,
    before: Option<String>,
    role: RoleName,
    follows: Option<String>,
    source: String,
}

/// Variables that are only valid together and are moved as one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Linked {
    /// The variables, in the order they are named.
    pub variables: Vec<String>,
    /// Why they go together.
    pub why: String,
}

/// How a comma-separated value is given element by element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListForm {
    /// `name=on|off` pairs; an assignment changes only the flags it names (`optimizer_switch`).
    Flags,
    /// A set of names (`sql_mode`).
    Set,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListRow {
    name: String,
    family: Option<Family>,
    form: ListForm,
    #[allow(dead_code)]
    source: String,
}

/// A variable whose type changed between versions (a number in some, a set of bits in others), with
/// the versions from which it is unused.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retyped {
    /// The variable.
    pub name: String,
    family: Option<Family>,
    /// The set's elements in bit order: element `i` is the number `2^i`.
    pub bits: Vec<String>,
    /// From this version on the server does not use the variable.
    pub unused_since: Option<String>,
    /// Where the mapping comes from.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    variable: Vec<VarRow>,
    linked: Vec<Linked>,
    list: Vec<ListRow>,
    retyped: Vec<Retyped>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let t: Table = toml::from_str(TABLE).unwrap_or_else(|e| panic!("data/variables.toml: {e}"));
        for r in &t.variable {
            let versions_ok = [&r.since, &r.before].iter().all(|v| v.as_deref().is_none_or(|v| version(v).is_some()));
            let follows_ok = (r.role == RoleName::Follows) == r.follows.is_some();
            assert!(
                versions_ok && follows_ok && !r.source.is_empty(),
                "data/variables.toml: row {} is malformed",
                r.name
            );
        }
        t
    })
}

fn version(text: &str) -> Option<Version> {
    let n: Vec<u32> = text.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    (n.len() == 3).then(|| Version::new(n[0], n[1], n[2]))
}

impl VarRow {
    /// Whether the row is about `line`; with no line, every row of the variable matches.
    fn matches(&self, line: Option<Line>) -> bool {
        let Some((flavor, v)) = line else { return true };
        self.family.is_none_or(|f| f.has(flavor))
            && self.since.as_deref().and_then(version).is_none_or(|s| v >= s)
            && self.before.as_deref().and_then(version).is_none_or(|b| v < b)
    }

    fn role(&self) -> Role {
        match self.role {
            RoleName::Init => Role::Init,
            RoleName::Shape => Role::Shape,
            RoleName::Client => Role::Client,
            RoleName::Follows => Role::Follows(self.follows.clone().unwrap_or_default()),
        }
    }
}

/// The variable an option sets (`character-set-server=latin1` → `character_set_server`,
/// `skip-log-bin` → `log_bin`), as [`effective::option_variables`] names it.
pub fn option_variable(option: &str) -> String {
    let name = option.split('=').next().unwrap_or(option);
    effective::option_variables(name).into_iter().next().unwrap_or_default()
}

/// The role of `variable` on `line` (the first matching row), or, with no line known, the role any row
/// gives it (data-shaping roles first, so that an unknown server is treated with care).
pub fn role(variable: &str, line: Option<Line>) -> Option<Role> {
    let name = variable.to_ascii_lowercase();
    let rows = table().variable.iter().filter(|r| r.name == name && r.matches(line));
    match line {
        Some(_) => rows.map(VarRow::role).next(),
        None => {
            let roles: Vec<Role> = rows.map(VarRow::role).collect();
            roles.iter().find(|r| r.shapes_data()).or(roles.first()).cloned()
        }
    }
}

/// Where the role of `variable` on `line` comes from (the row's source).
pub fn source(variable: &str, line: Option<Line>) -> Option<&'static str> {
    let name = variable.to_ascii_lowercase();
    table().variable.iter().find(|r| r.name == name && r.matches(line)).map(|r| r.source.as_str())
}

/// True when `variable`'s value on `line` needs data prepared under it (roles init and shape).
pub fn shapes_data(variable: &str, line: Option<Line>) -> bool {
    role(variable, line).is_some_and(|r| r.shapes_data())
}

/// The options among `options` (`--set` style, in order, a later one of a variable winning) whose
/// variables shape the data on `line`, normalised to `name=value` (`name` for a flag as written) and
/// sorted: the server's part of a data shape.
pub fn data_shape_options(options: &[String], line: Option<Line>) -> Vec<String> {
    let mut last: Vec<(String, String)> = Vec::new();
    for o in options {
        let var = option_variable(o);
        if !shapes_data(&var, line) {
            continue;
        }
        let text = match o.split_once('=') {
            Some((_, v)) => format!("{}={}", normalize_key(o.split('=').next().unwrap_or(o)), v.trim()),
            None => normalize_key(o),
        };
        last.retain(|(v, _)| *v != var);
        last.push((var, text));
    }
    let mut out: Vec<String> = last.into_iter().map(|(_, t)| t).collect();
    out.sort();
    out
}

/// The variables that must move together with `variable` (itself included), with why.
pub fn linked(variable: &str) -> Option<&'static Linked> {
    let name = variable.to_ascii_lowercase();
    table().linked.iter().find(|l| l.variables.contains(&name))
}

/// How `variable`'s comma-separated value is given element by element on servers of `flavor` (any
/// flavor when unknown).
pub fn list_form(variable: &str, flavor: Option<Flavor>) -> Option<ListForm> {
    let name = variable.to_ascii_lowercase();
    table()
        .list
        .iter()
        .find(|l| l.name == name && flavor.is_none_or(|f| l.family.is_none_or(|x| x.has(f))))
        .map(|l| l.form)
}

/// The retyping of `variable` on servers of `flavor`, if its type changed between versions.
pub fn retyped(variable: &str, flavor: Flavor) -> Option<&'static Retyped> {
    let name = variable.to_ascii_lowercase();
    table().retyped.iter().find(|r| r.name == name && r.family.is_none_or(|x| x.has(flavor)))
}

/// A `name=on|off` list as pairs, in order (names lower case, values as written).
pub fn flags(value: &str) -> Vec<(String, String)> {
    value
        .split(',')
        .filter_map(|e| e.split_once('='))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// A set value's elements, in order (lower case, empty ones left out).
pub fn elements(value: &str) -> Vec<String> {
    value.split(',').map(|e| e.trim().to_ascii_lowercase()).filter(|e| !e.is_empty()).collect()
}

/// What a retyped variable's value on A becomes on B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping {
    /// Both values have the same type: A's value is given as it is.
    Same,
    /// A's value in B's type, and what was mapped.
    Value {
        /// The value to give B.
        value: String,
        /// What was mapped (`fix_reuse_range_for_ref,fix_card_multiplier = 16 + 32 = 48`).
        how: String,
    },
    /// Nothing can be given: why.
    None(String),
}

impl Retyped {
    fn unused_on(&self, v: Version) -> bool {
        self.unused_since.as_deref().and_then(version).is_some_and(|u| v >= u)
    }

    /// Maps A's value (on A's version) to B's type (B's value on B's version).
    pub fn map(&self, a: &str, a_version: Version, b: &str, b_version: Version) -> Mapping {
        let since = self.unused_since.clone().unwrap_or_default();
        if self.unused_on(b_version) {
            return Mapping::None(format!("unused from {since} (B is {b_version}): nothing to give B"));
        }
        if self.unused_on(a_version) {
            return Mapping::None(format!("unused from {since} (A is {a_version}): A's value has no effect on A"));
        }
        let number = |v: &str| v.trim().parse::<u64>().ok();
        match (number(a), number(b)) {
            (Some(_), Some(_)) | (None, None) => Mapping::Same,
            (None, Some(_)) => {
                let mut sum = 0u64;
                let mut parts = Vec::new();
                for e in elements(a) {
                    match self.bits.iter().position(|b| *b == e) {
                        Some(i) => {
                            sum += 1 << i;
                            parts.push((1u64 << i).to_string());
                        }
                        None => return Mapping::None(format!("A's element {e} has no number")),
                    }
                }
                let how = format!("{} = {} = {sum} (element i is bit 2^i)", a.trim(), parts.join(" + "));
                Mapping::Value { value: sum.to_string(), how }
            }
            (Some(n), None) => {
                let mut names = Vec::new();
                for i in 0..64 {
                    if n & (1 << i) != 0 {
                        match self.bits.get(i) {
                            Some(name) => names.push(name.clone()),
                            None => return Mapping::None(format!("bit 2^{i} of A's {n} has no name")),
                        }
                    }
                }
                let value = names.join(",");
                let how = format!("{n} = {} (bit 2^i is element i)", if value.is_empty() { "''" } else { &value });
                Mapping::Value { value, how }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M1011: Line = (Flavor::Mariadb, Version::new(10, 11, 19));
    const M118: Line = (Flavor::Mariadb, Version::new(11, 8, 9));
    const MY80: Line = (Flavor::Mysql, Version::new(8, 0, 36));
    const MY57: Line = (Flavor::Mysql, Version::new(5, 7, 44));

    #[test]
    fn the_table_parses_and_every_row_names_its_source() {
        let t = table();
        assert!(t.variable.len() >= 25);
        assert!(t.variable.iter().all(|r| r.source.len() > 20));
        assert!(t.retyped.iter().all(|r| r.unused_since.as_deref().is_none_or(|v| version(v).is_some())));
    }

    #[test]
    fn roles_depend_on_flavor_and_version() {
        assert_eq!(role("lower_case_table_names", Some(MY80)), Some(Role::Init));
        assert_eq!(role("lower_case_table_names", Some(MY57)), Some(Role::Shape));
        assert_eq!(role("lower_case_table_names", Some(M118)), Some(Role::Shape));
        assert_eq!(role("innodb_checksum_algorithm", Some(M1011)), Some(Role::Shape));
        assert_eq!(role("innodb_checksum_algorithm", Some(MY80)), None, "MySQL rewrites checksums per page");
        assert_eq!(role("innodb_checksum_algorithm", None), Some(Role::Shape), "unknown server: with care");
        assert_eq!(role("default_collation_for_utf8mb4", Some(M118)), None);
        assert_eq!(role("CHARACTER_SET_SERVER", Some(M118)), Some(Role::Shape));
        assert_eq!(role("collation_connection", Some(M1011)), Some(Role::Client));
        assert_eq!(role("character_set_database", None), Some(Role::Follows("character_set_server".into())));
        assert_eq!(role("sync_binlog", Some(M118)), None);
        assert!(shapes_data("innodb_page_size", Some(MY80)) && !shapes_data("innodb_buffer_pool_size", None));
        assert!(source("innodb_page_size", None).unwrap().contains("initializing"));
    }

    #[test]
    fn data_shape_options_are_normalised_last_one_wins_and_sorted() {
        let o: Vec<String> = [
            "sync_binlog=0",
            "collation-server=latin1_bin",
            "loose-character-set-server = latin1",
            "skip-innodb-file-per-table",
            "collation_server=latin1_swedish_ci",
        ]
        .map(String::from)
        .into();
        assert_eq!(
            data_shape_options(&o, Some(M1011)),
            ["character_set_server=latin1", "collation_server=latin1_swedish_ci", "skip_innodb_file_per_table"]
        );
        assert!(data_shape_options(&["innodb_buffer_pool_size=1G".into()], None).is_empty());
        assert_eq!(option_variable("skip-log-bin"), "log_bin");
        assert_eq!(option_variable("disable-performance-schema"), "performance_schema");
    }

    #[test]
    fn lists_links_and_retyped_variables() {
        assert_eq!(list_form("optimizer_switch", Some(Flavor::Mariadb)), Some(ListForm::Flags));
        assert_eq!(list_form("sql_mode", None), Some(ListForm::Set));
        assert_eq!(list_form("old_mode", Some(Flavor::Mysql)), None);
        assert_eq!(linked("collation_server").unwrap().variables, ["character_set_server", "collation_server"]);
        assert!(linked("sync_binlog").is_none());
        assert_eq!(flags("a=on, B=off,junk"), [("a".to_string(), "on".to_string()), ("b".into(), "off".into())]);
        assert_eq!(elements("STRICT_TRANS_TABLES,,no_zero_date"), ["strict_trans_tables", "no_zero_date"]);
    }

    #[test]
    fn optimizer_adjust_secondary_key_costs_maps_between_its_types() {
        let r = retyped("optimizer_adjust_secondary_key_costs", Flavor::Mariadb).unwrap();
        assert!(retyped("optimizer_adjust_secondary_key_costs", Flavor::Mysql).is_none());
        let (v1011_7, v1011_19, v118) = (Version::new(10, 11, 7), Version::new(10, 11, 19), Version::new(11, 8, 9));
        // 10.11.19 (a set) to 11.8 (unused): nothing to give.
        match r.map("fix_reuse_range_for_ref,fix_card_multiplier", v1011_19, "0", v118) {
            Mapping::None(why) => assert!(why.contains("unused from 11.0.0"), "{why}"),
            other => panic!("{other:?}"),
        }
        match r.map("0", v118, "fix_card_multiplier", v1011_19) {
            Mapping::None(why) => assert!(why.contains("no effect on A"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Between 10.11.7's number and 10.11.8+'s set, by bits.
        assert_eq!(
            r.map("adjust_secondary_key_cost,disable_max_seek", v1011_19, "0", v1011_7),
            Mapping::Value {
                value: "3".into(),
                how: "adjust_secondary_key_cost,disable_max_seek = 1 + 2 = 3 (element i is bit 2^i)".into()
            }
        );
        match r.map("2", v1011_7, "fix_card_multiplier", v1011_19) {
            Mapping::Value { value, .. } => assert_eq!(value, "disable_max_seek"),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.map("fix_card_multiplier", v1011_19, "", v1011_19), Mapping::Same);
        assert!(matches!(r.map("bogus", v1011_19, "1", v1011_7), Mapping::None(_)));
    }
}
