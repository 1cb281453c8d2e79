//! Runs the `-I` steps in order and prints pgbench's `done in ...` summary.

use crate::config::{InitConfig, Step};
use crate::console::Console;
use crate::error::InitError;
use crate::parallel;
use crate::session::Connector;
use crate::steps;
use std::time::Instant;

/// The time one step took.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTime {
    /// pgbench's name for the step (`drop tables`, ...).
    pub op: &'static str,
    /// Seconds.
    pub seconds: f64,
}

/// `done in %.2f s (<op> %.2f s, ...).` — the total is the sum of the step times.
pub fn done_line(times: &[StepTime]) -> String {
    let total = times.iter().fold(0.0f64, |acc, t| acc + t.seconds);
    let list: Vec<String> = times
        .iter()
        .map(|t| format!("{} {:.2} s", t.op, t.seconds))
        .collect();
    format!("done in {total:.2} s ({}).", list.join(", "))
}

/// Runs every step of `cfg` (on one connection when `cfg.jobs` is 1, exactly as pgbench
/// 18; otherwise loading, vacuum and primary keys use `cfg.jobs` connections), printing
/// pgbench's messages on `console`. Returns the step times after printing `done in`.
pub fn run_init<C: Connector>(
    cfg: &InitConfig,
    connector: &C,
    console: &Console,
) -> Result<Vec<StepTime>, InitError> {
    let mut main = connector.connect().map_err(InitError::Connect)?;
    let parallel = cfg.jobs > 1;
    if parallel {
        steps::exec(&mut main, parallel::SYNC_COMMIT)?;
    }
    let mut times = Vec::new();
    let mut accounts_loaded = false;
    for &step in &cfg.steps {
        let start = Instant::now();
        accounts_loaded |= matches!(step, Step::ClientGenerate | Step::ServerGenerate);
        match step {
            Step::Drop => steps::drop_tables(&mut main, console)?,
            Step::CreateTables => steps::create_tables(&mut main, cfg, console)?,
            Step::ClientGenerate if parallel => {
                parallel::client_generate(connector, &mut main, cfg, console)?
            }
            Step::ClientGenerate => steps::client_generate(&mut main, cfg, console)?,
            Step::ServerGenerate if parallel => {
                parallel::server_generate(connector, &mut main, cfg, console)?
            }
            Step::ServerGenerate => steps::server_generate(&mut main, cfg, console)?,
            Step::Vacuum if parallel => {
                parallel::vacuum(connector, &mut main, cfg, console, accounts_loaded)?
            }
            Step::Vacuum => steps::vacuum(&mut main, console)?,
            Step::PrimaryKeys if parallel => {
                parallel::primary_keys(connector, &mut main, cfg, console)?
            }
            Step::PrimaryKeys => steps::primary_keys(&mut main, cfg, console)?,
            Step::ForeignKeys => steps::foreign_keys(&mut main, console)?,
        }
        times.push(StepTime {
            op: step.op_name(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    console.line(&done_line(&times));
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Partitioning, parse_steps};
    use crate::console::capture::Captured;
    use crate::ddl;
    use crate::fake::FakeConnector;

    #[test]
    fn done_line_format() {
        let times = [
            StepTime {
                op: "drop tables",
                seconds: 0.004,
            },
            StepTime {
                op: "client-side generate",
                seconds: 0.156,
            },
        ];
        assert_eq!(
            done_line(&times),
            "done in 0.16 s (drop tables 0.00 s, client-side generate 0.16 s)."
        );
        assert_eq!(done_line(&[]), "done in 0.00 s ().");
    }

    fn console() -> (Console, Captured) {
        let cap = Captured::default();
        (Console::new(Box::new(cap.clone()), false), cap)
    }

    fn all_steps(scale: i64) -> InitConfig {
        InitConfig {
            steps: parse_steps("dtgvpf").unwrap(),
            scale,
            ..InitConfig::default()
        }
    }

    #[test]
    fn single_connection_sends_pgbench_statements() {
        let fake = FakeConnector::config().build();
        let (con, cap) = console();
        let cfg = InitConfig {
            steps: parse_steps("dtgvpf").unwrap(),
            scale: 2,
            partitioning: Partitioning::Hash(2),
            ..InitConfig::default()
        };
        run_init(&cfg, &fake, &con).unwrap();
        let rel = |t: &str| format!("{} [\"{t}\"]", ddl::RELKIND_QUERY);
        let mut want: Vec<String> = vec![ddl::DROP_TABLES.into()];
        want.extend(ddl::create_tables(&cfg));
        want.extend(ddl::create_partitions(&cfg));
        want.extend([
            "begin".into(),
            ddl::TRUNCATE_TABLES.into(),
            rel("pgbench_branches"),
            "copy pgbench_branches from stdin with (freeze on)".into(),
            rel("pgbench_tellers"),
            "copy pgbench_tellers from stdin with (freeze on)".into(),
            rel("pgbench_accounts"),
            "copy pgbench_accounts from stdin with (freeze on)".into(),
            "commit".into(),
            "vacuum analyze pgbench_branches".into(),
            "vacuum analyze pgbench_tellers".into(),
            "vacuum analyze pgbench_accounts".into(),
            "vacuum analyze pgbench_history".into(),
        ]);
        want.extend(ddl::primary_keys(&cfg));
        want.extend(ddl::FOREIGN_KEYS.iter().map(|s| s.to_string()));
        assert_eq!(fake.statements(), want);
        assert_eq!(fake.connections(), 1);
        let log = fake.inner.log.lock().unwrap();
        assert_eq!(log.copies[0].1, b"1\t0\t\\N\n2\t0\t\\N\n\\.\n");
        assert_eq!(log.copies[2].1.len(), text_accounts_len(200_000) + 3);
        let text = cap.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "dropping old tables...");
        assert_eq!(lines[1], "creating tables...");
        assert_eq!(lines[2], "creating 2 partitions...");
        assert_eq!(lines[3], "generating data (client-side)...");
        assert!(lines[4].starts_with("100000 of 200000 tuples (50%) of pgbench_accounts done"));
        assert!(lines[5].starts_with("200000 of 200000 tuples (100%)"));
        assert_eq!(
            &lines[6..9],
            [
                "vacuuming...",
                "creating primary keys...",
                "creating foreign keys..."
            ]
        );
        assert!(lines[9].starts_with("done in "));
        assert!(lines[9].contains("(drop tables "));
        assert!(lines[9].ends_with(" s)."));
    }

    fn text_accounts_len(n: i64) -> usize {
        let mut b = Vec::new();
        for i in 1..=n {
            crate::rows::push_text_row(&mut b, crate::rows::Table::Accounts, i);
        }
        b.len()
    }

    #[test]
    fn partitioned_parent_is_copied_without_freeze_and_old_servers_never_freeze() {
        let mut f = FakeConnector::config();
        f.partitioned = true;
        let fake = f.build();
        let (con, _) = console();
        let cfg = InitConfig {
            steps: parse_steps("g").unwrap(),
            partitioning: Partitioning::Range(2),
            ..InitConfig::default()
        };
        run_init(&cfg, &fake, &con).unwrap();
        assert!(
            fake.statements()
                .contains(&"copy pgbench_accounts from stdin".to_string())
        );
        let mut f = FakeConnector::config();
        f.version = 130_000;
        let old = f.build();
        run_init(&cfg, &old, &con).unwrap();
        assert!(
            old.statements()
                .iter()
                .filter(|s| s.starts_with("copy"))
                .all(|s| !s.contains("freeze"))
        );
    }

    #[test]
    fn failing_statement_stops_with_query_error() {
        let mut f = FakeConnector::config();
        f.fail_on = Some("vacuum analyze pgbench_tellers".into());
        let fake = f.build();
        let (con, cap) = console();
        let err = run_init(&all_steps(1), &fake, &con).unwrap_err();
        assert_eq!(
            err,
            InitError::Query {
                message: "ERROR:  injected failure".into(),
                sql: "vacuum analyze pgbench_tellers".into()
            }
        );
        assert_eq!(
            fake.statements().last().unwrap(),
            "vacuum analyze pgbench_tellers"
        );
        assert!(!cap.text().contains("done in"));
    }

    #[test]
    fn copy_end_failure() {
        let mut f = FakeConnector::config();
        f.fail_copy_end = true;
        let fake = f.build();
        let (con, _) = console();
        let err = run_init(&all_steps(1), &fake, &con).unwrap_err();
        assert_eq!(err, InitError::CopyEnd("ERROR:  copy rejected".into()));
    }

    /// Decodes every account row of the text COPY data into (aid, bid).
    fn account_rows(copies: &[(String, Vec<u8>)]) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for (_, data) in copies.iter().filter(|c| c.0.contains("pgbench_accounts")) {
            for line in std::str::from_utf8(data).unwrap().lines() {
                if line == "\\." {
                    continue;
                }
                let f: Vec<&str> = line.split('\t').collect();
                assert_eq!(&f[2..], ["0", ""]);
                out.push((f[0].parse().unwrap(), f[1].parse().unwrap()));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn parallel_load_has_the_same_rows() {
        let single = FakeConnector::config().build();
        let (con, _) = console();
        let cfg = all_steps(3);
        run_init(&cfg, &single, &con).unwrap();
        let par = FakeConnector::config().build();
        let (pcon, pcap) = console();
        let pcfg = InitConfig {
            jobs: 4,
            ..all_steps(3)
        };
        run_init(&pcfg, &par, &pcon).unwrap();
        let a = account_rows(&single.inner.log.lock().unwrap().copies);
        let b = account_rows(&par.inner.log.lock().unwrap().copies);
        assert_eq!(a.len(), 300_000);
        assert_eq!(a, b);
        assert!(par.connections() > 1);
        let progress: Vec<String> = pcap
            .text()
            .lines()
            .filter(|l| l.contains("tuples"))
            .map(|l| l.split(" (elapsed").next().unwrap().to_string())
            .collect();
        assert_eq!(
            progress,
            [
                "100000 of 300000 tuples (33%) of pgbench_accounts done",
                "200000 of 300000 tuples (66%) of pgbench_accounts done",
                "300000 of 300000 tuples (100%) of pgbench_accounts done"
            ]
        );
        let stmts = par.statements();
        for t in ["branches", "tellers", "history"] {
            let v = format!("vacuum analyze pgbench_{t}");
            assert_eq!(stmts.iter().filter(|s| **s == v).count(), 1, "{v}");
        }
        // Loaded in this run by concurrent streams: frozen by the vacuum.
        let v = "vacuum (freeze, analyze) pgbench_accounts".to_string();
        assert_eq!(stmts.iter().filter(|s| **s == v).count(), 1, "{v}");
        for pk in ddl::primary_keys(&pcfg) {
            assert_eq!(stmts.iter().filter(|s| **s == pk).count(), 1);
        }
        assert!(stmts.contains(&"set max_parallel_maintenance_workers = 3".to_string()));
    }

    #[test]
    fn parallel_range_partitions_freeze_whole_partitions() {
        let (con, _) = console();
        let cfg = InitConfig {
            steps: parse_steps("g").unwrap(),
            scale: 2,
            jobs: 2,
            partitioning: Partitioning::Range(4),
            ..InitConfig::default()
        };
        let mut f = FakeConnector::config();
        f.layout = Some(crate::parallel::expected_layout(&cfg));
        let fake = f.build();
        run_init(&cfg, &fake, &con).unwrap();
        let stmts = fake.statements();
        for p in 1..=4 {
            assert!(stmts.contains(&format!("truncate table pgbench_accounts_{p}")));
            assert!(stmts.contains(&format!(
                "copy pgbench_accounts_{p} from stdin with (freeze on)"
            )));
        }
        let rows = account_rows(&fake.inner.log.lock().unwrap().copies);
        assert_eq!(rows.len(), 200_000);
        assert_eq!(rows[199_999], (200_000, 2));
        // A foreign key to pgbench_accounts forbids truncating one partition.
        let mut f = FakeConnector::config();
        f.fk_count = "1";
        f.layout = Some(crate::parallel::expected_layout(&cfg));
        let fk = f.build();
        run_init(&cfg, &fk, &con).unwrap();
        let fk_stmts = fk.statements();
        assert!(
            !fk_stmts
                .iter()
                .any(|s| s.starts_with("truncate table pgbench_accounts_"))
        );
        assert!(fk_stmts.contains(&"copy pgbench_accounts_2 from stdin".to_string()));
        // Partitions laid out differently: rows go through the parent.
        let other = FakeConnector::config().build();
        run_init(&cfg, &other, &con).unwrap();
        let copies: Vec<String> = other
            .statements()
            .into_iter()
            .filter(|s| s.starts_with("copy pgbench_accounts"))
            .collect();
        assert!(!copies.is_empty());
        assert!(
            copies
                .iter()
                .all(|s| s == "copy pgbench_accounts from stdin"),
            "{copies:?}"
        );
        assert_eq!(
            account_rows(&other.inner.log.lock().unwrap().copies).len(),
            200_000
        );
    }

    #[test]
    fn expected_layout_text() {
        let cfg = InitConfig {
            scale: 2,
            partitioning: Partitioning::Range(3),
            ..InitConfig::default()
        };
        assert_eq!(
            crate::parallel::expected_layout(&cfg),
            "pgbench_accounts_1 FOR VALUES FROM (MINVALUE) TO (66668)\npgbench_accounts_2 FOR VALUES FROM (66668) TO (133335)\npgbench_accounts_3 FOR VALUES FROM (133335) TO (MAXVALUE)"
        );
    }

    #[test]
    fn parallel_partitioned_vacuum_and_keys() {
        let (con, _) = console();
        let cfg = InitConfig {
            steps: parse_steps("vp").unwrap(),
            jobs: 2,
            partitioning: Partitioning::Hash(3),
            ..InitConfig::default()
        };
        let fake = FakeConnector::config().build();
        run_init(&cfg, &fake, &con).unwrap();
        let stmts = fake.statements();
        let pos = |s: &str| {
            stmts
                .iter()
                .position(|x| x == s)
                .unwrap_or_else(|| panic!("{s} missing"))
        };
        let analyze = pos("analyze only pgbench_accounts");
        let parent_pk = pos("alter table pgbench_accounts add primary key (aid)");
        for p in 1..=3 {
            assert!(pos(&format!("vacuum analyze pgbench_accounts_{p}")) < analyze);
            assert!(
                pos(&format!(
                    "alter table pgbench_accounts_{p} add primary key (aid)"
                )) < parent_pk
            );
        }
        assert!(analyze < pos("alter table pgbench_branches add primary key (bid)"));
        assert!(!stmts.contains(&"vacuum analyze pgbench_accounts".to_string()));
    }

    #[test]
    fn parallel_server_side_covers_all_accounts() {
        let (con, _) = console();
        let cfg = InitConfig {
            steps: parse_steps("G").unwrap(),
            scale: 3,
            jobs: 2,
            ..InitConfig::default()
        };
        let fake = FakeConnector::config().build();
        run_init(&cfg, &fake, &con).unwrap();
        let stmts = fake.statements();
        assert!(stmts.contains(&ddl::accounts_insert(1, 150_000)));
        assert!(stmts.contains(&ddl::accounts_insert(150_001, 300_000)));
        assert!(stmts.contains(&ddl::server_side_inserts(&cfg)[1]));
    }
}
