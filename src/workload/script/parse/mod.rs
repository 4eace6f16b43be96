//! Reading a script file.
//!
//! ```sql
//! -- @setup                       run once by prepare (schema and data), snapshotted
//! CREATE TABLE t (id INT PRIMARY KEY, v INT);
//! -- @transaction lookup          a transaction; without any, the whole file is one
//! -- @weight 3                    chosen 3 times as often as a transaction of weight 1
//! \set id random(1, 100000)
//! SELECT v FROM t WHERE id = :id;
//! \sleep 10 ms
//! ```
//!
//! Statements end with `;` (outside quotes and comments) and may span lines; `:name` is a variable,
//! sent as a prepared-statement parameter (or substituted as text with `--db-ps-mode=disable`).
//! Meta-commands take one line: `\set NAME EXPRESSION` (see [`super::expr`]), `\sleep EXPRESSION
//! [us|ms|s]`, and `\if EXPRESSION` / `\elif EXPRESSION` / `\else` / `\endif` (nested as deep as
//! needed, closed in the transaction that opened them); see [`meta`]. A variable must be set earlier in
//! the same transaction on every path that reaches its use, be `client_id` (the client's number from 0)
//! or `default_seed`, or be given with `--define NAME=VALUE`. Errors name the file, line and column.

mod meta;

use std::fmt;
use std::path::{Path, PathBuf};

use super::expr::{self, DEFAULT_SEED, Expr, Value};

/// A position in a file: the file (index into [`Script::files`]), line and column from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    /// The file.
    pub file: usize,
    /// Line.
    pub line: usize,
    /// Column (characters).
    pub col: usize,
}

/// An error in a script: `file:line:col: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The file as named.
    pub file: String,
    /// Where.
    pub loc: Loc,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.loc.line, self.loc.col, self.message)
    }
}

impl std::error::Error for ScriptError {}

/// One SQL statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// Number among the measured statements of the file, from 1 (0 for setup statements).
    pub number: usize,
    /// Where it starts.
    pub loc: Loc,
    /// The text as written (comments kept, surrounding blanks and the `;` removed).
    pub text: String,
    /// The text with `?` for every variable.
    pub sql: String,
    /// The variable slot of every `?`, in order.
    pub params: Vec<usize>,
    /// Index of its transaction (setup statements: none).
    pub transaction: Option<usize>,
}

impl Statement {
    /// True for the statements whose plan `EXPLAIN FORMAT=JSON` shows.
    pub fn explainable(&self) -> bool {
        let first: String = self.text.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        matches!(first.to_ascii_uppercase().as_str(), "SELECT" | "UPDATE" | "DELETE" | "INSERT" | "REPLACE")
    }

    /// The text with the values of `vars` in place of the variables.
    pub fn with_values(&self, vars: &[Value]) -> String {
        let mut out = String::with_capacity(self.sql.len() + 8 * self.params.len());
        let mut params = self.params.iter();
        for part in split_placeholders(&self.sql) {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Placeholder => {
                    if let Some(slot) = params.next() {
                        out.push_str(&vars[*slot].to_string());
                    }
                }
            }
        }
        out
    }
}

enum Part<'a> {
    Text(&'a str),
    Placeholder,
}

/// Splits the `?`s that [`parse`] put into a statement from the text around them (a `?` inside quotes
/// is text).
fn split_placeholders(sql: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in sql.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None if c == '?' => {
                out.push(Part::Text(&sql[start..i]));
                out.push(Part::Placeholder);
                start = i + 1;
            }
            None => {}
        }
    }
    out.push(Part::Text(&sql[start..]));
    out
}

/// A step of a transaction or of the setup.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptStep {
    /// `\set`.
    Set {
        /// The variable's slot.
        slot: usize,
        /// The value.
        expr: Expr,
        /// Where.
        loc: Loc,
    },
    /// `\sleep`.
    Sleep {
        /// The amount.
        expr: Expr,
        /// Microseconds per unit.
        unit_us: u64,
        /// Where.
        loc: Loc,
    },
    /// A statement (index into [`Script::statements`], or into [`Script::setup`] in the setup).
    Sql(usize),
    /// `\if` or `\elif`: when the condition is false, go on at step `otherwise` of the same list.
    Branch {
        /// The condition.
        cond: Expr,
        /// The step after the branch's body (the next `\elif`, the `\else` body or the `\endif`).
        otherwise: usize,
        /// Where.
        loc: Loc,
    },
    /// The end of a branch's body: go on at step `to`, after the `\endif`.
    Jump {
        /// The step after the `\endif`.
        to: usize,
    },
}

/// A transaction: what one event of the workload runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Transaction {
    /// Its name (`-- @transaction NAME`, or the file's name).
    pub name: String,
    /// Relative frequency.
    pub weight: u32,
    /// Its steps.
    pub steps: Vec<ScriptStep>,
    /// Where it starts.
    pub loc: Loc,
}

/// A parsed script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The file as named (the first one, for a script made of several).
    pub file: String,
    /// Every file, as named; [`Loc::file`] indexes it.
    pub files: Vec<String>,
    /// The variables by slot.
    pub vars: Vec<String>,
    /// Values given with `--define` (slot, value).
    pub defines: Vec<(usize, Value)>,
    /// The setup's statements.
    pub setup: Vec<Statement>,
    /// The setup's steps.
    pub setup_steps: Vec<ScriptStep>,
    /// The transactions.
    pub transactions: Vec<Transaction>,
    /// The measured statements, numbered from 1.
    pub statements: Vec<Statement>,
}

impl Script {
    /// `file:line:col` of `loc`.
    pub fn at(&self, loc: Loc) -> String {
        format!("{}:{}:{}", self.files.get(loc.file).map(String::as_str).unwrap_or(&self.file), loc.line, loc.col)
    }

    /// `file:line` of `loc`, the file without its directories.
    pub fn line_of(&self, loc: Loc) -> String {
        let f = self.files.get(loc.file).map(String::as_str).unwrap_or(&self.file);
        let name = Path::new(f).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| f.to_string());
        format!("{name}:{}", loc.line)
    }
}

/// The variable every client has: its number from 0.
pub const CLIENT_ID: &str = "client_id";

/// The slot of `client_id`.
pub const CLIENT_ID_SLOT: usize = 0;

/// The slot of `default_seed`, the seed of `hash*` and `permute` when their seed is left out: the
/// same for every client of a run; from `--rand-seed` when it is given, else drawn at random (as in
/// pgbench), unless `--define default_seed=N` sets it.
pub const DEFAULT_SEED_SLOT: usize = 1;

/// Largest weight of a transaction.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// Reads and parses `path`; `weight` (from `FILE@W`) multiplies the file's weights.
pub fn load(path: &Path, weight: u32, defines: &[(String, Value)]) -> Result<(Script, String), ScriptError> {
    let file = path.display().to_string();
    let text = crate::input::read_text_reason(path).map_err(|why| ScriptError {
        file: file.clone(),
        loc: Loc { file: 0, line: 1, col: 1 },
        message: format!("the script: {why}"),
    })?;
    let mut s = parse(&file, &text, defines)?;
    for t in &mut s.transactions {
        t.weight = t.weight.saturating_mul(weight).min(MAX_WEIGHT);
    }
    Ok((s, text))
}

/// Splits `FILE@W` into the file and its weight (1 without `@`; 0 is refused).
pub fn file_and_weight(arg: &str) -> Result<(PathBuf, u32), String> {
    match arg.rsplit_once('@') {
        Some((f, w)) if !f.is_empty() && w.chars().all(|c| c.is_ascii_digit()) && !w.is_empty() => {
            let n: u32 = w.parse().map_err(|_| format!("{arg}: the weight after @ is too large"))?;
            if n == 0 {
                return Err(format!(
                    "{arg}: the weight after @ must be at least 1 (at 0 the file would never run); leave the file out instead"
                ));
            }
            if n > MAX_WEIGHT {
                return Err(format!("{arg}: the weight after @ must be at most {MAX_WEIGHT}"));
            }
            Ok((PathBuf::from(f), n))
        }
        _ => Ok((PathBuf::from(arg), 1)),
    }
}

/// Parses script `text` of `file`.
pub fn parse(file: &str, text: &str, defines: &[(String, Value)]) -> Result<Script, ScriptError> {
    let mut p = Reader {
        file: file.to_string(),
        script: Script {
            file: file.to_string(),
            files: vec![file.to_string()],
            vars: vec![CLIENT_ID.to_string(), DEFAULT_SEED.to_string()],
            defines: Vec::new(),
            setup: Vec::new(),
            setup_steps: Vec::new(),
            transactions: Vec::new(),
            statements: Vec::new(),
        },
        section: Section::Start,
        known: Vec::new(),
        defined: vec![CLIENT_ID.to_string(), DEFAULT_SEED.to_string()],
        open: None,
        ifs: Vec::new(),
    };
    for (name, v) in defines {
        let slot = p.slot(name);
        p.script.defines.push((slot, *v));
        p.defined.push(name.clone());
    }
    for (i, line) in text.lines().enumerate() {
        p.line(i + 1, line)?;
    }
    p.finish_statement(Loc { file: 0, line: text.lines().count().max(1), col: 1 }, true)?;
    p.close_section()?;
    p.finish(text)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Before any directive: lines belong to the implicit transaction.
    Start,
    Setup,
    Transaction,
}

/// A statement being read.
struct Open {
    loc: Loc,
    text: String,
    sql: String,
    params: Vec<usize>,
    /// Scanner state carried across lines.
    state: Scan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Code,
    Quote(char),
    BlockComment,
}

struct Reader {
    file: String,
    script: Script,
    section: Section,
    /// Variables set so far in the current transaction (or the setup).
    known: Vec<String>,
    /// Defined everywhere: `client_id` and the `--define`s.
    defined: Vec<String>,
    open: Option<Open>,
    /// The `\if`s open in the current transaction (or the setup), innermost last.
    ifs: Vec<meta::If>,
}

impl Reader {
    fn err(&self, loc: Loc, message: impl Into<String>) -> ScriptError {
        ScriptError { file: self.file.clone(), loc, message: message.into() }
    }

    fn slot(&mut self, name: &str) -> usize {
        match self.script.vars.iter().position(|v| v == name) {
            Some(i) => i,
            None => {
                self.script.vars.push(name.to_string());
                self.script.vars.len() - 1
            }
        }
    }

    /// The slot of a variable used at `loc`, which must be known there.
    fn use_var(&mut self, name: &str) -> Result<usize, String> {
        if self.known.iter().any(|k| k == name) || self.defined.iter().any(|k| k == name) {
            return Ok(self.slot(name));
        }
        Err(format!(
            "unknown variable :{name}; set it earlier in this {} with \\set {name} …, or give it with --define {name}=VALUE",
            if self.section == Section::Setup { "setup" } else { "transaction" }
        ))
    }

    fn current_steps(&mut self, loc: Loc) -> &mut Vec<ScriptStep> {
        if self.section == Section::Setup {
            return &mut self.script.setup_steps;
        }
        if self.script.transactions.is_empty() {
            let name = Path::new(&self.file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.file.clone());
            self.script.transactions.push(Transaction { name, weight: 1, steps: Vec::new(), loc });
        }
        &mut self.script.transactions.last_mut().expect("pushed above").steps
    }

    fn line(&mut self, n: usize, line: &str) -> Result<(), ScriptError> {
        let chars: Vec<char> = line.chars().collect();
        let first = chars.iter().position(|c| !c.is_whitespace());
        if self.open.is_none() {
            let Some(first) = first else { return Ok(()) };
            let rest: String = chars[first..].iter().collect();
            let loc = Loc { file: 0, line: n, col: first + 1 };
            if let Some(d) = rest.strip_prefix("--") {
                let d = d.trim_start();
                if let Some(directive) = d.strip_prefix('@') {
                    return self.directive(loc, directive.trim_end());
                }
                return Ok(());
            }
            if rest.starts_with('\\') {
                return self.meta(loc, &rest);
            }
            return self.sql(n, &chars, first);
        }
        self.sql(n, &chars, 0)
    }

    /// Scans SQL from `chars[from..]` of line `n`, continuing an open statement.
    fn sql(&mut self, n: usize, chars: &[char], from: usize) -> Result<(), ScriptError> {
        let mut i = from;
        while i < chars.len() {
            if self.open.is_none() {
                // Between statements on one line: blanks and comments only, else a new statement.
                while i < chars.len() && chars[i].is_whitespace() {
                    i += 1;
                }
                if i >= chars.len() || (chars[i] == '-' && chars.get(i + 1) == Some(&'-')) {
                    return Ok(());
                }
                self.open = Some(Open {
                    loc: Loc { file: 0, line: n, col: i + 1 },
                    text: String::new(),
                    sql: String::new(),
                    params: Vec::new(),
                    state: Scan::Code,
                });
            }
            let mut o = self.open.take().expect("opened above");
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            let mut ended = false;
            match o.state {
                Scan::Quote(q) => {
                    if c == '\\' && q != '`' {
                        o.text.push(c);
                        o.sql.push(c);
                        if let Some(nc) = next {
                            o.text.push(nc);
                            o.sql.push(nc);
                            i += 1;
                        }
                    } else {
                        if c == q {
                            o.state = Scan::Code;
                        }
                        o.text.push(c);
                        o.sql.push(c);
                    }
                }
                Scan::BlockComment => {
                    if c == '*' && next == Some('/') {
                        o.state = Scan::Code;
                        o.text.push_str("*/");
                        o.sql.push_str("*/");
                        i += 1;
                    } else {
                        o.text.push(c);
                        o.sql.push(c);
                    }
                }
                Scan::Code => match c {
                    '\'' | '"' | '`' => {
                        o.state = Scan::Quote(c);
                        o.text.push(c);
                        o.sql.push(c);
                    }
                    '/' if next == Some('*') => {
                        o.state = Scan::BlockComment;
                        o.text.push_str("/*");
                        o.sql.push_str("/*");
                        i += 1;
                    }
                    '-' if next == Some('-') => {
                        // A comment to the end of the line.
                        let rest: String = chars[i..].iter().collect();
                        o.text.push_str(&rest);
                        o.sql.push_str(&rest);
                        self.open = Some(o);
                        break;
                    }
                    '#' => {
                        let rest: String = chars[i..].iter().collect();
                        o.text.push_str(&rest);
                        o.sql.push_str(&rest);
                        self.open = Some(o);
                        break;
                    }
                    ';' => ended = true,
                    ':' if next.is_some_and(|x| x.is_ascii_alphabetic() || x == '_') && !o.sql.ends_with(':') => {
                        let start = i;
                        let mut j = i + 1;
                        while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                            j += 1;
                        }
                        let name: String = chars[i + 1..j].iter().collect();
                        let slot = match self.use_var(&name) {
                            Ok(s) => s,
                            Err(m) => return Err(self.err(Loc { file: 0, line: n, col: start + 1 }, m)),
                        };
                        o.text.push_str(&chars[i..j].iter().collect::<String>());
                        o.sql.push('?');
                        o.params.push(slot);
                        i = j - 1;
                    }
                    '\\' if [&['g', 's', 'e', 't'][..], &['a', 's', 'e', 't'][..]]
                        .iter()
                        .any(|w| chars.get(i + 1..i + 5) == Some(*w)) =>
                    {
                        return Err(self.err(Loc { file: 0, line: n, col: i + 1 }, meta::GSET_REFUSED));
                    }
                    '?' => {
                        return Err(self.err(
                            Loc { file: 0, line: n, col: i + 1 },
                            "a '?' outside quotes; write a variable (:name) where a value goes",
                        ));
                    }
                    _ => {
                        o.text.push(c);
                        o.sql.push(c);
                    }
                },
            }
            i += 1;
            self.open = Some(o);
            if ended {
                self.finish_statement(Loc { file: 0, line: n, col: i }, false)?;
            }
        }
        if let Some(o) = self.open.as_mut() {
            o.text.push('\n');
            o.sql.push('\n');
        }
        Ok(())
    }

    fn finish_statement(&mut self, at: Loc, at_end: bool) -> Result<(), ScriptError> {
        let Some(o) = self.open.take() else { return Ok(()) };
        if at_end && o.state != Scan::Code {
            let what = if o.state == Scan::BlockComment { "a /* comment" } else { "a quoted string" };
            return Err(self.err(o.loc, format!("{what} that never ends")));
        }
        let text = o.text.trim().to_string();
        if text.is_empty() {
            return Err(self.err(at, "an empty statement (a ';' with nothing before it)"));
        }
        let mut st = Statement {
            number: 0,
            loc: o.loc,
            text,
            sql: o.sql.trim().to_string(),
            params: o.params,
            transaction: None,
        };
        if self.section == Section::Setup {
            self.script.setup.push(st);
            let i = self.script.setup.len() - 1;
            self.script.setup_steps.push(ScriptStep::Sql(i));
        } else {
            self.current_steps(o.loc);
            st.transaction = Some(self.script.transactions.len() - 1);
            st.number = self.script.statements.len() + 1;
            self.script.statements.push(st);
            let i = self.script.statements.len() - 1;
            self.current_steps(o.loc).push(ScriptStep::Sql(i));
        }
        Ok(())
    }

    fn finish(self, text: &str) -> Result<Script, ScriptError> {
        let end = Loc { file: 0, line: text.lines().count().max(1), col: 1 };
        if self.script.statements.is_empty() {
            let why = if text.trim().is_empty() { "the script is empty" } else { "the script has no statement to run" };
            return Err(self.err(
                if text.trim().is_empty() { Loc { file: 0, line: 1, col: 1 } } else { end },
                format!("{why}; write at least one SQL statement ending in ';' outside the setup"),
            ));
        }
        for t in &self.script.transactions {
            if !t.steps.iter().any(|s| matches!(s, ScriptStep::Sql(_))) {
                return Err(self.err(t.loc, format!("transaction '{}' has no SQL statement", t.name)));
            }
        }
        if self.script.transactions.iter().all(|t| t.weight == 0) {
            return Err(
                self.err(self.script.transactions[0].loc, "every transaction has weight 0; give one a weight above 0")
            );
        }
        Ok(self.script)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod total;
