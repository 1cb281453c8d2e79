//! Every HDR histogram of a run document, decoded once when the document is read, so a
//! histogram that cannot be read back (corrupt, or claiming more than a histogram can
//! hold) is an error naming its field rather than an empty distribution later.

use crate::document::{Distribution, DocumentError, RunDocument};
use crate::hdr;

/// Checks `text` (one histogram, at `field`); an empty text means "not available".
fn check_one(field: impl FnOnce() -> String, text: &str) -> Result<(), DocumentError> {
    if text.is_empty() {
        return Ok(());
    }
    hdr::check(text).map_err(|error| DocumentError::Histogram {
        field: field(),
        error,
    })
}

fn check_distribution(at: &str, dist: Option<&Distribution>) -> Result<(), DocumentError> {
    match dist {
        Some(d) => check_one(|| format!("{at}.hdr_histogram"), &d.hdr_histogram),
        None => Ok(()),
    }
}

/// Decodes every histogram of `doc`: the latency and lag distributions, those of each
/// script and command, and each interval's.
pub(crate) fn check(doc: &RunDocument) -> Result<(), DocumentError> {
    check_distribution("latency", doc.latency.as_ref())?;
    check_distribution("lag", doc.lag.as_ref())?;
    for (i, script) in doc.scripts.iter().enumerate() {
        check_distribution(&format!("scripts[{i}].latency"), script.latency.as_ref())?;
        for (j, command) in script.commands.iter().enumerate() {
            let at = format!("scripts[{i}].commands[{j}].latency");
            check_distribution(&at, command.latency.as_ref())?;
        }
    }
    if let Some(ts) = &doc.time_series {
        for (i, interval) in ts.intervals.iter().enumerate() {
            if let Some(text) = &interval.latency_histogram {
                let field = || format!("time_series.intervals[{i}].latency_histogram");
                check_one(field, text)?;
            }
        }
    }
    Ok(())
}
