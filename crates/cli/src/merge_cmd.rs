//! `pgrush merge`: the run documents of a sharded benchmark (one `--json` document per
//! shard) merged into the report of one run with all their clients, through
//! [`pgrush_report::merge`].
//!
//! Standard output: the banner, pgbench's report for the whole run and the latency
//! percentiles of the merged histograms (on stderr with `--json -`). Standard error: the
//! "merged from N shards" block (hosts, clock offsets, start spread). Exit status 0, 1 on
//! any error (unreadable file, shards that do not belong together, missing shards), 2 when
//! a shard's run was aborted or interrupted (as pgbench's).

use std::ffi::OsString;
use std::io::Write;

use pgrush_report::document::RunDocument;
use pgrush_report::merge::{MergedRun, merge, merged_text};
use pgrush_report::{html, percentiles, text};
use pgrush_run::Failure;

use crate::saved_run::read_run;
use crate::subcommand::{Invocation, Operands, Opt, Subcommand};
use pgrush_run::output_file::write_output;

/// `pgrush merge`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "merge",
    args: " SHARD...",
    summary: "merge a sharded run's documents into one report",
    about: "\
{prog} merge merges the run documents of a sharded benchmark (one per shard, written by
{prog} --shard INDEX/COUNT --json FILE) into the report of one run with all their clients.

Usage:
  {prog} merge SHARD.json... [--json FILE] [--html FILE]

Prints pgbench's report for the whole run, as if one pgbench had run every shard's clients
with every shard's threads, then the latency percentiles of the merged histograms; the
shards (hosts, clock offsets, start spread) are listed on standard error. Counts, latency
sums and histograms add up exactly; tps is over the common measured interval, from the
earliest shard start to the latest shard end on the server's clock. Shards of different
benchmarks, duplicate shards and missing shards are refused. Shards of --workload tpcc
add their NOPM and TPM lines, worked out again from the merged counts.

",
    options: &[
        Opt::valued(
            None,
            "json",
            "FILE",
            &[
                "write the merged run document (- for stdout;",
                "the report then goes to stderr)",
            ],
        ),
        Opt::valued(
            None,
            "html",
            "FILE",
            &["write the merged run as a self-contained HTML page"],
        ),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Files,
    pgbench_options: false,
    run,
};

/// What `pgrush merge` was asked to do.
#[derive(Debug, Clone, PartialEq, Default)]
struct MergeArgs {
    files: Vec<String>,
    json: Option<String>,
    html: Option<String>,
}

/// Parses the arguments; `Ok(None)` asks for the help text.
fn parse_merge_args(args: &[OsString]) -> Result<Option<MergeArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    let mut out = MergeArgs {
        files: scan.operands,
        ..MergeArgs::default()
    };
    for (found, value) in scan.options {
        let value = value.unwrap_or_default();
        if value.is_empty() {
            return Err(COMMAND.usage(format!("--{}: a file name is needed", found.long())));
        }
        match found.long() {
            "json" => out.json = Some(value),
            _ => out.html = Some(value),
        }
    }
    if out.files.is_empty() {
        return Err(COMMAND.usage("no shard document given"));
    }
    Ok(Some(out))
}

/// `pgrush merge …`: returns the exit status.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(parsed) = parse_merge_args(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    merge_files(&parsed)
}

/// Merges the shard documents and prints the report.
fn merge_files(parsed: &MergeArgs) -> Result<i32, Failure> {
    let outputs = [parsed.json.as_deref(), parsed.html.as_deref()];
    pgrush_run::output_file::check_outputs(outputs)?;
    let mut docs: Vec<(String, RunDocument)> = Vec::with_capacity(parsed.files.len());
    for f in &parsed.files {
        docs.push((f.clone(), read_run(f)?));
    }
    let mut merged = merge(&docs).map_err(|e| Failure::error(e.to_string()))?;
    pgrush_run::server_stats::explain_merged(&merged.summary, &mut merged.document);
    print_merged(parsed, &merged)?;
    let summary = &merged.summary;
    if summary.interrupted {
        return Err(Failure::error(
            "Run was interrupted by a signal; the above results are incomplete.",
        )
        .with_status(2));
    }
    if summary.aborted {
        return Err(Failure::error(text::ABORTED_MESSAGE).with_status(2));
    }
    Ok(0)
}

/// Prints the report and the shards block, and writes the requested files.
fn print_merged(args: &MergeArgs, merged: &MergedRun) -> Result<(), Failure> {
    let doc = &merged.document;
    let mut out: Box<dyn Write> = if args.json.as_deref() == Some("-") {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let mut printed = Ok(());
    if let Some(server) = &doc.server {
        printed = writeln!(out, "{}", text::banner(server.version_num, &server.version));
    }
    let printed = printed
        .and_then(|()| text::write_report(&merged.summary, &mut out))
        .and_then(|()| {
            let warmup = text::warmup_line(&merged.summary.config);
            out.write_all(warmup.unwrap_or_default().as_bytes())
        })
        .and_then(|()| {
            out.write_all(&percentiles::render_text(
                &merged.summary,
                &merged.percentiles,
            ))
        })
        .and_then(|()| match &doc.tpcc {
            Some(tpcc) => out.write_all(tpcc.text_lines().as_bytes()),
            None => Ok(()),
        })
        .and_then(|()| out.flush());
    if let Err(e) = printed
        && args.json.as_deref() != Some("-")
    {
        return Err(pgrush_run::output_file::stdout_failure(&e));
    }
    if let Some(block) = &doc.merged {
        eprint!("{}", merged_text(block, doc.results.duration_s));
    }
    if let Some(path) = &args.json {
        write_output(path, &doc.to_json())?;
    }
    if let Some(path) = &args.html {
        write_output(path, &html::render(doc))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_merge_arguments() {
        let p = parse_merge_args(&args(&[
            "a.json",
            "--json",
            "m.json",
            "--html=m.html",
            "b.json",
        ]));
        assert_eq!(
            p,
            Ok(Some(MergeArgs {
                files: vec!["a.json".into(), "b.json".into()],
                json: Some("m.json".into()),
                html: Some("m.html".into()),
            }))
        );
        assert_eq!(parse_merge_args(&args(&["--help"])), Ok(None));
        for bad in [
            &[][..],
            &["a.json", "--json"],
            &["a.json", "--csv"],
            &["a.json", "--json="],
        ] {
            let failure = parse_merge_args(&args(bad)).unwrap_err();
            assert_eq!(failure.status(), 1, "{bad:?}");
        }
        let files = parse_merge_args(&args(&["--", "--json"]));
        assert_eq!(
            files.map(|p| p.map(|a| a.files)),
            Ok(Some(vec!["--json".to_string()]))
        );
    }
}
