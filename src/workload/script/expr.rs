//! `\set` and `\if` expressions with pgbench's meanings: integer and double constants, `true` and
//! `false`, `:variables`, `+ - * / %`, the bitwise `& | # << >> ~`, the comparisons `= <> != < <= > >=`,
//! `and`, `or`, `not`, with pgbench's precedence (lowest first: or, and, not, comparisons, bitwise,
//! `+ -`, `* / %`, unary), parentheses and pgbench's functions (`random`, `random_gaussian`,
//! `random_exponential`, `random_zipfian`, `hash`, `hash_murmur2`, `hash_fnv1a`, `permute`, `abs`,
//! `least`, `greatest`, `int`, `double`, `sqrt`, `pow`, `ln`, `exp`, `pi`, `mod`). Integer arithmetic
//! stays integer (division truncates toward zero, as in pgbench); a double operand makes the result a
//! double. A comparison or logical operator gives 1 or 0 (what MySQL's TRUE and FALSE are); a value is
//! true when it is not zero. The seed of `hash*` and `permute`, when left out, is `:default_seed`.

/// The variable that seeds `hash*` and `permute` when their seed is left out (pgbench's name).
pub const DEFAULT_SEED: &str = "default_seed";

pub use super::value::Value;
pub(super) use super::value::truth_value;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `=`
    Eq,
    /// `<>` or `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `and` (the right side is evaluated only when the left is true)
    And,
    /// `or` (the right side is evaluated only when the left is false)
    Or,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `#`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// A function of `\set` expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `random(lb, ub)`: uniform integer in [lb, ub].
    Random,
    /// `random_gaussian(lb, ub, parameter)`.
    Gaussian,
    /// `random_exponential(lb, ub, parameter)`.
    Exponential,
    /// `random_zipfian(lb, ub, parameter)`.
    Zipfian,
    /// `abs(x)`
    Abs,
    /// `least(a, …)`
    Least,
    /// `greatest(a, …)`
    Greatest,
    /// `int(x)`: toward zero.
    Int,
    /// `double(x)`
    Double,
    /// `sqrt(x)`
    Sqrt,
    /// `pow(x, y)` / `power(x, y)`
    Pow,
    /// `ln(x)`
    Ln,
    /// `exp(x)`
    Exp,
    /// `pi()`
    Pi,
    /// `mod(a, b)`
    Mod,
    /// `hash(a [, seed])`, `hash_murmur2(a [, seed])`
    Murmur2,
    /// `hash_fnv1a(a [, seed])`
    Fnv1a,
    /// `permute(i, size [, seed])`
    Permute,
}

impl Func {
    /// The function of a name, with its argument counts (min, max).
    fn of(name: &str) -> Option<(Func, usize, usize)> {
        Some(match name.to_ascii_lowercase().as_str() {
            "random" => (Func::Random, 2, 2),
            "random_gaussian" => (Func::Gaussian, 3, 3),
            "random_exponential" => (Func::Exponential, 3, 3),
            "random_zipfian" => (Func::Zipfian, 3, 3),
            "abs" => (Func::Abs, 1, 1),
            "least" => (Func::Least, 1, usize::MAX),
            "greatest" => (Func::Greatest, 1, usize::MAX),
            "int" => (Func::Int, 1, 1),
            "double" => (Func::Double, 1, 1),
            "sqrt" => (Func::Sqrt, 1, 1),
            "pow" | "power" => (Func::Pow, 2, 2),
            "ln" => (Func::Ln, 1, 1),
            "exp" => (Func::Exp, 1, 1),
            "pi" => (Func::Pi, 0, 0),
            "mod" => (Func::Mod, 2, 2),
            "hash" | "hash_murmur2" => (Func::Murmur2, 1, 2),
            "hash_fnv1a" => (Func::Fnv1a, 1, 2),
            "permute" => (Func::Permute, 2, 3),
            _ => return None,
        })
    }
}

/// A parsed expression; variables are slots of the script's variable table.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// A variable, by slot.
    Var(usize),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `not x`
    Not(Box<Expr>),
    /// `~x`
    BitNot(Box<Expr>),
    /// A binary operation.
    Bin(Op, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(Func, Vec<Expr>),
}

/// A parse error: the column (0-based, in characters of the expression) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Where, counted from the start of the expression.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

/// How deep parentheses, function calls and unary operators may nest: the parser recurses once per
/// level, so a hostile `((((…))))` must end in an error, not a stack overflow.
pub const MAX_NESTING: usize = 64;

/// How tall the parsed tree may be (a chain `1+1+…` is one level per operator): evaluating and
/// dropping the tree recurse once per level.
pub const MAX_HEIGHT: usize = 256;

/// Parses `text`; `var` resolves a variable name to its slot (or says why it cannot).
pub fn parse(text: &str, var: &mut dyn FnMut(&str) -> Result<usize, String>) -> Result<Expr, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { s: &chars, i: 0, var, nesting: 0, height: 0 };
    let e = p.or()?;
    p.ws();
    if p.i < chars.len() {
        return Err(p.err(format!("unexpected '{}' after the expression", chars[p.i])));
    }
    Ok(e)
}

struct Parser<'a, 'v> {
    s: &'a [char],
    i: usize,
    var: &'v mut dyn FnMut(&str) -> Result<usize, String>,
    /// Parentheses, calls and unary operators open around the current position.
    nesting: usize,
    /// The height of the expression the last parsing method returned.
    height: usize,
}

impl Parser<'_, '_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError { col: self.i, message: message.into() }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(self.err(format!(
                "the expression nests deeper than {MAX_NESTING} levels of parentheses, calls or unary operators; compute parts of it in earlier \\set lines"
            )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// Records `height` as the height of the expression being returned, if it is allowed.
    fn set_height(&mut self, height: usize) -> Result<(), ParseError> {
        if height > MAX_HEIGHT {
            return Err(self.err(format!(
                "the expression is more than {MAX_HEIGHT} operators deep; compute parts of it in earlier \\set lines"
            )));
        }
        self.height = height;
        Ok(())
    }

    /// `Bin(op, left, right)` where `left_height` is the left side's height and the right side was
    /// parsed last.
    fn bin(&mut self, op: Op, left: Expr, left_height: usize, right: Expr) -> Result<(Expr, usize), ParseError> {
        let h = left_height.max(self.height) + 1;
        self.set_height(h)?;
        Ok((Expr::Bin(op, Box::new(left), Box::new(right)), h))
    }

    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.s.get(self.i).copied()
    }

    /// The keyword `kw` (any case, not followed by a name character) is next: consumes it.
    fn keyword(&mut self, kw: &str) -> bool {
        self.ws();
        let n = kw.len();
        let word: String = self.s.iter().skip(self.i).take(n).collect();
        let after = self.s.get(self.i + n);
        if word.eq_ignore_ascii_case(kw) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
            self.i += n;
            return true;
        }
        false
    }

    /// The operator `op` is next (and not the start of a longer one in `unless`): consumes it.
    fn symbol(&mut self, op: &str, unless: &[&str]) -> bool {
        self.ws();
        let at = |t: &str| t.chars().enumerate().all(|(k, c)| self.s.get(self.i + k) == Some(&c));
        if at(op) && !unless.iter().any(|u| at(u)) {
            self.i += op.chars().count();
            return true;
        }
        false
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.and()?;
        let mut h = self.height;
        while self.keyword("or") {
            let right = self.and()?;
            (left, h) = self.bin(Op::Or, left, h, right)?;
        }
        self.height = h;
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.not()?;
        let mut h = self.height;
        while self.keyword("and") {
            let right = self.not()?;
            (left, h) = self.bin(Op::And, left, h, right)?;
        }
        self.height = h;
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.keyword("not") {
            self.enter()?;
            let x = self.not()?;
            self.leave();
            self.set_height(self.height + 1)?;
            return Ok(Expr::Not(Box::new(x)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let left = self.bitwise()?;
        let h = self.height;
        let ops = [("<>", Op::Ne), ("!=", Op::Ne), ("<=", Op::Le), (">=", Op::Ge), ("=", Op::Eq)];
        let op = ops.iter().find(|(t, _)| self.symbol(t, &[])).map(|(_, o)| *o).or_else(|| {
            if self.symbol("<", &["<<"]) {
                Some(Op::Lt)
            } else if self.symbol(">", &[">>"]) {
                Some(Op::Gt)
            } else {
                None
            }
        });
        let Some(op) = op else { return Ok(left) };
        let right = self.bitwise()?;
        if self.peek().is_some_and(|c| matches!(c, '<' | '>' | '=' | '!')) {
            return Err(self.err("comparisons do not chain; use and, e.g. :a < :b and :b < :c"));
        }
        Ok(self.bin(op, left, h, right)?.0)
    }

    fn bitwise(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.sum()?;
        let mut h = self.height;
        loop {
            let op = if self.symbol("<<", &[]) {
                Op::Shl
            } else if self.symbol(">>", &[]) {
                Op::Shr
            } else if self.symbol("&", &[]) {
                Op::BitAnd
            } else if self.symbol("|", &[]) {
                Op::BitOr
            } else if self.symbol("#", &[]) {
                Op::BitXor
            } else {
                self.height = h;
                return Ok(left);
            };
            let right = self.sum()?;
            (left, h) = self.bin(op, left, h, right)?;
        }
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.product()?;
        let mut h = self.height;
        while let Some(c @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let right = self.product()?;
            (left, h) = self.bin(if c == '+' { Op::Add } else { Op::Sub }, left, h, right)?;
        }
        self.height = h;
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        let mut h = self.height;
        while let Some(c @ ('*' | '/' | '%')) = self.peek() {
            self.i += 1;
            let op = match c {
                '*' => Op::Mul,
                '/' => Op::Div,
                _ => Op::Mod,
            };
            let right = self.unary()?;
            (left, h) = self.bin(op, left, h, right)?;
        }
        self.height = h;
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        let Some(c @ ('-' | '+' | '~')) = self.peek() else { return self.atom() };
        let start = self.i;
        self.i += 1;
        if c == '-' {
            // The one integer whose digits alone do not fit: i64::MIN.
            let min = i64::MIN.unsigned_abs().to_string();
            let end = self.i + min.len();
            let digits: String = self.s.get(self.i..end).map(|d| d.iter().collect()).unwrap_or_default();
            let more = self.s.get(end).is_some_and(|n| n.is_ascii_alphanumeric() || matches!(n, '.' | '_'));
            if digits == min && !more {
                self.i = end;
                return Ok(Expr::Const(Value::Int(i64::MIN)));
            }
        }
        self.enter()?;
        let x = self.unary()?;
        self.leave();
        match (c, x) {
            ('-', Expr::Const(Value::Int(i))) => match i.checked_neg() {
                Some(n) => Ok(Expr::Const(Value::Int(n))),
                None => Err(ParseError { col: start, message: format!("-({i}) is out of the integer range") }),
            },
            ('-', Expr::Const(Value::Double(d))) => Ok(Expr::Const(Value::Double(-d))),
            ('+', x) => Ok(x),
            (c, x) => {
                self.set_height(self.height + 1)?;
                Ok(if c == '-' { Expr::Neg(Box::new(x)) } else { Expr::BitNot(Box::new(x)) })
            }
        }
    }

    fn name(&mut self) -> String {
        let start = self.i;
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
            self.i += 1;
        }
        self.s[start..self.i].iter().collect()
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            None => Err(self.err("the expression ends too early")),
            Some('(') => {
                self.i += 1;
                self.enter()?;
                let e = self.or()?;
                self.leave();
                if self.peek() != Some(')') {
                    return Err(self.err("expected ')'"));
                }
                self.i += 1;
                Ok(e)
            }
            Some(':') => {
                let at = self.i;
                self.i += 1;
                let name = self.name();
                if name.is_empty() {
                    return Err(ParseError { col: at, message: "expected a variable name after ':'".into() });
                }
                self.height = 1;
                (self.var)(&name).map(Expr::Var).map_err(|m| ParseError { col: at, message: m })
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let at = self.i;
                let name = self.name();
                if name.eq_ignore_ascii_case("true") || name.eq_ignore_ascii_case("false") {
                    self.height = 1;
                    return Ok(Expr::Const(Value::Int(i64::from(name.eq_ignore_ascii_case("true")))));
                }
                let Some((f, min, max)) = Func::of(&name) else {
                    return Err(ParseError {
                        col: at,
                        message: format!(
                            "unknown function '{name}'; use random, random_gaussian, random_exponential, random_zipfian, hash, hash_murmur2, hash_fnv1a, permute, abs, least, greatest, int, double, sqrt, pow, ln, exp, pi or mod"
                        ),
                    });
                };
                if self.peek() != Some('(') {
                    return Err(self.err(format!("expected '(' after {name}")));
                }
                self.i += 1;
                let mut args = Vec::new();
                let mut h = 1;
                if self.peek() == Some(')') {
                    self.i += 1;
                } else {
                    self.enter()?;
                    loop {
                        args.push(self.or()?);
                        h = h.max(self.height + 1);
                        match self.peek() {
                            Some(',') => self.i += 1,
                            Some(')') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err("expected ',' or ')' in the argument list")),
                        }
                    }
                    self.leave();
                }
                if args.len() < min || args.len() > max {
                    let want = match (min, max) {
                        (a, b) if a == b => format!("{a}"),
                        (a, usize::MAX) => format!("at least {a}"),
                        (a, b) => format!("{a} to {b}"),
                    };
                    return Err(ParseError {
                        col: at,
                        message: format!("{name} takes {want} argument(s), not {}", args.len()),
                    });
                }
                check_constant_arguments(f, &args).map_err(|m| ParseError { col: at, message: m })?;
                if matches!(f, Func::Murmur2 | Func::Fnv1a | Func::Permute) && args.len() < max {
                    // pgbench's default seed: the variable, so that --define default_seed=N sets it.
                    let slot = (self.var)(DEFAULT_SEED).map_err(|m| ParseError { col: at, message: m })?;
                    args.push(Expr::Var(slot));
                }
                self.set_height(h)?;
                Ok(Expr::Call(f, args))
            }
            Some(c) => Err(self.err(format!("unexpected '{c}'"))),
        }
    }

    fn number(&mut self) -> Result<Expr, ParseError> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E'))
            || (self.i > start
                && matches!(self.s.get(self.i), Some('+' | '-'))
                && matches!(self.s.get(self.i - 1), Some('e' | 'E')))
        {
            self.i += 1;
        }
        let text: String = self.s[start..self.i].iter().collect();
        self.height = 1;
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Expr::Const(Value::Int(i)));
        }
        // Digits alone are an integer, never a double that would round it (as pgbench: an overflow).
        if text.chars().all(|c| c.is_ascii_digit()) {
            return Err(ParseError {
                col: start,
                message: format!("integer constant {text} is out of range; integers are 64-bit (at most {})", i64::MAX),
            });
        }
        match text.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Expr::Const(Value::Double(d))),
            _ => Err(ParseError { col: start, message: format!("'{text}' is not a number") }),
        }
    }
}

/// The parameter checks pgbench makes, done when the script is read where the arguments are constants.
fn check_constant_arguments(f: Func, args: &[Expr]) -> Result<(), String> {
    let konst = |i: usize| match args.get(i) {
        Some(Expr::Const(v)) => Some(*v),
        _ => None,
    };
    if let (Some(Value::Int(lb)), Some(Value::Int(ub))) = (konst(0), konst(1))
        && matches!(f, Func::Random | Func::Gaussian | Func::Exponential | Func::Zipfian)
        && lb > ub
    {
        return Err(format!("empty range: {lb} is above {ub}"));
    }
    // What evaluating would refuse on every draw, refused when the script is read.
    if matches!(f, Func::Random | Func::Gaussian | Func::Exponential | Func::Zipfian)
        && let Some(Value::Double(d)) = konst(0).filter(|v| matches!(v, Value::Double(_))).or(konst(1))
    {
        return Err(format!("a random bound must be an integer, not {d}"));
    }
    if let Some(p) = konst(2) {
        check_parameter(f, p.as_f64())?;
    }
    Ok(())
}

/// pgbench's checks of a distribution's parameter.
pub(super) fn check_parameter(f: Func, p: f64) -> Result<(), String> {
    match f {
        Func::Gaussian if p < super::random::MIN_GAUSSIAN_PARAM => {
            Err(format!("random_gaussian's parameter must be at least {}, not {p}", super::random::MIN_GAUSSIAN_PARAM))
        }
        Func::Exponential if p <= 0.0 => Err(format!("random_exponential's parameter must be above 0, not {p}")),
        Func::Zipfian if !(super::random::MIN_ZIPFIAN_PARAM..=super::random::MAX_ZIPFIAN_PARAM).contains(&p) => {
            Err(format!(
                "random_zipfian's parameter must be between {} and {}, not {p}",
                super::random::MIN_ZIPFIAN_PARAM,
                super::random::MAX_ZIPFIAN_PARAM
            ))
        }
        _ => Ok(()),
    }
}
