//! Reading a script is total: any text gives a script or one line naming `file:line:col`, never a
//! panic or a stack overflow, and what parses also evaluates without one.

use super::*;
use crate::workload::script::eval::eval;
use crate::workload::script::expr::{MAX_HEIGHT, MAX_NESTING};
use crate::workload::script::random::Rng;
use proptest::prelude::*;

/// Runs `f` on a thread with a small stack (a recursion without a bound would overflow it).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(1024 * 1024).spawn(f).expect("spawn").join().expect("no panic")
}

fn read(text: String) -> Result<Script, String> {
    on_small_stack(move || parse("deep.sql", &text, &[]).map_err(|e| e.to_string()))
}

/// Evaluates every `\set` of `s` (with zero for variables not yet set).
fn evaluate_all(s: &Script) {
    let mut vars = vec![Value::Int(0); s.vars.len()];
    let mut rng = Rng::seeded(7);
    for t in &s.transactions {
        for step in &t.steps {
            if let ScriptStep::Set { slot, expr, .. } = step
                && let Ok(v) = eval(expr, &vars, &mut rng)
            {
                vars[*slot] = v;
            }
        }
    }
}

#[test]
fn deep_nesting_is_one_line_naming_the_place_not_a_stack_overflow() {
    let n = 3000;
    let cases = [
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1", "-".repeat(n)),
        format!("{}1", "~ ".repeat(n)),
        format!("{}1", "not ".repeat(n)),
        format!("{}1{}", "abs(".repeat(n), ")".repeat(n)),
        format!("{}1", "(1 + ".repeat(n)),
    ];
    for e in cases {
        let err = read(format!("SELECT 1;\n\\set x {e}\nSELECT :x;\n")).unwrap_err();
        assert!(err.starts_with("deep.sql:2:"), "{err}");
        assert!(err.contains(&format!("nests deeper than {MAX_NESTING} levels")), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
    let long = format!("\\if 1{}\n\\endif\nSELECT 1;\n", " + 1".repeat(100_000));
    let err = read(long).unwrap_err();
    assert!(err.starts_with("deep.sql:1:"), "{err}");
    assert!(err.contains(&format!("more than {MAX_HEIGHT} operators deep")), "{err}");
}

#[test]
fn the_deepest_allowed_expressions_parse_and_evaluate_on_a_small_stack() {
    let nested = format!("{}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    let calls = format!("{}-1{}", "abs(".repeat(MAX_NESTING - 1), ")".repeat(MAX_NESTING - 1));
    let chain = format!("1{}", " + 1".repeat(MAX_HEIGHT - 1));
    let text = format!("\\set a {nested}\n\\set b {calls}\n\\set c {chain}\nSELECT :a, :b, :c;\n");
    let vars = on_small_stack(move || {
        let s = parse("deep.sql", &text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut vars = vec![Value::Int(0); s.vars.len()];
        let mut rng = Rng::seeded(1);
        for step in &s.transactions[0].steps {
            if let ScriptStep::Set { slot, expr, .. } = step {
                vars[*slot] = eval(expr, &vars, &mut rng).expect("evaluates");
            }
        }
        let slot = |n: &str| s.vars.iter().position(|v| v == n).unwrap();
        [vars[slot("a")], vars[slot("b")], vars[slot("c")]]
    });
    assert_eq!(vars, [Value::Int(1), Value::Int(1), Value::Int(MAX_HEIGHT as i64)]);
    let one_more = format!("1{}", " + 1".repeat(MAX_HEIGHT));
    let err = read(format!("\\set c {one_more}\nSELECT :c;\n")).unwrap_err();
    assert!(err.contains("operators deep"), "{err}");
}

/// Pieces of near-valid scripts: meta-commands, expression tokens, SQL with placeholders and quotes.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "\\set x ",
        "\\set y ",
        "\\if ",
        "\\elif ",
        "\\else",
        "\\endif",
        "\\sleep ",
        " ms",
        "\n",
        " ",
        "(",
        ")",
        "1",
        "0",
        "-",
        "+",
        "*",
        "/",
        "%",
        ":x",
        ":y",
        ":z",
        "random(",
        "random_zipfian(",
        "permute(",
        "hash(",
        "least(",
        "pow(",
        ",",
        "not ",
        " and ",
        " or ",
        "~",
        "<<",
        ">>",
        "=",
        "<",
        "<>",
        "2.5",
        "1e308",
        "e",
        "9223372036854775807",
        "SELECT ",
        ":x",
        "'a;?'",
        ";",
        "-- @transaction t\n",
        "-- @weight ",
        "-- @setup\n",
        "\"",
        "`",
        "/*",
        "*/",
        "\\",
        "é",
        "\u{0}",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_text_parses_or_names_the_place(text in "\\PC{0,200}") {
        if let Err(e) = parse("app.sql", &text, &[]) {
            let msg = e.to_string();
            prop_assert!(msg.starts_with("app.sql:"), "{msg}");
            prop_assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }

    #[test]
    fn near_valid_scripts_parse_and_evaluate_or_name_the_place(
        pieces in prop::collection::vec(piece(), 0..60)
    ) {
        let text = pieces.concat();
        match parse("app.sql", &text, &[]) {
            Ok(s) => evaluate_all(&s),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("app.sql:"), "{msg}");
                prop_assert!(!msg.contains('\n'), "one line: {msg}");
            }
        }
    }
}
