//! A TPC-C-like workload's database (`pgrush -i --workload tpcc`): the nine tables of the
//! TPC-C specification, loaded with deterministic contents for a seed by parallel COPY.
//! See the crate README's "TPC-C-like" section for the rules followed and the departures.

mod check;
pub mod ddl;
mod functions;
mod load;
pub mod random;
pub mod rows;

pub use check::{CONDITIONS, ConditionResult, Violation, check_consistency};
pub use ddl::{Layout, create_statements, drop_statements};
pub use load::{CopyTask, TpccConfig, plan, run_tpcc_init, total_rows};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_steps;
    use crate::console::Console;
    use crate::console::capture::Captured;
    use crate::fake::FakeConnector;

    fn config(steps: &str, warehouses: i64, jobs: u32) -> TpccConfig {
        TpccConfig {
            steps: parse_steps(steps).unwrap(),
            warehouses,
            jobs,
            seed: 42,
            quiet: false,
            layout: Layout {
                fillfactor: 100,
                ..Layout::default()
            },
        }
    }

    /// Per table: the row count and an order-independent sum of the rows' hashes.
    fn copied(fake: &FakeConnector) -> std::collections::BTreeMap<String, (usize, u64)> {
        use std::hash::{Hash, Hasher};
        let log = fake.inner.log.lock().unwrap();
        let mut per = std::collections::BTreeMap::new();
        for (sql, data) in &log.copies {
            let table = sql.split(' ').nth(1).unwrap().to_string();
            let entry: &mut (usize, u64) = per.entry(table).or_default();
            for line in data.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                line.hash(&mut h);
                entry.0 += 1;
                entry.1 = entry.1.wrapping_add(h.finish());
            }
        }
        per
    }

    #[test]
    fn parallel_load_copies_the_same_rows_as_one_connection() {
        let cap = Captured::default();
        let con = Console::new(Box::new(cap.clone()), false);
        let one = FakeConnector::config().build();
        run_tpcc_init(&config("dtgvp", 2, 1), &one, &con).unwrap();
        let par = FakeConnector::config().build();
        run_tpcc_init(&config("g", 2, 3), &par, &con).unwrap();
        assert!(par.connections() > 1);
        let (a, b) = (copied(&one), copied(&par));
        assert_eq!(a.len(), 9);
        assert_eq!(a, b);
        let stmts = one.statements();
        assert_eq!(stmts[2], ddl::DROP_TABLES);
        assert!(stmts.contains(&"copy stock from stdin with (freeze on)".to_string()));
        assert!(stmts.contains(&"vacuum (freeze, analyze) stock".to_string()));
        assert!(
            par.statements()
                .contains(&"copy stock from stdin".to_string())
        );
        let text = cap.text();
        assert!(text.contains("of TPC-C tables done"), "{text}");
        assert!(text.contains("done in "));
    }

    #[test]
    fn server_side_generation_is_refused() {
        let con = Console::new(Box::new(Captured::default()), false);
        let fake = FakeConnector::config().build();
        let err = run_tpcc_init(&config("dtG", 1, 1), &fake, &con).unwrap_err();
        assert!(matches!(err, crate::InitError::Unsupported(_)));
        assert_eq!(fake.connections(), 0);
    }
}
