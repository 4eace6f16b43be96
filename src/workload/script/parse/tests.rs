//! Tests of reading scripts.

use super::*;

fn parse_ok(text: &str) -> Script {
    parse("app.sql", text, &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> String {
    parse("app.sql", text, &[]).unwrap_err().to_string()
}

#[test]
fn a_plain_file_is_one_transaction_named_after_it() {
    let s = parse_ok(
        "\\set id random(1, 10)\nSELECT c FROM t\n  WHERE id = :id;\nUPDATE t SET v = v + 1 WHERE id = :id; -- bump\n",
    );
    assert_eq!(s.transactions.len(), 1);
    assert_eq!((s.transactions[0].name.as_str(), s.transactions[0].weight), ("app", 1));
    assert_eq!(s.statements.len(), 2);
    let st = &s.statements[0];
    assert_eq!((st.number, st.loc), (1, Loc { file: 0, line: 2, col: 1 }));
    assert_eq!(st.text, "SELECT c FROM t\n  WHERE id = :id");
    assert_eq!(st.sql, "SELECT c FROM t\n  WHERE id = ?");
    assert_eq!(st.params, vec![s.vars.iter().position(|v| v == "id").unwrap()]);
    assert_eq!(s.statements[1].loc, Loc { file: 0, line: 4, col: 1 });
    let mut vars = vec![Value::Int(0); s.vars.len()];
    vars[st.params[0]] = Value::Int(42);
    assert_eq!(st.with_values(&vars), "SELECT c FROM t\n  WHERE id = 42");
    assert!(st.explainable());
}

#[test]
fn setup_transactions_and_weights() {
    let s = parse_ok(
        "-- @setup\nCREATE TABLE t (id INT);\nINSERT INTO t VALUES (1), (2);\n-- @transaction a\n-- @weight 3\n\\set x random(1, 2)\nBEGIN;\nSELECT * FROM t WHERE id = :x AND note = 'a;b?:c';\nCOMMIT;\n-- @transaction b\nSELECT 1; SELECT 2;\n\\sleep 2 ms\n",
    );
    assert_eq!(s.setup.len(), 2);
    let names: Vec<(&str, u32)> = s.transactions.iter().map(|t| (t.name.as_str(), t.weight)).collect();
    assert_eq!(names, [("a", 3), ("b", 1)]);
    assert_eq!(s.statements.len(), 5);
    assert_eq!(s.statements[1].params.len(), 1, "quoted ; ? : are text");
    assert_eq!(s.statements[4].loc, Loc { file: 0, line: 11, col: 11 });
    assert!(matches!(s.transactions[1].steps.last(), Some(ScriptStep::Sleep { unit_us: 1000, .. })));
}

#[test]
fn errors_name_the_line_and_column() {
    let cases = [
        ("", "app.sql:1:1: the script is empty"),
        ("-- only a comment\n", "app.sql:1:1: the script has no statement to run"),
        ("SELECT :nope;", "app.sql:1:8: unknown variable :nope"),
        ("\\set a 1 +\nSELECT :a;", "app.sql:1:11: the expression ends too early"),
        ("\\set a rand(1, 2)\nSELECT :a;", "app.sql:1:8: unknown function 'rand'"),
        ("\\setrandom a 1 2\n", "app.sql:1:1: unknown meta-command \\setrandom"),
        ("-- @weigth 2\nSELECT 1;", "app.sql:1:1: unknown directive '-- @weigth'"),
        ("SELECT 'open;\n", "app.sql:1:1: a quoted string that never ends"),
        ("SELECT 1;;", "app.sql:1:10: an empty statement"),
        ("SELECT ? ;", "app.sql:1:8: a '?' outside quotes"),
        (
            "-- @transaction a\n\\set x 1\n-- @transaction b\nSELECT 1;\n",
            "app.sql:1:1: transaction 'a' has no SQL statement",
        ),
        ("-- @transaction a\n-- @weight 0\nSELECT 1;", "app.sql:1:1: every transaction has weight 0"),
        ("-- @transaction a\nSELECT 1;\n-- @transaction b\nSELECT :x;\n", "app.sql:4:8: unknown variable :x"),
    ];
    for (text, want) in cases {
        let e = parse_err(text);
        assert!(e.starts_with(want), "{text:?}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn defines_and_client_id_are_known_everywhere() {
    let s = parse("x.sql", "SELECT :client_id + :scale;", &[("scale".into(), Value::Int(10))]).unwrap();
    assert_eq!(s.statements[0].params.len(), 2);
    assert_eq!(s.defines.len(), 1);
}

#[test]
fn file_weights() {
    assert_eq!(file_and_weight("a.sql@3").unwrap(), (PathBuf::from("a.sql"), 3));
    assert_eq!(file_and_weight("a.sql").unwrap(), (PathBuf::from("a.sql"), 1));
    assert_eq!(file_and_weight("we@ird/a.sql").unwrap(), (PathBuf::from("we@ird/a.sql"), 1));
    assert!(file_and_weight("a.sql@9999999").is_err());
    let zero = file_and_weight("a.sql@0").unwrap_err();
    assert!(zero.starts_with("a.sql@0: the weight after @ must be at least 1"), "{zero}");
    assert!(file_and_weight("a.sql@00").is_err(), "any spelling of zero");
}

#[test]
fn conditionals_become_branches_and_jumps() {
    let s = parse_ok(
        "\\set r random(1, 10)\n\\if :r <= 3\nSELECT 1;\n\\elif :r <= 6\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n",
    );
    let steps = &s.transactions[0].steps;
    // 0 set, 1 branch, 2 sql 1, 3 jump, 4 branch, 5 sql 2, 6 jump, 7 sql 3, 8 sql 4
    assert!(matches!(steps[1], ScriptStep::Branch { otherwise: 4, .. }), "{steps:?}");
    assert!(matches!(steps[3], ScriptStep::Jump { to: 8 }));
    assert!(matches!(steps[4], ScriptStep::Branch { otherwise: 7, .. }));
    assert!(matches!(steps[6], ScriptStep::Jump { to: 8 }));
    assert_eq!(steps[8], ScriptStep::Sql(3));
    let nested = parse_ok("\\if 1\n\\if 0\nSELECT 1;\n\\endif\n\\endif\nSELECT 2;\n");
    let steps = &nested.transactions[0].steps;
    assert!(
        matches!(steps[0], ScriptStep::Branch { otherwise: 3, .. })
            && matches!(steps[1], ScriptStep::Branch { otherwise: 3, .. })
    );
}

#[test]
fn a_variable_is_known_after_endif_only_when_every_branch_set_it() {
    parse_ok("\\if 1\n\\set a 1\n\\else\n\\set a 2\n\\endif\nSELECT :a;\n");
    parse_ok("\\set a 0\n\\if 1\n\\set a 1\n\\endif\nSELECT :a;\n");
    let e = parse_err("\\if 1\n\\set a 1\n\\endif\nSELECT :a;\n");
    assert!(e.starts_with("app.sql:4:8: unknown variable :a"), "{e}");
    let e = parse_err("\\if 1\n\\set a 1\n\\elif 0\n\\set b 1\n\\else\n\\set a 3\n\\endif\nSELECT :a;\n");
    assert!(e.starts_with("app.sql:8:8: unknown variable :a"), "{e}");
    let e = parse_err("\\if 1\n\\set a 1\n\\else\nSELECT :a;\n\\endif\n");
    assert!(e.starts_with("app.sql:4:8: unknown variable :a"), "the else branch does not see the if's: {e}");
}

#[test]
fn conditional_and_refused_meta_command_errors() {
    let cases = [
        ("\\if 1\nSELECT 1;\n", "app.sql:1:1: \\if without its \\endif in this transaction"),
        (
            "-- @transaction a\n\\if 1\nSELECT 1;\n-- @transaction b\nSELECT 2;\n",
            "app.sql:2:1: \\if without its \\endif in this transaction",
        ),
        ("\\endif\nSELECT 1;\n", "app.sql:1:1: \\endif without an \\if before it"),
        ("\\if 1\n\\else\n\\elif 1\n\\endif\nSELECT 1;\n", "app.sql:3:1: \\elif after \\else"),
        ("\\if\nSELECT 1;\n", "app.sql:1:1: \\if needs a condition"),
        ("\\if 1\n\\else 2\n\\endif\nSELECT 1;\n", "app.sql:2:1: \\else takes nothing after it, not '2'"),
        ("\\if :x = 1\n\\endif\nSELECT 1;\n", "app.sql:1:5: unknown variable :x"),
        ("\\if 1 +\n\\endif\nSELECT 1;\n", "app.sql:1:8: the expression ends too early"),
        ("\\shell echo hi\nSELECT 1;\n", "app.sql:1:1: \\shell is refused: versus does not run programs"),
        ("\\setshell x echo 1\nSELECT 1;\n", "app.sql:1:1: \\setshell is refused"),
        ("\\sleep 1 +\nSELECT 1;\n", "app.sql:1:11: the expression ends too early"),
        (
            "SELECT 1 AS one \\gset\n",
            "app.sql:1:17: \\gset and \\aset (a result row into variables) are not supported yet",
        ),
        ("SELECT 1 AS one;\n\\aset\n", "app.sql:2:1: \\gset and \\aset"),
    ];
    for (text, want) in cases {
        let e = parse_err(text);
        assert!(e.starts_with(want), "{text:?}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn default_seed_is_known_everywhere() {
    let s = parse_ok("\\set k hash(:client_id) + permute(1, 10) + :default_seed\nSELECT :k;\n");
    assert_eq!(s.vars[DEFAULT_SEED_SLOT], "default_seed");
}
