//! Lost connections under `--reconnect`: each client's outage (from the failure
//! that lost its connection to its first successful transaction after it), the
//! servers it was on before and after, and the run's outage windows (overlapping
//! client outages joined).

use serde::Serialize;

/// Which server a client was connected to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerIdentity {
    /// The host (or socket directory) libpq reports for the connection.
    pub host: String,
    /// Its port.
    pub port: String,
    /// `pg_is_in_recovery()` (None when it could not be asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_recovery: Option<bool>,
    /// `system_identifier` of `pg_control_system()` (None when it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_identifier: Option<String>,
}

impl ServerIdentity {
    /// `host:port`, with ` (standby)` or ` (primary)` when known and `, system S`.
    pub fn describe(&self) -> String {
        let mut s = format!("{}:{}", self.host, self.port);
        match self.in_recovery {
            Some(true) => s.push_str(" (standby)"),
            Some(false) => s.push_str(" (primary)"),
            None => {}
        }
        if let Some(id) = &self.system_identifier {
            s.push_str(", system ");
            s.push_str(id);
        }
        s
    }
}

/// One client's outage: times in µs from the start of the measured run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientOutage {
    /// Global client number.
    pub client: u32,
    /// When the transaction that lost the connection failed.
    pub start_us: i64,
    /// When the client's first successful transaction after it ended (None: the run
    /// ended, or the client aborted, first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_us: Option<i64>,
    /// Transactions of the client that failed on a lost connection in the outage.
    pub failures: u64,
    /// SQLSTATE of the error the server ended the session with (None: the socket
    /// closed without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlstate: Option<String>,
    /// The server before the outage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<ServerIdentity>,
    /// The server after it (the connection the first success ran on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<ServerIdentity>,
}

impl ClientOutage {
    /// The SQLSTATE class of the cause: its first two characters, `08` (connection
    /// exception) for a socket that closed without an error.
    pub fn sqlstate_class(&self) -> &str {
        match &self.sqlstate {
            Some(code) if code.len() >= 2 => &code[..2],
            _ => "08",
        }
    }
}

/// Overlapping client outages joined: from the first failure to the last client's
/// first success.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutageWindow {
    /// First failure, µs from the start of the measured run.
    pub start_us: i64,
    /// Last client's first success (the end of the run when some client never had one).
    pub end_us: i64,
    /// Clients that lost their connection in it.
    pub clients: u32,
    /// Connection failures in it.
    pub failures: u64,
    /// The shortest client outage in it, µs.
    pub client_min_us: i64,
    /// The longest client outage in it, µs.
    pub client_max_us: i64,
    /// Whether some client had no success after it before the run ended.
    pub open: bool,
}

impl OutageWindow {
    /// Its length in µs.
    pub fn duration_us(&self) -> i64 {
        self.end_us - self.start_us
    }
}

/// Joins client outages that overlap into windows, in time order; an outage still
/// open at the end lasts until `run_end_us`.
pub fn outage_windows(outages: &[ClientOutage], run_end_us: i64) -> Vec<OutageWindow> {
    let mut sorted: Vec<&ClientOutage> = outages.iter().collect();
    sorted.sort_by_key(|o| (o.start_us, o.client));
    let mut windows: Vec<OutageWindow> = Vec::new();
    for o in sorted {
        let end = o.end_us.unwrap_or(run_end_us).max(o.start_us);
        let length = end - o.start_us;
        match windows.last_mut() {
            Some(w) if o.start_us <= w.end_us => {
                w.end_us = w.end_us.max(end);
                w.clients += 1;
                w.failures += o.failures;
                w.client_min_us = w.client_min_us.min(length);
                w.client_max_us = w.client_max_us.max(length);
                w.open |= o.end_us.is_none();
            }
            _ => windows.push(OutageWindow {
                start_us: o.start_us,
                end_us: end,
                clients: 1,
                failures: o.failures,
                client_min_us: length,
                client_max_us: length,
                open: o.end_us.is_none(),
            }),
        }
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(client: u32, start_us: i64, end_us: Option<i64>) -> ClientOutage {
        ClientOutage {
            client,
            start_us,
            end_us,
            failures: 1,
            sqlstate: None,
            before: None,
            after: None,
        }
    }

    #[test]
    fn overlapping_outages_make_one_window() {
        let w = outage_windows(
            &[
                outage(1, 1_000, Some(3_000)),
                outage(0, 1_500, Some(2_000)),
                outage(2, 10_000, None),
            ],
            12_000,
        );
        assert_eq!(w.len(), 2);
        assert_eq!(
            (w[0].start_us, w[0].end_us, w[0].clients),
            (1_000, 3_000, 2)
        );
        assert_eq!((w[0].client_min_us, w[0].client_max_us), (500, 2_000));
        assert!(!w[0].open);
        assert_eq!(
            (w[1].start_us, w[1].end_us, w[1].open),
            (10_000, 12_000, true)
        );
        assert_eq!(w[1].duration_us(), 2_000);
    }

    #[test]
    fn class_of_the_cause() {
        let mut o = outage(0, 0, None);
        assert_eq!(o.sqlstate_class(), "08");
        o.sqlstate = Some("57P01".into());
        assert_eq!(o.sqlstate_class(), "57");
    }
}
