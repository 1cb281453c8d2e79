//! Where a run sits in a sharded benchmark: its clients' global ids and the
//! agreed instant at which its measured interval starts.

/// A run's place in a benchmark run as several processes (shards). The default is
/// a run of its own: clients from 0, measuring as soon as every client is connected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    /// Global id of the first client (`:client_id`, `-l` and `--debug` lines): the
    /// clients are `first_client ..= first_client + clients - 1`.
    pub first_client: u32,
    /// When the measured interval starts, Unix µs on this machine's clock: the
    /// clients connect first, then wait for this instant; `-T` counts from it.
    /// `None`: at once after the initial connections (pgbench's behaviour).
    pub start_at_unix_us: Option<i64>,
}

impl Placement {
    /// Global id of the `local`-th client of this run; `None` past `u32::MAX`.
    pub fn global_client_id(&self, local: u32) -> Option<u32> {
        self.first_client.checked_add(local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ids_start_at_the_first_client() {
        let p = Placement {
            first_client: 6,
            start_at_unix_us: None,
        };
        assert_eq!(p.global_client_id(0), Some(6));
        assert_eq!(p.global_client_id(1), Some(7));
        let last = Placement {
            first_client: u32::MAX,
            start_at_unix_us: None,
        };
        assert_eq!(last.global_client_id(1), None);
        assert_eq!(Placement::default().global_client_id(3), Some(3));
    }
}
