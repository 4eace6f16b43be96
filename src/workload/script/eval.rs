//! Evaluating `\set` and `\if` expressions (see [`super::expr`] for what they may hold).

use super::expr::{Expr, Func, Op, Value, check_parameter, truth_value};
use super::random::Draw;

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
        Expr::Not(x) => truth_value(!eval(x, vars, rng)?.truth()),
        Expr::BitNot(x) => Value::Int(!eval(x, vars, rng)?.coerce_int("~")?),
        Expr::Bin(Op::And, a, b) => truth_value(eval(a, vars, rng)?.truth() && eval(b, vars, rng)?.truth()),
        Expr::Bin(Op::Or, a, b) => truth_value(eval(a, vars, rng)?.truth() || eval(b, vars, rng)?.truth()),
        Expr::Bin(op @ (Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge), a, b) => {
            let (a, b) = (eval(a, vars, rng)?, eval(b, vars, rng)?);
            let order = match (a, b) {
                (Value::Int(x), Value::Int(y)) => x.cmp(&y),
                _ => a.as_f64().partial_cmp(&b.as_f64()).ok_or("a comparison with NaN")?,
            };
            use std::cmp::Ordering::*;
            truth_value(match op {
                Op::Eq => order == Equal,
                Op::Ne => order != Equal,
                Op::Lt => order == Less,
                Op::Le => order != Greater,
                Op::Gt => order == Greater,
                _ => order != Less,
            })
        }
        Expr::Bin(op @ (Op::BitAnd | Op::BitOr | Op::BitXor | Op::Shl | Op::Shr), a, b) => {
            let x = eval(a, vars, rng)?.coerce_int("a bitwise operand")?;
            let y = eval(b, vars, rng)?.coerce_int("a bitwise operand")?;
            Value::Int(match op {
                Op::BitAnd => x & y,
                Op::BitOr => x | y,
                Op::BitXor => x ^ y,
                // pgbench shifts by the count modulo 64 (C's shift of a 64-bit value).
                Op::Shl => x.wrapping_shl(y as u32),
                _ => x.wrapping_shr(y as u32),
            })
        }
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
                        _ => unreachable!("handled above"),
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
                        _ => unreachable!("handled above"),
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
        Func::Murmur2 => Value::Int(super::hash::murmur2(v[0].coerce_int("hash")?, v[1].coerce_int("hash's seed")?)),
        Func::Fnv1a => Value::Int(super::hash::fnv1a(v[0].coerce_int("hash")?, v[1].coerce_int("hash's seed")?)),
        Func::Permute => {
            let size = v[1].coerce_int("permute's size")?;
            if size <= 0 {
                return Err(format!("permute's size must be above 0, not {size}"));
            }
            Value::Int(super::hash::permute(v[0].coerce_int("permute")?, size, v[2].coerce_int("permute's seed")?))
        }
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
    use crate::workload::script::expr::{DEFAULT_SEED, parse};
    use crate::workload::script::random::Rng;

    fn value(text: &str) -> Result<Value, String> {
        value_with(text, 1)
    }

    fn value_with(text: &str, seed: u64) -> Result<Value, String> {
        let names = ["x", "y", DEFAULT_SEED];
        let e = parse(text, &mut |n| names.iter().position(|v| *v == n).ok_or_else(|| format!("unknown :{n}")))
            .map_err(|e| format!("{}: {}", e.col, e.message))?;
        eval(&e, &[Value::Int(7), Value::Double(0.5), Value::Int(5432)], &mut Rng::seeded(seed))
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
    fn comparisons_logic_and_bits_follow_pgbench() {
        assert_eq!(value("1 + 1 = 2"), Ok(Value::Int(1)), "comparisons bind looser than arithmetic");
        assert_eq!(value(":x <> 7 or :y < 1"), Ok(Value::Int(1)));
        assert_eq!(value(":x != 7"), Ok(Value::Int(0)));
        assert_eq!(value("not :x >= 8 and true"), Ok(Value::Int(1)), "not binds looser than >=");
        assert_eq!(value("false or 2 <= 1"), Ok(Value::Int(0)));
        assert_eq!(value("0 and 1 / 0"), Ok(Value::Int(0)), "and does not evaluate its right side when false");
        assert_eq!(value("1 OR 1 / 0"), Ok(Value::Int(1)));
        assert_eq!(value("6 & 3 | 8 # 1"), Ok(Value::Int(11)), "left to right at one level, as pgbench");
        assert_eq!(value("1 << 4 >> 2"), Ok(Value::Int(4)));
        assert_eq!(value("~0"), Ok(Value::Int(-1)));
        assert_eq!(value("1 + 2 << 1"), Ok(Value::Int(6)), "bitwise binds looser than +");
        assert_eq!(value("2 > 1 > 0").unwrap_err(), "6: comparisons do not chain; use and, e.g. :a < :b and :b < :c");
    }

    #[test]
    fn hash_and_permute_take_pgbench_s_default_seed() {
        assert_eq!(value("hash(10, 5432)"), Ok(Value::Int(-5817877081768721676)));
        assert_eq!(value("hash(10)"), value("hash_murmur2(10, :default_seed)"));
        assert_eq!(value("hash_fnv1a(10)"), Ok(Value::Int(-7793829335365542153)));
        assert_eq!(value("permute(1, 2)"), value("permute(1, 2, 5432)"));
        assert_eq!(value("permute(3, 0)").unwrap_err(), "permute's size must be above 0, not 0");
        assert_eq!(value("hash(10.4, 5432)"), value("hash(10, 5432)"), "a double is rounded, as pgbench does");
        assert!(value("hash()").unwrap_err().contains("hash takes 1 to 2 argument(s), not 0"));
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
    fn integers_at_the_64_bit_edge_stay_integers_or_are_refused() {
        assert_eq!(value("9223372036854775807"), Ok(Value::Int(i64::MAX)));
        assert_eq!(value("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
        assert_eq!(value("(-9223372036854775808)"), Ok(Value::Int(i64::MIN)));
        assert_eq!(value("-9223372036854775808 + 1"), Ok(Value::Int(i64::MIN + 1)));
        assert_eq!(value("- 9223372036854775807 - 1"), Ok(Value::Int(i64::MIN)));
        let e = value("random(1, 9223372036854775808)").unwrap_err();
        assert!(e.starts_with("10: integer constant 9223372036854775808 is out of range"), "{e}");
        assert!(value("--9223372036854775808").unwrap_err().contains("out of the integer range"));
        // A double bound fails every draw: refused when the script is read.
        assert_eq!(
            value("random(1, 9.3e18)").unwrap_err(),
            "0: a random bound must be an integer, not 9300000000000000000"
        );
        assert!(value("random_zipfian(1e3, 2000, 1.5)").unwrap_err().contains("must be an integer, not 1000"));
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
