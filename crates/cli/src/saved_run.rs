//! Reading a run saved with `--json` (`pgrush report`, `pgrush merge`).

use pgrush_report::document::RunDocument;
use pgrush_run::Failure;
use pgrush_wire::conninfo::redact_argv;

/// Reads a run document (`-` = stdin), streaming it from the file (its text is never
/// held whole), secrets of its command line redacted.
pub fn read_run(path: &str) -> Result<RunDocument, Failure> {
    let parsed = if path == "-" {
        RunDocument::from_reader(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(|e| {
            Failure::error(format!(
                "could not open file \"{path}\": {}",
                pgrush_wire::strerror(&e)
            ))
        })?;
        RunDocument::from_reader(file)
    };
    let mut doc = parsed.map_err(|e| Failure::error(format!("\"{path}\": {e}")))?;
    // A document of an older pgrush may hold a password: never repeat it.
    doc.command_line = redact_argv(&doc.command_line);
    Ok(doc)
}
