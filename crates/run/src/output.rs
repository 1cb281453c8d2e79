//! The run's output stage beyond pgbench's text report: where the text goes (stdout, or
//! stderr with `--json=-`), the server facts read before the run, then after the report
//! the percentile lines, the meaningfulness warnings, the server statistics, the client
//! machine's load, the `--assert` verdicts and the `--json`, `--html` and `--junit` files.

use std::io::Write;

use pgrush_engine::messages;
use pgrush_report::document::{ClientInfo, RunContext, RunDocument, ServerInfo, ShardDoc, TpccDoc};
use pgrush_report::html;
use pgrush_report::machine::MachineDoc;
use pgrush_report::machine_findings::checkpoint_iowait;
use pgrush_report::warnings::{WarningInputs, warnings};
use pgrush_stats::RunSummary;
use pgrush_stats::server::ServerTimeline;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnParams, redact_argv};

use crate::failure::Failure;
use crate::gate;
use crate::machine_load::MachineSampling;
use crate::metrics_endpoint::FinalPage;
use crate::output_file::write_output;
use crate::plan::RunPlan;
use crate::server_stats::ServerSampling;
use crate::shard::{align_time_series, report_note};

/// Where the banner and the text report go: stdout, or stderr with `--json=-`.
pub fn text_out(plan: &RunPlan) -> Box<dyn Write> {
    if plan.outputs.text_to_stderr {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    }
}

const AUTOVACUUM_QUERY: &str = "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) \
     + (SELECT count(*) FROM pg_catalog.pg_stat_activity \
        WHERE backend_type = 'autovacuum worker' AND query LIKE '%pgbench\\_%') \
     FROM pg_catalog.pg_stat_user_tables WHERE relname LIKE 'pgbench\\_%'";

/// A number that grows when autovacuum works on the pgbench tables (vacuum and analyze
/// counts plus running workers), `None` when it cannot be read.
fn autovacuum_activity(con: &mut Connection) -> Option<i64> {
    let results = con.simple_query(AUTOVACUUM_QUERY).ok()?;
    results.first()?.get(0, 0)?.parse().ok()
}

/// The server's version and [`pgrush_report::document::SERVER_SETTINGS`].
fn server_info(con: &mut Connection) -> ServerInfo {
    let mut settings = std::collections::BTreeMap::new();
    if let Ok(results) = con.simple_query(&pgrush_report::document::server_settings_query())
        && let Some(r) = results.first()
    {
        for row in 0..r.rows().len() {
            if let (Some(k), Some(v)) = (r.get(row, 0), r.get(row, 1)) {
                settings.insert(k.to_string(), v.to_string());
            }
        }
    }
    ServerInfo {
        version: con.server_version().to_string(),
        version_num: con.server_version_num(),
        settings,
    }
}

/// What the extras need from before the run (taken on the setup connection).
#[derive(Debug)]
pub struct RunExtras {
    enabled: bool,
    server: Option<ServerInfo>,
    autovacuum_before: Option<i64>,
    start_time_unix_us: i64,
    params: Option<ConnParams>,
    sampling: Option<ServerSampling>,
    machine: Option<MachineSampling>,
    shard: Option<ShardDoc>,
    tpcc: Option<TpccDoc>,
    final_page: Option<FinalPage>,
}

impl RunExtras {
    /// Reads the server facts on the setup connection (only when extras are enabled).
    pub fn before_run(plan: &RunPlan, con: &mut Connection, params: &ConnParams) -> Self {
        let enabled = plan.outputs.extras;
        let watch_autovacuum = enabled && plan.tpcb_like && !plan.options.no_warnings;
        RunExtras {
            enabled,
            server: enabled.then(|| server_info(con)),
            autovacuum_before: if watch_autovacuum {
                autovacuum_activity(con)
            } else {
                None
            },
            start_time_unix_us: 0,
            params: watch_autovacuum.then(|| params.clone()),
            sampling: ServerSampling::for_run(plan, params),
            machine: plan
                .outputs
                .document
                .then(|| MachineSampling::for_run(plan.options.progress, con)),
            shard: None,
            tpcc: None,
            final_page: None,
        }
    }

    /// With `--metrics-listen`: the server sampler, if there is one, also puts its
    /// latest values into `slot`.
    pub fn publish_server_to(&mut self, slot: pgrush_monitor::latest::LatestSlot) {
        if let Some(s) = self.sampling.as_mut() {
            s.publish_to(slot);
        }
    }

    /// With `--server-stats` and `--target`: the samplers also sample these servers
    /// (each one's index in the report's targets, and its parameters).
    pub fn sample_targets(&mut self, servers: Vec<(usize, ConnParams)>) {
        if let Some(s) = self.sampling.as_mut() {
            s.sample_targets(servers);
        }
    }

    /// With `--dashboard`: the report's HTML page also goes into `page`.
    pub fn publish_report_to(&mut self, page: Option<FinalPage>) {
        self.final_page = page;
    }

    /// Marks the start of the run (call just before the engine starts, after
    /// [`RunExtras::set_shard`] for a shard) and starts the server and machine samplers,
    /// whose intervals start with the run's time series: now plus the `--warmup`
    /// (`warmup_us`), or a shard's agreed start (with its warm-up, see
    /// [`RunExtras::set_shard`]).
    pub fn mark_start(&mut self, prog: &str, warmup_us: i64) {
        let now_us = pgrush_stats::wall_clock::unix_time_us();
        let now = std::time::Instant::now();
        let origin = if self.shard.is_some() {
            let ahead_us = self.start_time_unix_us - now_us;
            let by = std::time::Duration::from_micros(ahead_us.unsigned_abs());
            if ahead_us >= 0 {
                now + by
            } else {
                now.checked_sub(by).unwrap_or(now)
            }
        } else {
            self.start_time_unix_us = now_us + warmup_us;
            now + std::time::Duration::from_micros(warmup_us.max(0) as u64)
        };
        if let Some(s) = self.sampling.as_mut() {
            s.start(prog, origin);
        }
        if let Some(m) = self.machine.as_mut() {
            m.start(origin);
        }
    }

    /// A shard's run: its document carries `shard`, and starts (with its time
    /// series and server statistics) at the agreed start (plus the warm-up),
    /// `start_time_unix_us` on this machine's clock.
    pub fn set_shard(&mut self, shard: ShardDoc, start_time_unix_us: i64) {
        self.shard = Some(shard);
        self.start_time_unix_us = start_time_unix_us;
    }

    /// The instant the engine's time series, stages and outages count from (Unix µs,
    /// [`pgrush_engine::RunOutcome::origin_unix_us`]): the document's start time, so
    /// that a moment known by its Unix time lands on the right place of the series.
    /// The time [`RunExtras::mark_start`] took lies a few milliseconds before it.
    pub fn set_start_time(&mut self, unix_us: i64) {
        self.start_time_unix_us = unix_us;
    }

    /// A `--workload tpcc` run's rates: printed after the report, kept in the document.
    pub fn set_tpcc(&mut self, tpcc: TpccDoc) {
        self.tpcc = Some(tpcc);
    }

    /// The rates given to [`RunExtras::set_tpcc`].
    pub fn tpcc(&self) -> Option<&TpccDoc> {
        self.tpcc.as_ref()
    }

    /// The engine has ended: the machine's last reading is taken now, before the report.
    pub fn mark_end(&mut self) {
        if let Some(m) = self.machine.as_mut() {
            m.stop();
        }
    }

    /// A run that measured nothing (interrupted in its warm-up): the server and machine
    /// samplers stop, and there is nothing to report.
    pub fn abandon(&mut self) {
        if let Some(s) = self.sampling.as_mut() {
            s.stop();
        }
        self.mark_end();
    }

    /// Writes the text report: pgbench's, then after a `--warmup` pgrush's line saying
    /// so; for a shard, shard 0's headed by a line saying it is one shard of N, and a
    /// single line for every other shard ([`crate::shard::report_note`]).
    pub fn write_text_report(
        &self,
        plan: &RunPlan,
        summary: &RunSummary,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        let opts = &plan.options;
        if let Some(shard) = self.shard.as_ref().filter(|s| s.count > 1) {
            if !report_note::prints_full_report(opts) {
                let json = opts.json.as_deref();
                let line = report_note::brief_report(&opts.progname, shard, summary, json);
                return out.write_all(line.as_bytes());
            }
            let heading = report_note::report_heading(&opts.progname, shard, opts.clients);
            out.write_all(heading.as_bytes())?;
        }
        pgrush_report::text::write_report(summary, out)?;
        match pgrush_report::text::warmup_line(&summary.config) {
            Some(line) => out.write_all(line.as_bytes()),
            None => Ok(()),
        }
    }

    fn autovacuum_during_run(&self) -> Option<bool> {
        let before = self.autovacuum_before?;
        let mut con = Connection::connect(self.params.as_ref()?).ok()?;
        let after = autovacuum_activity(&mut con);
        let _ = con.close();
        Some(after? > before)
    }

    /// After the text report: percentile lines, warnings, the `--assert` verdicts,
    /// `--json`, `--html` and `--junit`. Returns whether every assertion held (true
    /// without assertions), or the failure to write a file.
    pub fn after_run(&mut self, plan: &RunPlan, summary: &RunSummary) -> Result<bool, Failure> {
        if !self.enabled {
            return Ok(true);
        }
        let opts = &plan.options;
        let list = opts.percentiles.clone().unwrap_or_default();
        let full = report_note::prints_full_report(opts);
        if let Some(list) = opts.percentiles.as_ref().filter(|_| full) {
            let text = pgrush_report::percentiles::render_text(summary, list);
            let mut out = text_out(plan);
            let _ = out.write_all(&text);
            let _ = out.flush();
        }
        let client = ClientInfo::detect();
        let machine = self.machine.as_mut().and_then(|m| m.finish(summary));
        let found = self.warnings(plan, summary, &client, machine.as_ref());
        if !plan.outputs.document {
            return Ok(true);
        }
        let ctx = RunContext {
            command_line: redacted_argv(),
            start_time_unix_us: self.start_time_unix_us,
            server: self.server.clone(),
            client,
            percentiles: list,
            warnings: found,
        };
        let mut doc = RunDocument::build(summary, &ctx);
        doc.machine = machine;
        doc.tpcc = self.tpcc.clone();
        if let Some(shard) = &self.shard {
            doc.shard = Some(shard.clone());
            align_time_series(&mut doc, summary.bench_duration_s());
        }
        if let Some(s) = self.sampling.as_mut() {
            doc.server_stats = s.finish(summary, doc.time_series.as_ref());
            if let (Some(t), Some(m)) = (doc.server_stats.as_mut(), doc.machine.as_ref()) {
                t.findings.extend(checkpoint_iowait(m, &t.events));
            }
            if let Some(t) = doc.server_stats.as_mut().filter(|_| opts.no_warnings) {
                t.warnings.clear();
            }
            if full {
                print_server_stats(plan, doc.server_stats.as_ref());
            }
            let targets = s.finish_targets(summary, doc.time_series.as_ref());
            add_target_servers(plan, &mut doc, targets, full);
        }
        let passed = gate_run(plan, &mut doc)?;
        if let Some(path) = &opts.json {
            write_output(path, &doc.to_json())?;
        }
        let page = (opts.html.is_some() || self.final_page.is_some()).then(|| html::render(&doc));
        if let (Some(path), Some(page)) = (&opts.html, &page) {
            write_output(path, page)?;
        }
        if let (Some(slot), Some(page)) = (&self.final_page, page) {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(page);
        }
        Ok(passed)
    }

    /// The meaningfulness warnings, printed and kept for the JSON and HTML documents;
    /// none with `--no-warnings`.
    fn warnings(
        &self,
        plan: &RunPlan,
        summary: &RunSummary,
        client: &ClientInfo,
        machine: Option<&MachineDoc>,
    ) -> Vec<String> {
        let opts = &plan.options;
        if opts.no_warnings {
            return Vec::new();
        }
        let found = warnings(&WarningInputs {
            tpcb_like: plan.tpcb_like,
            cpus: client.cpus,
            autovacuum_during_run: self.autovacuum_during_run(),
            machine: machine.map(MachineDoc::peaks),
            ..WarningInputs::from_summary(summary)
        });
        // Another shard's warnings are about its share only (its clients, its
        // duration): they stay in its document; `pgrush merge` works out the whole run's.
        if report_note::prints_full_report(opts) {
            for w in &found {
                messages::warning(&opts.progname, w);
            }
        }
        found
    }
}

/// This process's command line with its secrets redacted (passwords in connection
/// strings, `PGPASSWORD=...`), as the run document and the dashboard show it.
pub(crate) fn redacted_argv() -> Vec<String> {
    redact_argv(
        &std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
    )
}

/// The server statistics' warnings, and with `--server-stats` their summary.
fn print_server_stats(plan: &RunPlan, timeline: Option<&ServerTimeline>) {
    let opts = &plan.options;
    let Some(timeline) = timeline else {
        return;
    };
    // Empty with `--no-warnings`.
    for w in &timeline.warnings {
        messages::warning(&opts.progname, w);
    }
    if opts.server_stats.is_some() {
        let mut out = text_out(plan);
        let _ = out.write_all(pgrush_report::server::render_text(timeline).as_bytes());
        let _ = out.flush();
    }
}

/// The `--target` servers' timelines into the document's targets (their warnings
/// cleared with `--no-warnings`), and with `print`, their warnings and summaries.
fn add_target_servers(
    plan: &RunPlan,
    doc: &mut RunDocument,
    sampled: Vec<crate::server_stats::TargetTimeline>,
    print: bool,
) {
    let opts = &plan.options;
    let Some(targets) = doc.targets.as_mut() else {
        return;
    };
    for mut s in sampled {
        if opts.no_warnings {
            s.timeline.warnings.clear();
        }
        let Some(target) = targets.get_mut(s.index) else {
            continue;
        };
        target.server_in_recovery = s.in_recovery;
        if print {
            for w in &s.timeline.warnings {
                let w = format!("target {}: {w}", s.index + 1);
                messages::warning(&opts.progname, &w);
            }
        }
        if print && opts.server_stats.is_some() {
            let text = pgrush_report::server::render_target_text(s.index + 1, target, &s.timeline);
            let mut out = text_out(plan);
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        target.server_stats = Some(s.timeline);
    }
}

/// The `--assert` verdicts of a run: printed after the report, stored in `doc`, written
/// to `--junit`'s file. Returns whether every assertion held.
fn gate_run(plan: &RunPlan, doc: &mut RunDocument) -> Result<bool, Failure> {
    let opts = &plan.options;
    if opts.assertions.is_empty() {
        return Ok(true);
    }
    let facts = gate::run_facts(opts);
    let verdicts = gate::verdicts(&opts.assertions, &facts, doc, None);
    gate::print_verdicts(&verdicts, &mut text_out(plan));
    if let Some(path) = &opts.junit {
        let out = format!("{}{}", doc.report_text, gate::verdict_lines(&verdicts));
        let xml = pgrush_report::junit::render(&opts.progname, &verdicts, &out);
        write_output(path, &xml)?;
    }
    let passed = gate::all_passed(&verdicts);
    doc.assertions = Some(verdicts);
    Ok(passed)
}
