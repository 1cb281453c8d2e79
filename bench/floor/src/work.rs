//! What a client runs: one of pgbench's builtin scripts (fixed statements whose
//! parameters are overwritten in place, [`Transaction`]) or the TPC-C-like New-Order of
//! pgrush's client mode ([`NewOrder`], statements written per round trip).

use crate::tpcc_new_order::NewOrder;
use crate::workload::Transaction;

/// One client's transactions.
#[derive(Debug)]
pub enum Work {
    /// select-only or tpcb-like.
    Fixed(Transaction),
    /// The New-Order of `tpcc-client-new-order`.
    NewOrder(Box<NewOrder>),
}

impl Work {
    /// Whether the responses' first rows are read (a buffer that keeps them is needed).
    pub fn reads_rows(&self) -> bool {
        matches!(self, Work::NewOrder(_))
    }

    /// Draws the first transaction's parameters.
    pub fn draw(&mut self) {
        match self {
            Work::Fixed(t) => t.draw(),
            Work::NewOrder(o) => o.draw(),
        }
    }

    /// The bytes of round trip `command`.
    pub fn bytes(&self, command: usize) -> &[u8] {
        match self {
            Work::Fixed(t) => &t.commands[command].bytes,
            Work::NewOrder(o) => o.bytes(),
        }
    }

    /// What follows the response to round trip `command` (whose first DataRow is `row`):
    /// the round trip to send next, or `None` when the client is done (`more`: whether a
    /// new transaction may start). `completed` counts the transactions that ended.
    pub fn after_response(
        &mut self,
        command: usize,
        row: &[u8],
        more: bool,
        completed: &mut u64,
    ) -> Option<usize> {
        match self {
            Work::Fixed(t) => t.after_response(command, more, completed),
            Work::NewOrder(o) => {
                if o.after_response(row) {
                    return Some(command + 1);
                }
                *completed += 1;
                if !more {
                    return None;
                }
                o.draw();
                Some(0)
            }
        }
    }
}
