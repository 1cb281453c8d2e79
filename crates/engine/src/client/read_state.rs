//! What is known while reading the results of the command in flight: expected
//! ReadyForQuery messages, pending preparations, rows and `\gset`/`\aset` values.

use std::collections::VecDeque;

use pgrush_script::GsetKind;
use pgrush_wire::{DataRow, PlainTally, RowDescription};

/// Progress of reading the results of the command in flight.
#[derive(Debug, Default)]
pub(super) struct ReadState {
    /// ReadyForQuery messages still expected.
    pub(super) syncs_left: u32,
    /// Leading ReadyForQuery messages that close lazy preparations (their errors are only logged).
    pub(super) prepare_syncs: u32,
    /// Statement texts of the pending preparations (for error positions), oldest first.
    pub(super) prepare_texts: VecDeque<usize>,
    /// Commands sent in the current pipeline whose result has not been read yet,
    /// oldest first (an error's `LINE n:` display shows that command's text).
    pub(super) pipeline_cmds: VecDeque<usize>,
    /// Result number within the command (`\;` compounds in simple mode).
    pub(super) qrynum: u32,
    /// An error was seen: results are discarded up to the last ReadyForQuery.
    pub(super) failed: bool,
    /// Reading an `\endpipeline`'s results, a sync's result came and the query
    /// after it has not ended: pgbench reads on without a new `receiving` line.
    pub(super) after_sync: bool,
    /// `\gset`/`\aset` of the command in flight.
    pub(super) gset: Option<GsetKind>,
    /// Rows in the current result and whether it had a RowDescription (`completed`
    /// is only the fast path's scratch count, taken at once).
    pub(super) current: PlainTally,
    /// Column names of the current result (`\gset`/`\aset` only).
    pub(super) names: TextRow,
    /// Values of the last row of the current result (`\gset`/`\aset` only).
    pub(super) values: TextRow,
    /// Rows and tuple flag of the last completed result (`\gset`).
    pub(super) last: Option<(u64, bool)>,
    /// Column names of the last completed result (`\gset`).
    pub(super) last_names: TextRow,
    /// Values of the last completed result (`\gset`).
    pub(super) last_values: TextRow,
}

/// A row of optional texts (the server's bytes) in one reusable buffer (no
/// allocation once warm).
#[derive(Debug, Default)]
pub(super) struct TextRow {
    text: Vec<u8>,
    cells: Vec<Option<(usize, usize)>>,
}

impl TextRow {
    /// Empties the row, keeping its buffers.
    fn clear(&mut self) {
        self.text.clear();
        self.cells.clear();
    }

    /// Appends a cell (`None` = SQL NULL), bytes as received.
    fn push(&mut self, cell: Option<&[u8]>) {
        let cell = cell.map(|b| {
            let start = self.text.len();
            self.text.extend_from_slice(b);
            (start, self.text.len())
        });
        self.cells.push(cell);
    }

    /// The cells in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        self.cells
            .iter()
            .map(|c| c.and_then(|(s, e)| self.text.get(s..e)))
    }
}

impl ReadState {
    /// A new command outside a pipeline: nothing expected, buffers kept.
    pub(super) fn reset(&mut self) {
        self.syncs_left = 0;
        self.prepare_syncs = 0;
        self.prepare_texts.clear();
        self.pipeline_cmds.clear();
    }

    /// RowDescription: a result with rows starts (`\gset`/`\aset` keep the names).
    #[inline]
    pub(super) fn row_description(&mut self, rd: &RowDescription<'_>) {
        self.current.tuples = true;
        self.current.rows = 0;
        if self.gset.is_some() {
            self.names.clear();
            for f in rd.fields() {
                self.names.push(Some(f.name));
            }
        }
    }

    /// DataRow: counted; `\gset`/`\aset` keep the last one's values.
    #[inline]
    pub(super) fn data_row(&mut self, row: &DataRow<'_>) {
        self.current.rows += 1;
        if self.gset.is_some() {
            self.values.clear();
            for v in row.fields() {
                self.values.push(v);
            }
        }
    }

    /// Starts reading the results of a command with `\gset`/`\aset` `gset`.
    pub(super) fn begin(&mut self, gset: Option<GsetKind>) {
        self.qrynum = 0;
        self.failed = false;
        self.gset = gset;
        self.current.end_result();
        self.last = None;
    }
}
