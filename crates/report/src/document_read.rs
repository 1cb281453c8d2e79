//! Reading a run document back ([`RunDocument::from_json`], [`RunDocument::from_reader`]):
//! its `format` and version, its percentiles, and every HDR histogram, decoded once when
//! the document is read, so a histogram that cannot be read back (corrupt, or claiming
//! more than a histogram can hold) is an error naming its field rather than an empty
//! distribution later.

use crate::document::{
    Distribution, DocumentError, FORMAT, FORMAT_VERSION, IntervalDoc, RunDocument,
};
use crate::hdr;
use crate::percentiles::PercentileList;

impl RunDocument {
    /// Parses a document (any JSON that matches the model), checking `format` and
    /// that every HDR histogram can be read back (see [`hdr::decode`]'s bounds).
    pub fn from_json(text: &str) -> Result<Self, DocumentError> {
        let doc: RunDocument =
            serde_json::from_str(text).map_err(|e| DocumentError::Json(e.to_string()))?;
        doc.checked()
    }

    /// [`RunDocument::from_json`] from a reader (a file, stdin), without holding the text:
    /// the reader is buffered here.
    pub fn from_reader(reader: impl std::io::Read) -> Result<Self, DocumentError> {
        let doc: RunDocument = serde_json::from_reader(std::io::BufReader::new(reader))
            .map_err(|e| DocumentError::Json(e.to_string()))?;
        doc.checked()
    }

    /// The document when its `format`, version and histograms are readable.
    fn checked(self) -> Result<Self, DocumentError> {
        let doc = self;
        if doc.format != FORMAT {
            return Err(DocumentError::Format(doc.format));
        }
        if doc.format_version != FORMAT_VERSION {
            return Err(DocumentError::Version(doc.format_version));
        }
        doc.check_percentiles()?;
        check(&doc)?;
        Ok(doc)
    }

    /// Refuses percentiles that `--percentiles` refuses: in the saved list
    /// (`percentiles`) and as the `p` of any stored percentile value.
    fn check_percentiles(&self) -> Result<(), DocumentError> {
        let refuse = |field: &'static str| move |e| DocumentError::Percentile(field, e);
        PercentileList::from_values(self.percentiles.clone()).map_err(refuse("percentiles"))?;
        let scripts = self.scripts.iter().flat_map(|s| {
            let commands = s.commands.iter().filter_map(|c| c.latency.as_ref());
            s.latency.iter().chain(commands)
        });
        let distributions = self.latency.iter().chain(&self.lag).chain(scripts);
        let intervals = self.time_series.iter().flat_map(|t| &t.intervals);
        let parts = intervals.clone().flat_map(|i| {
            let scripts = i.scripts.iter().map(|s| &s.latency);
            scripts.chain(i.commands.iter().map(|c| &c.latency))
        });
        let stored = distributions
            .flat_map(|d| &d.percentiles)
            .chain(intervals.flat_map(|i| &i.latency_percentiles))
            .chain(parts.flat_map(|l| &l.latency_percentiles));
        PercentileList::from_values(stored.map(|v| v.p).collect()).map_err(refuse("p"))?;
        Ok(())
    }
}

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

/// Decodes the histograms of an interval's per-script and per-command entries.
fn check_interval_parts(i: usize, interval: &IntervalDoc) -> Result<(), DocumentError> {
    let scripts = interval
        .scripts
        .iter()
        .enumerate()
        .map(|(k, s)| ("scripts", k, &s.latency));
    let commands = interval.commands.iter().enumerate();
    let commands = commands.map(|(k, c)| ("commands", k, &c.latency));
    for (list, k, latency) in scripts.chain(commands) {
        if let Some(text) = &latency.latency_histogram {
            let field = || format!("time_series.intervals[{i}].{list}[{k}].latency_histogram");
            check_one(field, text)?;
        }
    }
    Ok(())
}

/// Decodes every histogram of `doc`: the latency and lag distributions, those of each
/// script and command, and each interval's.
fn check(doc: &RunDocument) -> Result<(), DocumentError> {
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
            check_interval_parts(i, interval)?;
        }
    }
    Ok(())
}
