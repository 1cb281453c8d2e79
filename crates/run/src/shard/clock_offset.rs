//! This machine's clock against the server's: a few `clock_timestamp()` round trips,
//! the one with the shortest round trip kept (NTP's idea, one server).

use pgrush_stats::wall_clock::unix_time_us;
use pgrush_wire::Connection;

/// Round trips made to estimate the offset.
pub const PROBES: usize = 8;

/// The server's clock, Unix µs.
pub const SERVER_NOW_SQL: &str =
    "select (extract(epoch from pg_catalog.clock_timestamp()) * 1000000)::bigint";

/// One round trip: this machine's clock before and after, the server's in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Local Unix µs when the query was sent.
    pub sent_us: i64,
    /// The server's Unix µs.
    pub server_us: i64,
    /// Local Unix µs when the answer came.
    pub received_us: i64,
}

/// The estimated offset of this machine's clock from the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOffset {
    /// Local clock minus server clock, µs.
    pub offset_us: i64,
    /// Half the best round trip, µs: the offset is right within this.
    pub uncertainty_us: i64,
}

impl ClockOffset {
    /// The local instant of the server instant `server_us`.
    pub fn to_local(self, server_us: i64) -> i64 {
        server_us + self.offset_us
    }

    /// The server instant of the local instant `local_us`.
    pub fn to_server(self, local_us: i64) -> i64 {
        local_us - self.offset_us
    }
}

/// The offset from the probe with the shortest round trip (`None` without probes).
pub fn best(probes: &[Probe]) -> Option<ClockOffset> {
    let p = probes.iter().min_by_key(|p| p.received_us - p.sent_us)?;
    let rtt = (p.received_us - p.sent_us).max(0);
    let midpoint = p.sent_us + rtt / 2;
    Some(ClockOffset {
        offset_us: midpoint - p.server_us,
        uncertainty_us: (rtt + 1) / 2,
    })
}

/// The server's clock now, Unix µs (one round trip).
pub fn server_now_us(con: &mut Connection) -> Result<i64, String> {
    let results = con
        .simple_query(SERVER_NOW_SQL)
        .map_err(|e| e.to_string())?;
    let text = results.first().and_then(|r| r.get(0, 0)).unwrap_or("");
    text.parse()
        .map_err(|_| format!("unexpected server time \"{text}\""))
}

/// Estimates the offset with [`PROBES`] round trips on `con`.
pub fn estimate(con: &mut Connection) -> Result<ClockOffset, String> {
    let mut probes = Vec::with_capacity(PROBES);
    for _ in 0..PROBES {
        let sent_us = unix_time_us();
        let server_us = server_now_us(con)?;
        let received_us = unix_time_us();
        probes.push(Probe {
            sent_us,
            server_us,
            received_us,
        });
    }
    best(&probes).ok_or_else(|| "no clock probe".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_wins() {
        let probes = [
            Probe {
                sent_us: 1000,
                server_us: 600,
                received_us: 1400,
            },
            Probe {
                sent_us: 2000,
                server_us: 1540,
                received_us: 2100,
            },
            Probe {
                sent_us: 3000,
                server_us: 2700,
                received_us: 3300,
            },
        ];
        let o = best(&probes).expect("probes");
        assert_eq!(
            o,
            ClockOffset {
                offset_us: 510,
                uncertainty_us: 50
            }
        );
        assert_eq!(o.to_local(1540), 2050);
        assert_eq!(o.to_server(2050), 1540);
        assert_eq!(best(&[]), None);
    }
}
