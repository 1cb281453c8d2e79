//! Loading the plan's scripts: builtins by name, files from disk or standard input
//! (or the text the parser already read), parsed and, outside the simple protocol,
//! checked for parameters.

use std::os::unix::ffi::OsStrExt;

use pgrush_script::{RawMessage, Script};
use pgrush_stats::QueryMode;

use crate::failure::Failure;
use crate::options::ScriptSource;
use crate::plan::RunPlan;

/// A script's name, weight and text (a builtin's text is empty): what the workload
/// digest of a sharded run covers.
pub type ScriptFacts = (Vec<u8>, u32, Vec<u8>);

/// `<what> "<path>": <strerror>` (the path's bytes as given).
fn file_error(what: &str, path: &[u8], e: &std::io::Error) -> Failure {
    let mut msg = format!("{what} \"").into_bytes();
    msg.extend_from_slice(path);
    msg.extend_from_slice(b"\": ");
    msg.extend_from_slice(pgrush_wire::strerror(e).as_bytes());
    Failure::error(msg)
}

/// The text of script file `path` (`-`: standard input).
fn file_text(path: &[u8]) -> Result<Vec<u8>, Failure> {
    if path == b"-" {
        let mut s = Vec::new();
        return std::io::Read::read_to_end(&mut std::io::stdin(), &mut s)
            .map(|_| s)
            .map_err(|e| file_error("could not read file", path, &e));
    }
    std::fs::read(std::ffi::OsStr::from_bytes(path))
        .map_err(|e| file_error("could not open file", path, &e))
}

/// Loads every script of `plan`, in order, with the facts the workload digest covers.
pub fn load(plan: &RunPlan) -> Result<(Vec<Script>, Vec<ScriptFacts>), Failure> {
    let mut scripts = Vec::new();
    let mut facts = Vec::new();
    for spec in &plan.scripts {
        let script = match &spec.source {
            ScriptSource::Builtin(name) => {
                let b = pgrush_script::builtin_by_name(name)
                    .ok_or_else(|| Failure::error(format!("no builtin script \"{name}\"")))?;
                let script = match &spec.text {
                    Some(own) => pgrush_script::load_script(b.desc, own, spec.weight),
                    None => b.load(spec.weight),
                };
                let text = spec.text.clone().unwrap_or_default();
                facts.push((name.clone().into_bytes(), spec.weight, text));
                script
            }
            ScriptSource::File(path) => {
                let text = match &spec.text {
                    Some(text) => text.clone(),
                    None => file_text(path)?,
                };
                let script = pgrush_script::load_script(path, &text, spec.weight);
                facts.push((path.clone(), spec.weight, text));
                script
            }
        };
        scripts.push(script.map_err(|e| Failure::error(e.to_bytes()))?);
    }
    if plan.options.query_mode != QueryMode::Simple {
        for s in &scripts {
            s.check_parameters()
                .map_err(|e| Failure::error(e.to_bytes()))?;
        }
    }
    Ok((scripts, facts))
}
