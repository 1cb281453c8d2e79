//! The workload of crash-recovery and pitr: pgrush itself, `-b tpcb-like -T N`, whose
//! report says how many transactions its clients saw committed.

use std::process::Command;

use crate::ops::config::OpsConfig;
use crate::ops::error::OpsError;
use crate::ops::program::run_timed;
use crate::ops::server::Server;
use crate::ticker::Ticker;

/// Runs `seconds` of tpcb-like on the steps' database, said on `progress` as `step`'s
/// phase `what`; returns the committed count.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    seconds: u32,
    (progress, step): (&Ticker, String),
) -> Result<u64, OpsError> {
    progress.phase(
        step,
        Some(std::time::Duration::from_secs(u64::from(seconds.max(1)))),
    );
    let mut cmd = Command::new(&cfg.pgrush_exe);
    server.point_at_server(&mut cmd);
    cmd.args(["-n", "-b", "tpcb-like"])
        .arg(format!("-T{}", seconds.max(1)))
        .arg(format!("-c{}", cfg.workload_clients.max(1)))
        .arg(&server.endpoint.dbname);
    let (out, _) = run_timed(cmd, "the workload (pgrush -b tpcb-like)")?;
    committed(&out).ok_or_else(|| {
        OpsError::Unexpected(format!(
            "the workload's report has no transaction count:\n{out}"
        ))
    })
}

/// `N` of `number of transactions actually processed: N` (or `N/M`).
pub fn committed(report: &str) -> Option<u64> {
    report.lines().find_map(|line| {
        let rest = line.strip_prefix("number of transactions actually processed: ")?;
        rest.split('/').next()?.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::committed;

    #[test]
    fn committed_count_from_the_report() {
        let report = "scaling factor: 1\nnumber of transactions actually processed: 1234\nx\n";
        assert_eq!(committed(report), Some(1234));
        assert_eq!(
            committed("number of transactions actually processed: 10/20\n"),
            Some(10)
        );
        assert_eq!(committed("nothing\n"), None);
    }
}
