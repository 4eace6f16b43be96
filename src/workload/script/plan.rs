//! The server's plan of a statement: `EXPLAIN FORMAT=JSON` as stored, and its shape, the part that
//! says how the rows are found (per table: the access type and the index), which is what a changed plan
//! means; costs and row estimates are left out, as they move with the data and the version.

use mysql::prelude::Queryable;

/// `EXPLAIN FORMAT=JSON sql` on `conn`: the plan, or `{"error": …}` when the server cannot explain it.
pub fn explain(conn: &mut mysql::Conn, sql: &str) -> serde_json::Value {
    let q = format!("EXPLAIN FORMAT=JSON {sql}");
    match conn.query_first::<String, _>(&q) {
        Ok(Some(text)) => serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        Ok(None) => serde_json::json!({ "error": "EXPLAIN returned nothing" }),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    }
}

/// The shape of a plan: `table:access_type:key` for every table in the plan, in the plan's order, with
/// the indexes an index merge uses; `None` for a plan that is an error.
pub fn shape(plan: &serde_json::Value) -> Option<String> {
    if plan.get("error").is_some() || plan.is_string() {
        return None;
    }
    let mut parts = Vec::new();
    walk(plan, &mut parts);
    Some(parts.join(" "))
}

fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(name) = m.get("table_name").and_then(|t| t.as_str()) {
                let access = m.get("access_type").and_then(|a| a.as_str()).unwrap_or("?");
                let mut keys = Vec::new();
                if let Some(k) = m.get("key").and_then(|k| k.as_str()) {
                    keys.push(k.to_string());
                }
                if let Some(merge) = m.get("index_merge") {
                    collect_keys(merge, &mut keys);
                }
                out.push(format!("{name}:{access}:{}", if keys.is_empty() { "-".into() } else { keys.join("+") }));
            }
            for (k, x) in m {
                if k != "index_merge" {
                    walk(x, out);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, out);
            }
        }
        _ => {}
    }
}

fn collect_keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(k) = m.get("key").and_then(|k| k.as_str()) {
                out.push(k.to_string());
            }
            for x in m.values() {
                collect_keys(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_keeps_access_and_index_and_drops_costs() {
        let a: serde_json::Value = serde_json::from_str(
            r#"{"query_block":{"select_id":1,"cost":0.01,"nested_loop":[{"table":{"table_name":"t","access_type":"ref","key":"k","rows":3}}]}}"#,
        )
        .unwrap();
        let b: serde_json::Value = serde_json::from_str(
            r#"{"query_block":{"select_id":1,"cost":9.5,"table":{"table_name":"t","access_type":"ref","key":"k","rows":40}}}"#,
        )
        .unwrap();
        assert_eq!(shape(&a).as_deref(), Some("t:ref:k"));
        assert_eq!(shape(&a), shape(&b), "costs and row estimates do not change the shape");
        let merge: serde_json::Value = serde_json::from_str(
            r#"{"query_block":{"table":{"table_name":"t","access_type":"index_merge","index_merge":{"sort_union":[{"range":{"key":"a"}},{"range":{"key":"b"}}]}}}}"#,
        )
        .unwrap();
        assert_eq!(shape(&merge).as_deref(), Some("t:index_merge:a+b"));
        let all: serde_json::Value =
            serde_json::from_str(r#"{"query_block":{"table":{"table_name":"t","access_type":"ALL"}}}"#).unwrap();
        assert_ne!(shape(&merge), shape(&all));
        assert_eq!(shape(&serde_json::json!({"error": "x"})), None);
    }
}
