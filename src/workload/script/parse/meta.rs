//! The directives (`-- @setup`, `-- @transaction`, `-- @weight`) and meta-commands of a script.
//!
//! `\if` / `\elif` / `\else` / `\endif` become [`ScriptStep::Branch`] and [`ScriptStep::Jump`] steps of the
//! transaction's flat list: an `\if` or `\elif` whose condition is false goes on after its body, the end
//! of a body jumps past the `\endif`. A variable is known after the `\endif` only when every branch
//! (an absent `\else` counting as an empty one) set it.

use super::{Loc, MAX_WEIGHT, Reader, ScriptError, ScriptStep, Section, Transaction, expr};

/// The error of `\gset` and `\aset`, which versus does not run yet.
pub(super) const GSET_REFUSED: &str =
    "\\gset and \\aset (a result row into variables) are not supported yet; draw the values with \\set";

/// An open `\if`.
pub(super) struct If {
    /// Where the `\if` is.
    loc: Loc,
    /// The branch step whose `otherwise` is still to be filled (none after `\else`).
    branch: Option<usize>,
    /// The jumps to the step after the `\endif`.
    jumps: Vec<usize>,
    /// An `\else` was seen.
    has_else: bool,
    /// The variables known at the `\if`.
    before: Vec<String>,
    /// The variables every finished branch set (with those known before).
    common: Option<Vec<String>>,
}

impl Reader {
    pub(super) fn directive(&mut self, loc: Loc, d: &str) -> Result<(), ScriptError> {
        let (word, arg) = d.split_once(char::is_whitespace).map(|(w, a)| (w, a.trim())).unwrap_or((d, ""));
        match word {
            "setup" => {
                if self.section == Section::Setup || !self.script.setup_steps.is_empty() {
                    return Err(self.err(loc, "a second -- @setup; a script has one setup section"));
                }
                if !self.script.transactions.is_empty() {
                    return Err(self.err(loc, "-- @setup must come before the transactions"));
                }
                self.close_section()?;
                self.section = Section::Setup;
                self.known.clear();
            }
            "transaction" => {
                if arg.is_empty() {
                    return Err(self.err(loc, "-- @transaction needs a name, e.g. -- @transaction checkout"));
                }
                if self.script.transactions.iter().any(|t| t.name == arg) {
                    return Err(self.err(loc, format!("transaction '{arg}' is defined twice")));
                }
                let implicit_in_use = self.section == Section::Start && !self.script.transactions.is_empty();
                if implicit_in_use {
                    return Err(self.err(
                        loc,
                        "statements before the first -- @transaction; put them under a -- @transaction line too",
                    ));
                }
                self.close_section()?;
                self.section = Section::Transaction;
                self.known.clear();
                self.script.transactions.push(Transaction { name: arg.to_string(), weight: 1, steps: Vec::new(), loc });
            }
            "weight" => {
                let w: u32 = arg.parse().ok().filter(|w| *w <= MAX_WEIGHT).ok_or_else(|| {
                    self.err(loc, format!("-- @weight takes a whole number from 0 to {MAX_WEIGHT}, not '{arg}'"))
                })?;
                if self.section == Section::Setup {
                    return Err(self.err(loc, "-- @weight belongs to a transaction, not to the setup"));
                }
                self.current_steps(loc);
                let t = self.script.transactions.last_mut().expect("made by current_steps");
                if !t.steps.is_empty() {
                    return Err(self.err(loc, "-- @weight must come before the transaction's first step"));
                }
                t.weight = w;
            }
            other => {
                return Err(self.err(
                    loc,
                    format!("unknown directive '-- @{other}'; use -- @setup, -- @transaction NAME or -- @weight N"),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn meta(&mut self, loc: Loc, text: &str) -> Result<(), ScriptError> {
        let body = &text[1..];
        let (cmd, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        // Columns of `rest` from the start of the line.
        let rest_col =
            loc.col + 1 + cmd.chars().count() + (body.chars().count() - cmd.chars().count() - rest.chars().count());
        let expr_err = |r: &Reader, off: usize, e: expr::ParseError| {
            r.err(Loc { file: 0, line: loc.line, col: off + e.col }, e.message)
        };
        match cmd {
            "set" => {
                let rest_trim = rest.trim_start();
                let lead = rest.chars().count() - rest_trim.chars().count();
                let (name, e) = rest_trim.split_once(char::is_whitespace).unwrap_or((rest_trim, ""));
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(
                        self.err(loc, "\\set needs a variable name and an expression, e.g. \\set id random(1, 1000)")
                    );
                }
                if e.trim().is_empty() {
                    return Err(self.err(loc, format!("\\set {name} needs an expression")));
                }
                let e_col =
                    rest_col + lead + name.chars().count() + (e.chars().count() - e.trim_start().chars().count()) + 1;
                let parsed = expr::parse(e.trim(), &mut |v| self.use_var(v)).map_err(|x| expr_err(self, e_col, x))?;
                let slot = self.slot(name);
                if !self.known.iter().any(|k| k == name) {
                    self.known.push(name.to_string());
                }
                self.current_steps(loc).push(ScriptStep::Set { slot, expr: parsed, loc });
            }
            "sleep" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let (amount, unit_us) = match words.as_slice() {
                    [.., u @ ("us" | "ms" | "s")] if words.len() >= 2 => {
                        let unit = match *u {
                            "us" => 1,
                            "ms" => 1_000,
                            _ => 1_000_000,
                        };
                        (rest.trim_end().trim_end_matches(u).trim(), unit)
                    }
                    [] => return Err(self.err(loc, "\\sleep needs an amount, e.g. \\sleep 10 ms")),
                    _ => (rest.trim(), 1_000_000),
                };
                let a_col = rest_col + (rest.chars().count() - rest.trim_start().chars().count());
                let parsed = expr::parse(amount, &mut |v| self.use_var(v)).map_err(|x| expr_err(self, a_col, x))?;
                self.current_steps(loc).push(ScriptStep::Sleep { expr: parsed, unit_us, loc });
            }
            "if" | "elif" | "else" | "endif" => self.conditional(loc, cmd, rest, rest_col)?,
            "gset" | "aset" => return Err(self.err(loc, GSET_REFUSED)),
            "shell" | "setshell" => {
                return Err(self.err(
                    loc,
                    format!(
                        "\\{cmd} is refused: versus does not run programs from a script (a program per transaction would be timed as the client's work, and a SQL file should not be able to run commands); compute the value with \\set"
                    ),
                ));
            }
            other => {
                return Err(self.err(
                    loc,
                    format!(
                        "unknown meta-command \\{other}; versus knows \\set, \\sleep, \\if, \\elif, \\else and \\endif"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `\if`, `\elif`, `\else` or `\endif` at `loc`, its expression in `rest` (from column `rest_col`).
    fn conditional(&mut self, loc: Loc, cmd: &str, rest: &str, rest_col: usize) -> Result<(), ScriptError> {
        let takes_expr = matches!(cmd, "if" | "elif");
        if takes_expr && rest.trim().is_empty() {
            return Err(self.err(loc, format!("\\{cmd} needs a condition, e.g. \\{cmd} :id % 10 = 0")));
        }
        if !takes_expr && !rest.trim().is_empty() {
            return Err(self.err(loc, format!("\\{cmd} takes nothing after it, not '{}'", rest.trim())));
        }
        let cond = if takes_expr {
            let a_col = rest_col + (rest.chars().count() - rest.trim_start().chars().count());
            let parsed = expr::parse(rest.trim(), &mut |v| self.use_var(v))
                .map_err(|x| self.err(Loc { file: 0, line: loc.line, col: a_col + x.col }, x.message))?;
            Some(parsed)
        } else {
            None
        };
        if cmd == "if" {
            let at = self.current_steps(loc).len();
            self.current_steps(loc).push(ScriptStep::Branch { cond: cond.expect("parsed above"), otherwise: 0, loc });
            let before = self.known.clone();
            self.ifs.push(If { loc, branch: Some(at), jumps: Vec::new(), has_else: false, before, common: None });
            return Ok(());
        }
        let Some(mut open) = self.ifs.pop() else {
            return Err(self.err(loc, format!("\\{cmd} without an \\if before it")));
        };
        if open.has_else && cmd != "endif" {
            return Err(self.err(loc, format!("\\{cmd} after \\else; the \\else branch must come last")));
        }
        // The branch that just ended: what it set joins what the others set.
        let set_here = std::mem::replace(&mut self.known, open.before.clone());
        open.common = Some(match open.common.take() {
            None => set_here,
            Some(c) => c.into_iter().filter(|v| set_here.contains(v)).collect(),
        });
        if cmd == "endif" {
            let end = self.current_steps(loc).len();
            let steps = self.current_steps(loc);
            if let Some(b) = open.branch
                && let ScriptStep::Branch { otherwise, .. } = &mut steps[b]
            {
                *otherwise = end;
            }
            for j in &open.jumps {
                steps[*j] = ScriptStep::Jump { to: end };
            }
            let common = open.common.unwrap_or_default();
            self.known = if open.has_else { common } else { open.before };
            return Ok(());
        }
        // \elif or \else: the body before it jumps past the \endif; the pending branch goes on here.
        let steps = self.current_steps(loc);
        open.jumps.push(steps.len());
        steps.push(ScriptStep::Jump { to: 0 });
        let here = steps.len();
        if let Some(b) = open.branch
            && let ScriptStep::Branch { otherwise, .. } = &mut steps[b]
        {
            *otherwise = here;
        }
        if let Some(cond) = cond {
            open.branch = Some(here);
            steps.push(ScriptStep::Branch { cond, otherwise: 0, loc });
        } else {
            open.branch = None;
            open.has_else = true;
        }
        self.ifs.push(open);
        Ok(())
    }

    /// The end of a transaction, of the setup or of the file: every `\if` must be closed.
    pub(super) fn close_section(&mut self) -> Result<(), ScriptError> {
        match self.ifs.first() {
            Some(open) => Err(self.err(
                open.loc,
                format!(
                    "\\if without its \\endif{}",
                    if self.section == Section::Setup { " in the setup" } else { " in this transaction" }
                ),
            )),
            None => Ok(()),
        }
    }
}
