//! `pgrush check --workload tpcc`: the TPC-C consistency conditions 1–4 on a database
//! loaded by `pgrush -i --workload tpcc` (and run), checked by `pgrush_init::tpcc`.
//! Standard output: one line per condition, and for a failing one the warehouses and
//! districts where it fails; after a run (`--check`) a fifth line, the count of orders
//! the run added against the New-Orders its clients committed
//! (`pgrush_run::tpcc_count`); exit status 0 when all hold, 1 otherwise.

use std::ffi::OsString;

use pgrush_init::Session;
use pgrush_init::tpcc::{CONDITIONS, ConditionResult, check_consistency};
use pgrush_init::wire_session::WireConnector;
use pgrush_run::connect::{PasswordPrompt, connect_prompting};
use pgrush_run::options::{Options, Workload};
use pgrush_run::tpcc_count::NewOrderCount;
use pgrush_run::{Failure, Line};

use crate::subcommand::{Found, Invocation, Operands, Opt, Subcommand, write_stdout};

/// `pgrush check`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "check",
    args: "",
    summary: "check a TPC-C-like database (--workload tpcc)",
    about: "\
{prog} check checks the consistency conditions 1 to 4 of the TPC-C specification
(clause 3.3.2) on a database made by {prog} -i --workload tpcc, before or after a run.

Usage:
  {prog} check --workload tpcc [-h HOST] [-p PORT] [-U USER] [DBNAME]

Prints one line per condition; for a condition that fails, the warehouses (and
districts) where it fails, with the values found (the first 10 of each). Exit status
0 when the four conditions hold, 1 otherwise.

After a run, {prog} --workload tpcc --check also counts the orders the run added (the
growth of the districts' D_NEXT_O_ID) against the New-Orders its clients committed;
{prog} check alone, without the clients' count, checks the four conditions only.

",
    options: &[
        Opt::valued(
            None,
            "workload",
            "NAME",
            &["the workload whose database is checked: tpcc"],
        ),
        Opt::HOST.of_pgbench(),
        Opt::PORT.of_pgbench(),
        Opt::USERNAME.of_pgbench(),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Files,
    pgbench_options: true,
    run,
};

/// `pgrush check …`: returns the exit status.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let mut workload = None;
    for (found, value) in &scan.options {
        if let Found::Own(opt) = found
            && opt.long == "workload"
        {
            workload = Some(value.clone().unwrap_or_default());
        }
    }
    match workload.as_deref() {
        Some("tpcc") => {}
        Some(other) => {
            return Err(COMMAND.usage(format!(
                "no consistency check for workload \"{other}\" (only \"tpcc\")"
            )));
        }
        None => return Err(COMMAND.usage("--workload tpcc is needed")),
    }
    let mut argv: Vec<OsString> = vec![inv.prog.clone().into()];
    argv.extend(scan.pgbench_args().map(|h| OsString::from(h.text)));
    argv.extend(scan.operands.iter().map(OsString::from));
    let mut opts = crate::parse::parse_command_line(&argv)?;
    opts.workload = Workload::Tpcc;
    // Without a run there is no client's count of New-Orders to compare.
    check_and_print(&opts, &crate::prompt::password, None)
}

/// Checks the database `opts` names and prints the results: exit status 0 when every
/// condition holds (and, after a run, its New-Order count: `new_orders`), a failure
/// (status 1) otherwise.
pub fn check_and_print(
    opts: &Options,
    prompt: PasswordPrompt<'_>,
    new_orders: Option<&NewOrderCount>,
) -> Result<i32, Failure> {
    let (mut text, mut ok) = check(opts, prompt)?;
    if let Some(count) = new_orders {
        text.push_str(&count.line());
        text.push('\n');
        ok &= count.holds();
    }
    write_stdout(text.as_bytes())?;
    if ok {
        Ok(0)
    } else {
        Err(Failure::error("the database is not consistent"))
    }
}

/// Connects as `opts` says and checks the conditions: the report's text and whether
/// every condition holds.
pub fn check(opts: &Options, prompt: PasswordPrompt<'_>) -> Result<(String, bool), Failure> {
    let (params, first) = connect_prompting(opts, prompt).map_err(|f| {
        Failure::exit(1)
            .then(Line::Error(f.message.into_bytes()))
            .then(Line::Error(
                b"could not connect for the consistency check".to_vec(),
            ))
    })?;
    let connector = WireConnector::with_connection(params, first);
    let mut session =
        pgrush_init::Connector::connect(&connector).map_err(|e| Failure::error(e.into_bytes()))?;
    let results = check_consistency(&mut session as &mut dyn Session)
        .map_err(|e| Failure::exit(1).then(Line::Verbatim(e.render(&opts.progname))))?;
    Ok(report(&results))
}

/// The text of the check's results, and whether all conditions hold.
pub fn report(results: &[ConditionResult]) -> (String, bool) {
    let mut text = String::new();
    let mut ok = true;
    for r in results {
        let rule = CONDITIONS
            .iter()
            .find(|c| c.number == r.condition)
            .map_or("", |c| c.rule);
        if r.count == 0 {
            text.push_str(&format!("condition {} ({rule}): ok\n", r.condition));
            continue;
        }
        ok = false;
        for v in &r.shown {
            text.push_str(&format!("{v}\n"));
        }
        let more = r.count - r.shown.len() as i64;
        if more > 0 {
            text.push_str(&format!(
                "condition {} fails in {more} more places\n",
                r.condition
            ));
        }
    }
    (text, ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrush_init::tpcc::Violation;

    #[test]
    fn report_names_what_fails() {
        let ok = |n| ConditionResult {
            condition: n,
            count: 0,
            shown: vec![],
        };
        let (text, all) = report(&[ok(1), ok(2)]);
        assert!(all);
        assert_eq!(
            text,
            "condition 1 (W_YTD = sum(D_YTD)): ok\ncondition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)): ok\n"
        );
        let bad = ConditionResult {
            condition: 3,
            count: 12,
            shown: vec![Violation {
                condition: 3,
                warehouse: 2,
                district: Some(5),
                found: "x".into(),
            }],
        };
        let (text, all) = report(&[ok(1), bad]);
        assert!(!all);
        assert!(text.contains("condition 3 (max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows) fails for warehouse 2, district 5: x\n"));
        assert!(text.ends_with("condition 3 fails in 11 more places\n"));
    }
}
