//! `\set` expressions with pgbench's meanings: integer and double constants, `:variables`, `+ - * / %`
//! with the usual precedence, unary minus, parentheses and pgbench's functions (`random`,
//! `random_gaussian`, `random_exponential`, `random_zipfian`, `abs`, `least`, `greatest`, `int`,
//! `double`, `sqrt`, `pow`, `ln`, `exp`, `pi`, `mod`). Integer arithmetic stays integer (division
//! truncates toward zero, as in pgbench); a double operand makes the result a double.

use std::fmt;

use super::random::Draw;

/// A value of a script variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Double(f64),
}

impl Value {
    fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Double(d) => d,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d}"),
        }
    }
}

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

/// Parses `text`; `var` resolves a variable name to its slot (or says why it cannot).
pub fn parse(text: &str, var: &mut dyn FnMut(&str) -> Result<usize, String>) -> Result<Expr, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { s: &chars, i: 0, var };
    let e = p.sum()?;
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
}

impl Parser<'_, '_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError { col: self.i, message: message.into() }
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

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.product()?;
        while let Some(c @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let right = self.product()?;
            left = Expr::Bin(if c == '+' { Op::Add } else { Op::Sub }, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        while let Some(c @ ('*' | '/' | '%')) = self.peek() {
            self.i += 1;
            let op = match c {
                '*' => Op::Mul,
                '/' => Op::Div,
                _ => Op::Mod,
            };
            let right = self.unary()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some('-') => {
                self.i += 1;
                Ok(match self.unary()? {
                    Expr::Const(Value::Int(i)) => Expr::Const(Value::Int(-i)),
                    Expr::Const(Value::Double(d)) => Expr::Const(Value::Double(-d)),
                    e => Expr::Neg(Box::new(e)),
                })
            }
            Some('+') => {
                self.i += 1;
                self.unary()
            }
            _ => self.atom(),
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
                let e = self.sum()?;
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
                (self.var)(&name).map(Expr::Var).map_err(|m| ParseError { col: at, message: m })
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let at = self.i;
                let name = self.name();
                let Some((f, min, max)) = Func::of(&name) else {
                    return Err(ParseError {
                        col: at,
                        message: format!(
                            "unknown function '{name}'; use random, random_gaussian, random_exponential, random_zipfian, abs, least, greatest, int, double, sqrt, pow, ln, exp, pi or mod"
                        ),
                    });
                };
                if self.peek() != Some('(') {
                    return Err(self.err(format!("expected '(' after {name}")));
                }
                self.i += 1;
                let mut args = Vec::new();
                if self.peek() == Some(')') {
                    self.i += 1;
                } else {
                    loop {
                        args.push(self.sum()?);
                        match self.peek() {
                            Some(',') => self.i += 1,
                            Some(')') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err("expected ',' or ')' in the argument list")),
                        }
                    }
                }
                if args.len() < min || args.len() > max {
                    let want = if min == max { format!("{min}") } else { format!("at least {min}") };
                    return Err(ParseError {
                        col: at,
                        message: format!("{name} takes {want} argument(s), not {}", args.len()),
                    });
                }
                check_constant_arguments(f, &args).map_err(|m| ParseError { col: at, message: m })?;
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
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Expr::Const(Value::Int(i)));
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
    if let Some(p) = konst(2) {
        check_parameter(f, p.as_f64())?;
    }
    Ok(())
}

fn check_parameter(f: Func, p: f64) -> Result<(), String> {
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

fn int_of(v: Value, what: &str) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => Err(format!("{what} must be an integer, not {d}")),
    }
}

/// Evaluates `e` with the variables `vars` and the random source `rng`.
pub fn eval(e: &Expr, vars: &[Value], rng: &mut dyn Draw) -> Result<Value, String> {
    Ok(match e {
        Expr::Const(v) => *v,
        Expr::Var(slot) => vars[*slot],
        Expr::Neg(x) => match eval(x, vars, rng)? {
            Value::Int(i) => Value::Int(i.checked_neg().ok_or("integer out of range")?),
            Value::Double(d) => Value::Double(-d),
        },
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, vars, rng)?, eval(b, vars, rng)?);
            match (a, b) {
                (Value::Int(x), Value::Int(y)) => Value::Int(
                    match op {
                        Op::Add => x.checked_add(y),
                        Op::Sub => x.checked_sub(y),
                        Op::Mul => x.checked_mul(y),
                        Op::Div if y == 0 => return Err("division by zero".into()),
                        Op::Div => x.checked_div(y),
                        Op::Mod if y == 0 => return Err("division by zero".into()),
                        Op::Mod => x.checked_rem(y),
                    }
                    .ok_or("integer out of range")?,
                ),
                _ => {
                    let (x, y) = (a.as_f64(), b.as_f64());
                    match op {
                        Op::Add => Value::Double(x + y),
                        Op::Sub => Value::Double(x - y),
                        Op::Mul => Value::Double(x * y),
                        Op::Div if y == 0.0 => return Err("division by zero".into()),
                        Op::Div => Value::Double(x / y),
                        Op::Mod => return Err("% takes integers".into()),
                    }
                }
            }
        }
        Expr::Call(f, args) if args.len() <= 4 => {
            // No allocation for the usual calls (random's two or three arguments): this runs per event.
            let mut v = [Value::Int(0); 4];
            for (slot, a) in v.iter_mut().zip(args) {
                *slot = eval(a, vars, rng)?;
            }
            call(*f, &v[..args.len()], rng)?
        }
        Expr::Call(f, args) => {
            let v = args.iter().map(|a| eval(a, vars, rng)).collect::<Result<Vec<_>, _>>()?;
            call(*f, &v, rng)?
        }
    })
}

fn call(f: Func, v: &[Value], rng: &mut dyn Draw) -> Result<Value, String> {
    let range = || -> Result<(i64, i64), String> {
        let (lb, ub) = (int_of(v[0], "a random bound")?, int_of(v[1], "a random bound")?);
        if lb > ub { Err(format!("empty range: {lb} is above {ub}")) } else { Ok((lb, ub)) }
    };
    Ok(match f {
        Func::Random => {
            let (lb, ub) = range()?;
            Value::Int(rng.uniform(lb, ub))
        }
        Func::Gaussian | Func::Exponential | Func::Zipfian => {
            let (lb, ub) = range()?;
            let p = v[2].as_f64();
            check_parameter(f, p)?;
            Value::Int(match f {
                Func::Gaussian => rng.gaussian(lb, ub, p),
                Func::Exponential => rng.exponential(lb, ub, p),
                _ => rng.zipfian(lb, ub, p),
            })
        }
        Func::Abs => match v[0] {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or("integer out of range")?),
            Value::Double(d) => Value::Double(d.abs()),
        },
        Func::Least | Func::Greatest => {
            let pick = |a: f64, b: f64| if f == Func::Least { b < a } else { b > a };
            if v.iter().all(|x| matches!(x, Value::Int(_))) {
                let mut best = v[0];
                for x in &v[1..] {
                    if pick(best.as_f64(), x.as_f64()) {
                        best = *x;
                    }
                }
                best
            } else {
                let mut best = v[0].as_f64();
                for x in &v[1..] {
                    if pick(best, x.as_f64()) {
                        best = x.as_f64();
                    }
                }
                Value::Double(best)
            }
        }
        Func::Int => match v[0] {
            Value::Int(i) => Value::Int(i),
            Value::Double(d) if d.is_finite() && d.abs() < 9.2e18 => Value::Int(d.trunc() as i64),
            Value::Double(d) => return Err(format!("{d} is out of the integer range")),
        },
        Func::Double => Value::Double(v[0].as_f64()),
        Func::Sqrt => Value::Double(v[0].as_f64().sqrt()),
        Func::Pow => Value::Double(v[0].as_f64().powf(v[1].as_f64())),
        Func::Ln => Value::Double(v[0].as_f64().ln()),
        Func::Exp => Value::Double(v[0].as_f64().exp()),
        Func::Pi => Value::Double(std::f64::consts::PI),
        Func::Mod => {
            let (a, b) = (int_of(v[0], "mod's arguments")?, int_of(v[1], "mod's arguments")?);
            if b == 0 {
                return Err("division by zero".into());
            }
            Value::Int(a.checked_rem(b).ok_or("integer out of range")?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::script::random::Rng;

    fn value(text: &str) -> Result<Value, String> {
        value_with(text, 1)
    }

    fn value_with(text: &str, seed: u64) -> Result<Value, String> {
        let names = ["x", "y"];
        let e = parse(text, &mut |n| names.iter().position(|v| *v == n).ok_or_else(|| format!("unknown :{n}")))
            .map_err(|e| format!("{}: {}", e.col, e.message))?;
        eval(&e, &[Value::Int(7), Value::Double(0.5)], &mut Rng::seeded(seed))
    }

    #[test]
    fn arithmetic_follows_pgbench() {
        assert_eq!(value("1 + 2 * 3"), Ok(Value::Int(7)));
        assert_eq!(value("(1 + 2) * 3"), Ok(Value::Int(9)));
        assert_eq!(value("-7 / 2"), Ok(Value::Int(-3)), "integer division truncates toward zero");
        assert_eq!(value("7 % 3 + :x"), Ok(Value::Int(8)));
        assert_eq!(value(":x * :y"), Ok(Value::Double(3.5)));
        assert_eq!(value("int(2.9) + abs(-2)"), Ok(Value::Int(4)));
        assert_eq!(value("least(3, 1, 2) + greatest(1, 5)"), Ok(Value::Int(6)));
        assert_eq!(value("mod(10, 4)"), Ok(Value::Int(2)));
        assert_eq!(value("1 / 0"), Err("division by zero".into()));
        assert_eq!(value("9223372036854775807 + 1"), Err("integer out of range".into()));
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(value("1 + :z"), Err("4: unknown :z".into()));
        assert!(value("1 +").unwrap_err().starts_with("3: the expression ends"));
        assert!(value("rand(1, 2)").unwrap_err().starts_with("0: unknown function 'rand'"));
        assert!(value("random(1)").unwrap_err().contains("random takes 2 argument(s), not 1"));
        assert!(value("random(5, 1)").unwrap_err().contains("empty range"));
        assert!(value("random_gaussian(1, 10, 1.5)").unwrap_err().contains("at least 2"));
        assert!(value("random_zipfian(1, 10, 1.0)").unwrap_err().contains("between 1.001 and 1000"));
        assert!(value("random_exponential(1, 10, 0)").unwrap_err().contains("above 0"));
        assert!(value("(1 + 2").unwrap_err().contains("expected ')'"));
        assert!(value("1 2").unwrap_err().starts_with("2: unexpected '2'"));
    }

    #[test]
    fn random_values_stay_in_their_range() {
        for f in
            ["random(3, 9)", "random_gaussian(3, 9, 2.5)", "random_exponential(3, 9, 2)", "random_zipfian(3, 9, 1.5)"]
        {
            let mut seen = std::collections::BTreeSet::new();
            for seed in 0..300 {
                let Value::Int(v) = value_with(f, seed).unwrap() else { panic!("{f} is not an integer") };
                assert!((3..=9).contains(&v), "{f} gave {v}");
                seen.insert(v);
            }
            assert!(seen.len() >= 4, "{f} draws more than a few values: {seen:?}");
        }
    }
}
