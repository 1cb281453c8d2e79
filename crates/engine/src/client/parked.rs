//! A connection to a target (`--target`) that the client's current transaction does not
//! use, kept aside with what belongs to it (see the `targets` module).

use pgrush_stats::ServerIdentity;

use super::outage::Outage;

/// A connection to a target not in use by the current transaction.
pub(crate) struct Parked<C> {
    /// The connection (None: not opened, closed under `-C`, or lost).
    pub(super) conn: Option<C>,
    /// The server it identified (`--reconnect`).
    pub(super) server: Option<Box<ServerIdentity>>,
    /// Its outage in progress (`--reconnect`): each connection reconnects on its own.
    pub(super) outage: Option<Box<Outage>>,
}

impl<C> Default for Parked<C> {
    fn default() -> Self {
        Parked {
            conn: None,
            server: None,
            outage: None,
        }
    }
}
