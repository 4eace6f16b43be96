//! A script's options: what it declares in `sysbench.cmdline.options`, how the command line's
//! `--name=value` pairs split between the script and versus's general options, and the typed values of
//! `sysbench.opt`.

use std::collections::BTreeMap;

use mlua::{Table, Value};

use crate::error::{Error, Result};
use crate::workload::sysbench::spec::{self, Group, Kind};

/// A value of `sysbench.opt`.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// on/off.
    Bool(bool),
    /// A number.
    Num(f64),
    /// Text.
    Str(String),
    /// A comma-separated list.
    List(Vec<String>),
    /// Declared without a default and not given.
    Unset,
}

/// sysbench's argument types (`sysbench.cmdline.ARG_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgType {
    Bool,
    Num,
    Size,
    Str,
    List,
}

/// One option a script declares.
#[derive(Debug, Clone)]
pub struct Decl {
    /// Its name (with underscores).
    pub name: String,
    /// Its help text.
    pub desc: String,
    default: OptValue,
    kind: ArgType,
}

/// The options of one invocation, as the script sees them.
#[derive(Debug, Clone, Default)]
pub struct ScriptOptions {
    /// `sysbench.opt`: the script's options and the general ones.
    pub values: Vec<(String, OptValue)>,
    /// The script declares no options: every option is also a global, as for sysbench 0.5's scripts.
    pub export_globals: bool,
    /// `sysbench.cmdline.argv`.
    pub argv: Vec<String>,
    /// The script's declarations, for `help`.
    pub decls: Vec<Decl>,
}

/// Reads `sysbench.cmdline.options` of a loaded state; `None` when the script declares none.
pub(super) fn declarations(lua: &mlua::Lua) -> Result<Option<Vec<Decl>>> {
    let bad = |e: mlua::Error| Error::Other(format!("sysbench.cmdline.options: {e}"));
    let sb: Table = lua.globals().get("sysbench").map_err(bad)?;
    let cmdline: Table = sb.get("cmdline").map_err(bad)?;
    let Ok(options) = cmdline.get::<Table>("options") else { return Ok(None) };
    let mut out = Vec::new();
    for pair in options.pairs::<String, Table>() {
        let (name, d) = pair
            .map_err(|e| Error::Other(format!("sysbench.cmdline.options: an entry is not {{desc, default}}: {e}")))?;
        let desc: String = d.get::<Option<String>>(1).map_err(bad)?.unwrap_or_default();
        let default: Value = d.get(2).map_err(bad)?;
        let declared: Option<i64> = d.get(3).ok().flatten();
        let kind = match declared {
            Some(1) => ArgType::Bool,
            Some(2 | 4) => ArgType::Num,
            Some(3) => ArgType::Size,
            Some(6) => ArgType::List,
            Some(_) => ArgType::Str,
            None => match &default {
                Value::Boolean(_) => ArgType::Bool,
                Value::Integer(_) | Value::Number(_) => ArgType::Num,
                Value::Table(_) => ArgType::List,
                _ => ArgType::Str,
            },
        };
        let default = match default {
            Value::Boolean(b) => OptValue::Bool(b),
            Value::Integer(i) => OptValue::Num(i as f64),
            Value::Number(n) => OptValue::Num(n),
            Value::String(s) => OptValue::Str(s.to_string_lossy()),
            Value::Table(t) => OptValue::List(t.sequence_values::<String>().filter_map(|v| v.ok()).collect()),
            _ => OptValue::Unset,
        };
        out.push(Decl { name: name.replace('-', "_"), desc, default, kind });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Some(out))
}

/// `--name=value` pairs, names with underscores.
pub(super) type Pairs = Vec<(String, String)>;

/// The `--name=value` pairs of a command line (names with underscores; a bare `--flag` is `on`) and its
/// other words.
pub(super) fn split(args: &[String]) -> Result<(Pairs, Vec<String>)> {
    let mut pairs = Vec::new();
    let mut words = Vec::new();
    for arg in args {
        if let Some(body) = arg.strip_prefix("--") {
            let (n, v) = body.split_once('=').unwrap_or((body, "on"));
            pairs.push((n.replace('-', "_"), v.to_string()));
        } else if arg.starts_with('-') && arg.len() > 1 {
            return Err(Error::option(arg.clone(), "invalid option; options are written --name=value"));
        } else {
            words.push(arg.clone());
        }
    }
    Ok((pairs, words))
}

/// Whether `name` is one of versus's general options (not a built-in test's own).
pub(super) fn is_general(name: &str) -> bool {
    spec::find(name).is_some_and(|s| s.group != Group::Script)
}

/// Seconds after `--time` that a run whose events have not all returned is stopped, unless
/// `--forced-shutdown` says otherwise: an `event()` that never returns must not hold the run forever.
pub const STUCK_EVENT_GRACE: &str = "10";

/// Splits `pairs` between the general options and the script's, and types the script's. With
/// `decls == None` (a script that declares nothing) every option goes to the script as well.
pub(super) fn assign(
    pairs: &[(String, String)],
    decls: Option<&[Decl]>,
    argv: Vec<String>,
) -> Result<(BTreeMap<String, String>, ScriptOptions)> {
    let mut general = BTreeMap::new();
    let mut given: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in pairs {
        let declared = decls.is_none_or(|d| d.iter().any(|x| &x.name == name));
        if is_general(name) {
            general.insert(name.clone(), value.clone());
        } else if !declared {
            let known: Vec<&str> = decls.unwrap_or_default().iter().map(|d| d.name.as_str()).collect();
            return Err(Error::option(
                format!("--{}", name.replace('_', "-")),
                format!(
                    "is not an option of this script nor of versus; the script's options are: {}",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ),
            ));
        }
        if declared {
            given.insert(name.clone(), value.clone());
        }
    }
    let mut values = Vec::new();
    match decls {
        Some(decls) => {
            for d in decls {
                let v = match given.get(&d.name) {
                    Some(text) => typed(&d.name, d.kind, text)?,
                    None => d.default.clone(),
                };
                values.push((d.name.clone(), v));
            }
        }
        None => {
            for (name, text) in &given {
                values.push((name.clone(), guess(text)));
            }
        }
    }
    // The general options, as sysbench exposes them too (`sysbench.opt.threads`, …).
    for s in spec::SPECS.iter().filter(|s| s.group != Group::Script) {
        if values.iter().any(|(n, _)| n == s.name) {
            continue;
        }
        let text = general.get(s.name).map(String::as_str).or(s.default);
        let v = match (text, s.kind) {
            (None, _) => continue,
            (Some(t), Kind::Bool) => typed(s.name, ArgType::Bool, t)?,
            (Some(t), Kind::Int | Kind::Num) => typed(s.name, ArgType::Num, t)?,
            (Some(t), Kind::Size) => typed(s.name, ArgType::Size, t)?,
            (Some(t), Kind::List) => typed(s.name, ArgType::List, t)?,
            (Some(t), Kind::Str) => OptValue::Str(t.to_string()),
        };
        values.push((s.name.to_string(), v));
    }
    general.entry("forced_shutdown".to_string()).or_insert_with(|| STUCK_EVENT_GRACE.to_string());
    let decls = decls.map(<[Decl]>::to_vec).unwrap_or_default();
    Ok((general, ScriptOptions { values, export_globals: decls.is_empty(), argv, decls }))
}

fn typed(name: &str, kind: ArgType, text: &str) -> Result<OptValue> {
    let flag = format!("--{}", name.replace('_', "-"));
    Ok(match kind {
        ArgType::Bool => match text.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => OptValue::Bool(true),
            "off" | "false" | "no" | "0" => OptValue::Bool(false),
            _ => return Err(Error::option(flag, format!("'{text}' is not on or off"))),
        },
        ArgType::Num => OptValue::Num(
            text.trim().parse::<f64>().map_err(|_| Error::option(flag, format!("'{text}' is not a number")))?,
        ),
        ArgType::Size => OptValue::Num(size(text).ok_or_else(|| {
            Error::option(flag, format!("'{text}' is not a size (a number with an optional K, M, G or T)"))
        })?),
        ArgType::List => OptValue::List(text.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()),
        ArgType::Str => OptValue::Str(text.to_string()),
    })
}

fn size(text: &str) -> Option<f64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1024.0),
        (i, 'm' | 'M') => (&t[..i], 1024.0 * 1024.0),
        (i, 'g' | 'G') => (&t[..i], 1024.0 * 1024.0 * 1024.0),
        (i, 't' | 'T') => (&t[..i], 1024.0_f64.powi(4)),
        _ => (t, 1.0),
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

/// A value of a script that declares no options: a number if it reads as one, on/off as a boolean.
fn guess(text: &str) -> OptValue {
    match text {
        "on" | "true" => OptValue::Bool(true),
        "off" | "false" => OptValue::Bool(false),
        t => t.parse::<f64>().map(OptValue::Num).unwrap_or_else(|_| OptValue::Str(t.to_string())),
    }
}

impl ScriptOptions {
    /// The script's options as `help` lists them, in sysbench's layout.
    pub fn help(&self) -> String {
        let mut s = String::new();
        for d in &self.decls {
            let form = match d.kind {
                ArgType::Bool => format!("--{}[=on|off]", d.name),
                ArgType::Num | ArgType::Size => format!("--{}=N", d.name),
                ArgType::List => format!("--{}=[LIST,...]", d.name),
                ArgType::Str => format!("--{}=STRING", d.name),
            };
            let default = match &d.default {
                OptValue::Bool(b) => format!(" [{}]", if *b { "on" } else { "off" }),
                OptValue::Num(n) => format!(" [{n}]"),
                OptValue::Str(t) => format!(" [{t}]"),
                OptValue::List(l) => format!(" [{}]", l.join(",")),
                OptValue::Unset => String::new(),
            };
            s.push_str(&format!("  {form:<33} {}{default}\n", d.desc));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, default: OptValue, kind: ArgType) -> Decl {
        Decl { name: name.into(), desc: String::new(), default, kind }
    }

    #[test]
    fn options_split_between_the_script_and_versus() {
        let decls =
            vec![decl("scale", OptValue::Num(10.0), ArgType::Num), decl("use_fk", OptValue::Bool(true), ArgType::Bool)];
        let pairs = vec![
            ("threads".to_string(), "4".to_string()),
            ("scale".into(), "3".into()),
            ("use_fk".into(), "off".into()),
        ];
        let (general, o) = assign(&pairs, Some(&decls), vec![]).unwrap();
        assert_eq!(general.get("threads").map(String::as_str), Some("4"));
        assert!(!general.contains_key("scale"));
        assert!(o.values.contains(&("scale".into(), OptValue::Num(3.0))));
        assert!(o.values.contains(&("use_fk".into(), OptValue::Bool(false))));
        assert!(o.values.contains(&("threads".into(), OptValue::Num(4.0))));
        let e = assign(&[("scael".into(), "3".into())], Some(&decls), vec![]).unwrap_err().to_string();
        assert!(e.contains("--scael") && e.contains("scale, use_fk"), "{e}");
        let e = assign(&[("use_fk".into(), "maybe".into())], Some(&decls), vec![]).unwrap_err().to_string();
        assert!(e.contains("--use-fk") && e.contains("on or off"), "{e}");
    }

    #[test]
    fn scripts_without_declarations_take_every_option() {
        let pairs = vec![("oltp_tables_count".to_string(), "3".to_string()), ("mode".into(), "fast".into())];
        let (_, o) = assign(&pairs, None, vec![]).unwrap();
        assert!(o.export_globals);
        assert!(o.values.contains(&("oltp_tables_count".into(), OptValue::Num(3.0))));
        assert!(o.values.contains(&("mode".into(), OptValue::Str("fast".into()))));
    }
}
