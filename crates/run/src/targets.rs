//! `--target SCRIPT=CONNINFO`: scripts whose transactions go to servers of their
//! own (a read script to the standbys, a write script to the primary). The scripts
//! are named as the report names them: a file path as given, or a builtin's full
//! name. Scripts given the same conninfo share a target, so a client holds one
//! connection per distinct server; scripts without `--target` use the run's own
//! connection (target 0, `default` in the report).

use pgrush_engine::Targets;
use pgrush_stats::TargetInfo;
use pgrush_wire::conninfo::{ConnParams, parse_conninfo, redact_argument, resolve};

use crate::options::{Options, ScriptSource, Workload};

/// The name of each script of the run, in order, as `--target` names it (the
/// default tpcb-like script when none was given).
pub fn script_names(opts: &Options) -> Vec<Vec<u8>> {
    if opts.scripts.is_empty() {
        return match opts.workload {
            Workload::Tpcc => Vec::new(),
            Workload::Pgbench => vec![b"tpcb-like".to_vec()],
        };
    }
    opts.scripts
        .iter()
        .map(|spec| match &spec.source {
            ScriptSource::Builtin(name) => name.as_bytes().to_vec(),
            ScriptSource::File(path) => path.clone(),
        })
        .collect()
}

/// The usage error of a `--target` that names no script of the run, or a script
/// given two targets; `None` when every target is fine.
pub fn usage_error(opts: &Options) -> Option<Vec<u8>> {
    let names = script_names(opts);
    for (i, target) in opts.targets.iter().enumerate() {
        let quoted = [b"\"".as_slice(), &target.script, b"\""].concat();
        if !names.contains(&target.script) {
            return Some(
                [
                    b"--target names script ".as_slice(),
                    &quoted,
                    b", which is not in the run (a -f file as given, or a builtin's full name, e.g. select-only)",
                ]
                .concat(),
            );
        }
        if opts.targets[..i].iter().any(|t| t.script == target.script) {
            return Some([b"--target given twice for script ".as_slice(), &quoted].concat());
        }
    }
    None
}

/// The run's targets, resolved: what the engine, the report and the server
/// statistics' samplers need.
#[derive(Debug, Default)]
pub struct ResolvedTargets {
    /// The engine's: each server's parameters and each script's target.
    pub engine: Targets,
    /// The report's: each target that has scripts, `default` first.
    pub infos: Vec<TargetInfo>,
    /// The servers other than the run's own: the index of each in `infos`, and its
    /// parameters (for `--server-stats`' sampler of that server).
    pub servers: Vec<(usize, ConnParams)>,
}

/// The engine's targets and the report's, with each conninfo resolved over the
/// run's settings (`main`, whose password is reused when the conninfo has none);
/// all empty without `--target`. An error is libpq's message for a bad conninfo.
pub fn resolve_targets(opts: &Options, main: &ConnParams) -> Result<ResolvedTargets, String> {
    if opts.targets.is_empty() {
        return Ok(ResolvedTargets::default());
    }
    let names = script_names(opts);
    let mut conninfos: Vec<&str> = Vec::new();
    let mut of_script = Vec::with_capacity(names.len());
    for name in &names {
        let target = match opts.targets.iter().find(|t| &t.script == name) {
            None => 0,
            Some(t) => match conninfos.iter().position(|c| *c == t.conninfo) {
                Some(k) => k + 1,
                None => {
                    conninfos.push(&t.conninfo);
                    conninfos.len()
                }
            },
        };
        of_script.push(target);
    }
    let mut servers = Vec::with_capacity(conninfos.len());
    for conninfo in &conninfos {
        servers.push(target_params(opts, main, conninfo)?);
    }
    let mut infos = Vec::new();
    let mut sampled = Vec::new();
    for target in 0..=conninfos.len() {
        let scripts: Vec<usize> = (0..of_script.len())
            .filter(|&s| of_script[s] == target)
            .collect();
        if scripts.is_empty() {
            continue;
        }
        let name = match target {
            0 => "default".to_string(),
            k => {
                sampled.push((infos.len(), servers[k - 1].clone()));
                redact_argument(conninfos[k - 1])
            }
        };
        infos.push(TargetInfo { name, scripts });
    }
    Ok(ResolvedTargets {
        engine: Targets { servers, of_script },
        infos,
        servers: sampled,
    })
}

/// The parameters of one target: the run's request with the conninfo's settings
/// applied last.
fn target_params(opts: &Options, main: &ConnParams, conninfo: &str) -> Result<ConnParams, String> {
    let mut request = opts.connect_request();
    request.extra = parse_conninfo(conninfo).map_err(|e| e.to_string())?;
    if !request.extra.iter().any(|(key, _)| key == "password") {
        request.password = main.password().map(str::to_string);
    }
    resolve(&request).map_err(|e| e.to_string())
}
