//! The consistency conditions 1–4 of the TPC-C specification (§3.3.2), checked with one
//! query each over every warehouse and district.

use crate::error::InitError;
use crate::session::Session;

/// Violations listed per condition at most (the count is always complete).
pub const SHOWN_PER_CONDITION: i64 = 10;

/// One consistency condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    /// Its number in §3.3.2.
    pub number: u8,
    /// What it requires.
    pub rule: &'static str,
    /// A query returning one row per violation: count over all violations, then the
    /// warehouse, the district (or NULL) and what was found, as text.
    sql: &'static str,
}

/// Conditions 1–4.
pub const CONDITIONS: [Condition; 4] = [
    Condition {
        number: 1,
        rule: "W_YTD = sum(D_YTD)",
        sql: "select count(*) over (), w_id, null, format('w_ytd %s, sum(d_ytd) %s', w_ytd, coalesce(s::text, 'none')) from warehouse left join (select d_w_id, sum(d_ytd) s from district group by d_w_id) d on d.d_w_id = w_id where w_ytd is distinct from s order by w_id",
    },
    Condition {
        number: 2,
        rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        sql: "select count(*) over (), d_w_id, d_id, format('d_next_o_id %s, max(o_id) %s, max(no_o_id) %s', d_next_o_id, coalesce(mo::text, 'none'), coalesce(mno::text, 'none')) from (select d_w_id, d_id, d_next_o_id, (select max(o_id) from orders where o_w_id = d_w_id and o_d_id = d_id) mo, (select max(no_o_id) from new_order where no_w_id = d_w_id and no_d_id = d_id) mno from district) t where d_next_o_id - 1 is distinct from mo or (mno is not null and mno <> d_next_o_id - 1) order by d_w_id, d_id",
    },
    Condition {
        number: 3,
        rule: "max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows",
        sql: "select count(*) over (), no_w_id, no_d_id, format('max(no_o_id) %s, min(no_o_id) %s, rows %s', max(no_o_id), min(no_o_id), count(*)) from new_order group by no_w_id, no_d_id having max(no_o_id) - min(no_o_id) + 1 <> count(*) order by no_w_id, no_d_id",
    },
    Condition {
        number: 4,
        rule: "sum(O_OL_CNT) = number of ORDER-LINE rows",
        sql: "select count(*) over (), w, d, format('sum(o_ol_cnt) %s, order lines %s', coalesce(o.n, 0), coalesce(l.n, 0)) from (select o_w_id w, o_d_id d, sum(o_ol_cnt) n from orders group by 1, 2) o full join (select ol_w_id w, ol_d_id d, count(*) n from order_line group by 1, 2) l using (w, d) where o.n is distinct from l.n order by w, d",
    },
];

/// A district (or warehouse) where a condition does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The condition's number.
    pub condition: u8,
    /// The warehouse.
    pub warehouse: i64,
    /// The district (None for condition 1).
    pub district: Option<i64>,
    /// The values found.
    pub found: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rule = CONDITIONS
            .iter()
            .find(|c| c.number == self.condition)
            .map_or("", |c| c.rule);
        write!(
            f,
            "condition {} ({rule}) fails for warehouse {}",
            self.condition, self.warehouse
        )?;
        if let Some(d) = self.district {
            write!(f, ", district {d}")?;
        }
        write!(f, ": {}", self.found)
    }
}

/// The result of one condition: how many districts (or warehouses) break it, and the
/// first [`SHOWN_PER_CONDITION`] of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionResult {
    /// The condition's number.
    pub condition: u8,
    /// Violations in all.
    pub count: i64,
    /// The first ones, by warehouse and district.
    pub shown: Vec<Violation>,
}

/// Checks conditions 1–4 on `session`.
pub fn check_consistency(session: &mut dyn Session) -> Result<Vec<ConditionResult>, InitError> {
    CONDITIONS.iter().map(|c| check_one(session, c)).collect()
}

/// One condition: its query's rows, packed into one text value (the session returns
/// one value per query) as `count|w|d|found` lines.
fn check_one(session: &mut dyn Session, c: &Condition) -> Result<ConditionResult, InitError> {
    let sql = format!(
        "select string_agg(concat_ws('|', n, w, coalesce(d::text, ''), found), E'\\n') from (select * from ({}) v(n, w, d, found) limit {SHOWN_PER_CONDITION}) t",
        c.sql
    );
    let text = session
        .query_value(&sql, &[])
        .map_err(|e| InitError::Query {
            message: e.message,
            sql: sql.clone(),
        })?
        .unwrap_or_default();
    let mut count = 0;
    let mut shown = Vec::new();
    for line in text.lines() {
        let mut f = line.splitn(4, '|');
        let mut int = || f.next().and_then(|v| v.parse::<i64>().ok());
        let (n, w, d) = (int(), int(), int());
        count = n.unwrap_or(count);
        shown.push(Violation {
            condition: c.number,
            warehouse: w.unwrap_or(0),
            district: d,
            found: f.next().unwrap_or_default().to_string(),
        });
    }
    Ok(ConditionResult {
        condition: c.number,
        count,
        shown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_name_condition_warehouse_and_district() {
        let v = Violation {
            condition: 2,
            warehouse: 3,
            district: Some(7),
            found: "d_next_o_id 3001, max(o_id) 3001, max(no_o_id) 3001".into(),
        };
        assert_eq!(
            v.to_string(),
            "condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)) fails for warehouse 3, district 7: d_next_o_id 3001, max(o_id) 3001, max(no_o_id) 3001"
        );
        let w = Violation {
            condition: 1,
            warehouse: 1,
            district: None,
            found: "w_ytd 1.00, sum(d_ytd) 2.00".into(),
        };
        assert!(
            w.to_string()
                .starts_with("condition 1 (W_YTD = sum(D_YTD)) fails for warehouse 1: ")
        );
    }
}
