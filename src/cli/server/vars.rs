//! `versus server vars NAME`: SHOW GLOBAL VARIABLES of a running sandbox, filtered by a LIKE pattern.

use super::{open, table};
use crate::error::{Error, Result};
use crate::server::sandbox;
use crate::server::{Home, admin};

/// Prints the global variables of sandbox `name` (those matching `like`), as a table or JSON.
pub(super) fn vars(home: &Home, name: &str, like: Option<&str>, json: bool) -> Result<()> {
    let sb = open(home, name)?;
    if !sandbox::is_our_server(sb.info()) {
        return Err(Error::server(
            name,
            format!("is not running; start it with `versus server start {}`", sb.info().build),
        ));
    }
    let mut conn = sb.connect_root()?;
    let mut vars = admin::global_variables(&mut conn)?;
    if let Some(p) = like {
        vars.retain(|(k, _)| like_match(p, k));
    }
    if json {
        let map: serde_json::Map<String, serde_json::Value> = vars.into_iter().map(|(k, v)| (k, v.into())).collect();
        println!("{}", serde_json::to_string_pretty(&map).expect("json"));
    } else {
        let mut t = table(&["VARIABLE", "VALUE"]);
        for (k, v) in vars {
            t.add_row(vec![k, v]);
        }
        println!("{t}");
    }
    Ok(())
}

/// SQL LIKE matching (`%` any run, `_` one character), case-insensitive like MySQL's default collation.
fn like_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('%', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some(('_', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && go(rest, &t[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like_match("innodb_flush%", "innodb_flush_log_at_trx_commit"));
        assert!(like_match("%binlog", "sync_binlog"));
        assert!(like_match("log_bi_", "log_bin"));
        assert!(!like_match("log_bin", "log_bin_basename"));
        assert!(like_match("LOG_BIN", "log_bin"));
    }
}
