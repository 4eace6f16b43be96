//! The value of a script variable or expression: an integer or a double, with pgbench's truth and
//! coercion to an integer.

use std::fmt;

/// A value of a script variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Double(f64),
}

impl Value {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Double(d) => d,
        }
    }

    /// pgbench's truth of a value: not zero.
    pub fn truth(self) -> bool {
        match self {
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// The value as an integer, a double rounded to the nearest (pgbench's coercion).
    pub(super) fn coerce_int(self, what: &str) -> Result<i64, String> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) if d.is_finite() && d.abs() < 9.2e18 => Ok(d.round_ties_even() as i64),
            Value::Double(d) => Err(format!("{what}: {d} is out of the integer range")),
        }
    }
}

/// 1 for true, 0 for false.
pub(super) fn truth_value(b: bool) -> Value {
    Value::Int(i64::from(b))
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d}"),
        }
    }
}
