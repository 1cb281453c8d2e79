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

    /// The steps other than `g` (whose rows the unit tests of `rows` check, and whose
    /// sameness with any `-j` the `tpcc` test of the cli checks on a server), on two
    /// connections.
    #[test]
    fn steps_send_the_workload_statements() {
        let cap = Captured::default();
        let con = Console::new(Box::new(cap.clone()), false);
        let fake = FakeConnector::config().build();
        run_tpcc_init(&config("dtvpf", 2, 2), &fake, &con).unwrap();
        assert!(fake.connections() > 1);
        let stmts = fake.statements();
        assert_eq!(stmts[1..5], ddl::drop_statements());
        assert_eq!(stmts[0], "set synchronous_commit = on");
        let created = ddl::create_statements(&config("t", 1, 1).layout);
        assert_eq!(created.len(), 9 + 7);
        for sql in created
            .iter()
            .chain(&ddl::keys_and_indexes(&Layout::default()))
        {
            assert_eq!(stmts.iter().filter(|s| *s == sql).count(), 1, "{sql}");
        }
        for table in ddl::TABLES {
            let vacuum = format!("vacuum analyze {table}");
            assert!(stmts.contains(&vacuum), "{vacuum}");
        }
        assert!(stmts.ends_with(&ddl::FOREIGN_KEYS.map(String::from)));
        let text = cap.text();
        assert!(text.starts_with("dropping old tables...\ncreating tables and functions...\n"));
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
