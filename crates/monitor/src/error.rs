//! Why sampling could not start ([`MonitorError`]).

/// Why sampling could not start.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The extra connection failed.
    #[error("could not connect for server statistics: {0}")]
    Connect(String),
    /// A query failed.
    #[error("could not read server statistics: {0}")]
    Query(String),
}

impl MonitorError {
    pub(crate) fn query(e: pgrush_wire::Error) -> MonitorError {
        MonitorError::Query(e.libpq_message(None))
    }
}
