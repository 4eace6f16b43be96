//! The table, its three secondary indexes and the query statements of the reference (MySQL dialect).

use std::fmt::Write as _;

use super::options::Options;

/// `CREATE TABLE` of one benchmark table.
pub fn create_table(table: &str, o: &Options) -> String {
    let mut s = format!(
        "CREATE TABLE {table} (transactionid BIGINT NOT NULL AUTO_INCREMENT, dateandtime DATETIME, \
         cashregisterid INT NOT NULL, customerid INT NOT NULL, productid INT NOT NULL, price INT NOT NULL, \
         data VARCHAR(4000), PRIMARY KEY (transactionid)) ENGINE={}",
        o.engine
    );
    if !o.engine_options.trim().is_empty() {
        s.push(' ');
        s.push_str(o.engine_options.trim());
    }
    s
}

/// The names of the three secondary indexes of `table`, in the reference's order.
pub fn index_names(table: &str) -> [String; 3] {
    [format!("{table}_marketsegment"), format!("{table}_registersegment"), format!("{table}_pdc")]
}

/// One `ALTER TABLE` adding the three secondary indexes (as the reference does for InnoDB).
pub fn add_indexes(table: &str) -> String {
    let [m, r, p] = index_names(table);
    format!(
        "ALTER TABLE {table} ADD INDEX {m} (productid, customerid, price), \
         ADD INDEX {r} (cashregisterid, customerid, price), ADD INDEX {p} (price, dateandtime, customerid)"
    )
}

/// The range-query generators, one per secondary index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// `productid >= ?` on `_marketsegment`.
    Market,
    /// `cashregisterid > ?` (strict) on `_registersegment`.
    Register,
    /// `price >= ?` on `_pdc`.
    Pdc,
}

impl Range {
    /// The three generators.
    pub const ALL: [Range; 3] = [Range::Market, Range::Register, Range::Pdc];

    /// The exclusive upper bound of the random parameter.
    pub fn bound(self, o: &Options) -> u64 {
        match self {
            Range::Market => o.products,
            Range::Register => o.cashregisters,
            Range::Pdc => o.max_price,
        }
        .max(1) as u64
    }

    /// The statement for parameter `value` into `out` (cleared first).
    pub fn sql(self, table: &str, value: u64, o: &Options, out: &mut String) {
        out.clear();
        let [m, r, p] = index_names(table);
        let (cols, index, cond) = match self {
            Range::Market => ("productid, customerid, price", m, "productid >="),
            Range::Register => ("cashregisterid, customerid, price", r, "cashregisterid >"),
            Range::Pdc => ("price, dateandtime, customerid", p, "price >="),
        };
        let _ = write!(out, "SELECT {cols} FROM {table}");
        if o.force_index {
            let _ = write!(out, " FORCE INDEX ({index})");
        }
        let _ = write!(out, " WHERE {cond} {value} ORDER BY {cols} LIMIT {}", o.rows_per_query);
    }
}

/// The point query: `SELECT transactionid, productid, data FROM t WHERE transactionid IN (…)`.
pub fn point_sql(table: &str, ids: &[i64], out: &mut String) {
    out.clear();
    let _ = write!(out, "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN (");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{id}");
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_match_the_reference_shapes() {
        let o = Options::default();
        assert!(create_table("pi1", &o).ends_with("PRIMARY KEY (transactionid)) ENGINE=innodb"));
        let o2 = Options { engine_options: " ROW_FORMAT=COMPRESSED ".into(), ..o.clone() };
        assert!(create_table("pi1", &o2).ends_with("ENGINE=innodb ROW_FORMAT=COMPRESSED"));
        assert_eq!(
            add_indexes("pi2"),
            "ALTER TABLE pi2 ADD INDEX pi2_marketsegment (productid, customerid, price), ADD INDEX \
             pi2_registersegment (cashregisterid, customerid, price), ADD INDEX pi2_pdc (price, dateandtime, customerid)"
        );
        let mut s = String::new();
        Range::Register.sql("pi1", 7, &o, &mut s);
        assert_eq!(
            s,
            "SELECT cashregisterid, customerid, price FROM pi1 FORCE INDEX (pi1_registersegment) WHERE \
             cashregisterid > 7 ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        Range::Pdc.sql("pi1", 3, &Options { force_index: false, ..o.clone() }, &mut s);
        assert_eq!(
            s,
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= 3 ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(Range::Market.bound(&o), 10_000);
        point_sql("pi1", &[5, 9], &mut s);
        assert_eq!(s, "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (5,9)");
    }
}
