//! `--workload tpcc --check`: the count check of New-Orders. The orders a run added are
//! the growth of the sum of `d_next_o_id` over the districts of the run's home
//! warehouses (every New-Order that commits takes its district's next id; one rolled
//! back at its unused item id, or failed, leaves it alone), read just before the
//! clients start and after they end. The clients count the New-Orders whose COMMIT the
//! server acknowledged in a variable of their own (`new_order_commits`), and those whose
//! COMMIT they sent in another (`new_order_commits_sent`): the difference are commits
//! whose outcome they did not see, which a lost connection (`--reconnect`) can leave
//! committed or not. A shard reads its own range of warehouses: no other shard's
//! New-Orders take ids there.

use pgrush_script::{NEW_ORDER_COMMITS, NEW_ORDER_COMMITS_SENT, Value, Variables};
use pgrush_wire::Connection;
use pgrush_wire::conninfo::ConnParams;

use crate::tpcc_home::{COUNT_VARIABLE, FIRST_VARIABLE, HomeWarehouses};

/// What the rule compares.
pub const RULE: &str = "growth of sum(D_NEXT_O_ID) = New-Orders committed by the clients";

/// The figures of the count check of one run (or shard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrderCount {
    /// The first of the home warehouses whose districts were read.
    pub first_warehouse: i64,
    /// The last of them.
    pub last_warehouse: i64,
    /// Orders added: the growth of Σ `d_next_o_id` over their districts (`None` when a
    /// reading failed).
    pub added: Option<i64>,
    /// New-Orders whose COMMIT the clients saw succeed.
    pub committed: i64,
    /// New-Orders whose COMMIT's outcome the clients could not see: at most the
    /// commits sent but not acknowledged, and at most the New-Orders ended by a lost
    /// connection.
    pub unknown: i64,
}

impl NewOrderCount {
    /// Whether the orders added lie within what the clients committed (plus those of
    /// unknown outcome).
    pub fn holds(&self) -> bool {
        self.added
            .is_some_and(|added| self.committed <= added && added <= self.committed + self.unknown)
    }

    /// The check's line, in the format of the consistency conditions' lines.
    pub fn line(&self) -> String {
        let Some(added) = self.added else {
            return format!(
                "New-Order count ({RULE}) not checked for warehouses {} to {}: the districts' d_next_o_id could not be read",
                self.first_warehouse, self.last_warehouse
            );
        };
        let committed = if self.unknown == 0 {
            format!("{} committed by the clients", self.committed)
        } else {
            format!(
                "{} to {} committed by the clients ({} New-Orders of unknown outcome: the connection was lost before the COMMIT's result)",
                self.committed,
                self.committed + self.unknown,
                self.unknown
            )
        };
        if self.holds() {
            format!("New-Order count ({RULE}): ok, {added} orders added, {committed}")
        } else {
            format!(
                "New-Order count ({RULE}) fails for warehouses {} to {}: {added} orders added, {committed}",
                self.first_warehouse, self.last_warehouse
            )
        }
    }
}

/// `--check`'s reading before the clients start: the home warehouses the scripts use
/// and Σ `d_next_o_id` over their districts (`None` when it could not be read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OrdersBefore {
    home: HomeWarehouses,
    sum: Option<i64>,
}

impl OrdersBefore {
    /// Reads on `con` the districts of the warehouses the scripts use: `home`, or the
    /// range the startup `variables` set.
    pub(crate) fn take(
        con: &mut Connection,
        variables: &Variables,
        home: HomeWarehouses,
    ) -> OrdersBefore {
        let home = scripts_range(variables, home);
        OrdersBefore {
            home,
            sum: next_order_ids(con, home),
        }
    }

    /// Reads the same districts again on a new connection to `params`, once the
    /// clients ended with the variables `clients`, `lost` of their New-Orders ended by
    /// a lost connection: the count check's figures.
    pub(crate) fn count_after(
        &self,
        params: &ConnParams,
        clients: &[Variables],
        lost: u64,
    ) -> NewOrderCount {
        let after = Connection::connect(params).ok().and_then(|mut con| {
            let sum = next_order_ids(&mut con, self.home);
            let _ = con.close();
            sum
        });
        count(self.home, self.sum, after, clients, lost)
    }
}

/// The home warehouses the scripts use: `home`, unless `-D` set `w_first` or `w_count`
/// in `variables` (the clients' startup variables).
fn scripts_range(variables: &Variables, home: HomeWarehouses) -> HomeWarehouses {
    HomeWarehouses {
        first: integer(variables, FIRST_VARIABLE).unwrap_or(home.first),
        count: integer(variables, COUNT_VARIABLE).unwrap_or(home.count),
    }
}

/// The query of Σ `d_next_o_id` over the districts of `home`.
fn sum_query(home: HomeWarehouses) -> String {
    format!(
        "SELECT coalesce(sum(d_next_o_id), 0) FROM district WHERE d_w_id BETWEEN {} AND {}",
        home.first,
        home.last()
    )
}

/// Σ `d_next_o_id` over the districts of `home` on `con`; `None` when it cannot be read.
fn next_order_ids(con: &mut Connection, home: HomeWarehouses) -> Option<i64> {
    let results = con.simple_query(&sum_query(home)).ok()?;
    results.first()?.get(0, 0)?.parse().ok()
}

/// The integer variable `name` of `variables` (`None` when not an integer).
fn integer(variables: &Variables, name: &str) -> Option<i64> {
    match variables.get_by_name(name)?.typed(name.as_bytes()) {
        Ok(Value::Int(i)) => Some(i),
        _ => None,
    }
}

/// The sum over the clients' final variables of the integer variable `name`.
fn sum_of(clients: &[Variables], name: &str) -> i64 {
    clients.iter().filter_map(|v| integer(v, name)).sum()
}

/// The count check's figures: `before` and `after` (Σ `d_next_o_id` over `home`'s
/// districts), the clients' final variables, and the New-Orders that ended with a lost
/// connection.
fn count(
    home: HomeWarehouses,
    before: Option<i64>,
    after: Option<i64>,
    clients: &[Variables],
    connection_failures: u64,
) -> NewOrderCount {
    let committed = sum_of(clients, NEW_ORDER_COMMITS);
    let sent = sum_of(clients, NEW_ORDER_COMMITS_SENT);
    let lost = i64::try_from(connection_failures).unwrap_or(i64::MAX);
    NewOrderCount {
        first_warehouse: home.first,
        last_warehouse: home.last(),
        added: before.zip(after).map(|(b, a)| a - b),
        committed,
        unknown: (sent - committed).clamp(0, lost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: HomeWarehouses = HomeWarehouses { first: 3, count: 2 };

    fn client(sent: i64, committed: i64) -> Variables {
        let mut v = Variables::new();
        let _ = v.put_value("test", NEW_ORDER_COMMITS_SENT, Value::Int(sent));
        let _ = v.put_value("test", NEW_ORDER_COMMITS, Value::Int(committed));
        v
    }

    #[test]
    fn orders_added_equal_commits_seen() {
        let clients = [client(5, 5), client(7, 7)];
        let c = count(HOME, Some(60_020), Some(60_032), &clients, 0);
        assert_eq!((c.added, c.committed, c.unknown), (Some(12), 12, 0));
        assert!(c.holds());
        assert_eq!(
            c.line(),
            format!("New-Order count ({RULE}): ok, 12 orders added, 12 committed by the clients")
        );
        let c = count(HOME, Some(60_020), Some(60_033), &clients, 0);
        assert!(!c.holds());
        assert_eq!(
            c.line(),
            format!(
                "New-Order count ({RULE}) fails for warehouses 3 to 4: 13 orders added, 12 committed by the clients"
            )
        );
        assert_eq!(
            sum_query(HOME),
            "SELECT coalesce(sum(d_next_o_id), 0) FROM district WHERE d_w_id BETWEEN 3 AND 4"
        );
    }

    #[test]
    fn unseen_commits_widen_the_range_up_to_the_lost_connections() {
        // Three commits sent without an answer, two New-Orders ended by a lost connection
        // (the third was a retried COMMIT): at most two more orders than seen.
        let clients = [client(10, 8), client(4, 3)];
        let at = |after| count(HOME, Some(100), Some(after), &clients, 2);
        assert_eq!(at(111).unknown, 2);
        assert!(!at(110).holds());
        assert!(at(111).holds() && at(112).holds() && at(113).holds());
        assert!(!at(114).holds());
        assert!(at(113).line().contains(
            ": ok, 13 orders added, 11 to 13 committed by the clients (2 New-Orders of unknown outcome"
        ));
        assert!(
            at(114)
                .line()
                .contains("fails for warehouses 3 to 4: 14 orders added, 11 to 13")
        );
        // Without a lost connection every outcome is known.
        assert_eq!(count(HOME, Some(100), Some(111), &clients, 0).unknown, 0);
    }

    #[test]
    fn an_unread_sum_fails_and_says_so() {
        let c = count(HOME, None, Some(5), &[], 0);
        assert!(!c.holds());
        assert!(c.line().ends_with(
            "not checked for warehouses 3 to 4: the districts' d_next_o_id could not be read"
        ));
    }
}
