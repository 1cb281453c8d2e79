//! Disk space: what a scale needs (estimated before it runs) and what is free.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::ops::config::{DumpFormat, OpsConfig, StepKind};
use crate::ops::error::OpsError;

/// Heap bytes per scale unit at fillfactor 100 (measured on 18: 65 MB for scale 5).
const HEAP_PER_SCALE: f64 = 13.0e6;
/// Index bytes per scale unit.
const INDEX_PER_SCALE: f64 = 2.1e6;
/// WAL a workload of one second may write (tpcb-like on a fast disk), bytes.
const WORKLOAD_WAL_PER_SECOND: f64 = 30.0e6;
/// Room for the cluster's own files, WAL segments kept around, and the estimate's error.
const FIXED_BYTES: f64 = 256.0e6;
/// The estimate is multiplied by this.
const MARGIN: f64 = 1.2;

/// Bytes `cfg`'s steps need at `scale`, beyond what the cluster already holds.
pub fn estimate(cfg: &OpsConfig, scale: u32) -> u64 {
    let scale = f64::from(scale);
    let fill = f64::from(cfg.init.fillfactor.clamp(10, 100));
    let heap = HEAP_PER_SCALE * scale * 100.0 / fill;
    let db = heap + INDEX_PER_SCALE * scale;
    let has = |s: StepKind| cfg.steps.contains(&s);
    // The load writes the tables and about as much WAL (recycled past max_wal_size).
    let mut need = db + db.min(1.0e9);
    if has(StepKind::Dump) {
        need += match cfg.dump_format {
            DumpFormat::Plain | DumpFormat::Tar => heap * 0.6,
            DumpFormat::Custom | DumpFormat::Directory => heap * 0.1,
        };
    }
    if has(StepKind::Restore) {
        need += db;
    }
    if has(StepKind::Reindex) {
        need += INDEX_PER_SCALE * scale;
    }
    if has(StepKind::Basebackup) {
        need += db;
    }
    let workload = WORKLOAD_WAL_PER_SECOND * f64::from(cfg.workload_seconds);
    if has(StepKind::CrashRecovery) {
        need += workload;
    }
    if has(StepKind::Pitr) {
        // Base backup, its restored copy, and the archive.
        need += 2.0 * db + 2.0 * workload;
    }
    if has(StepKind::Switchover) || has(StepKind::Failover) {
        // The standby's copy, and the workload's WAL on both servers.
        need += db + 2.0 * workload;
    }
    ((need + FIXED_BYTES) * MARGIN) as u64
}

/// Bytes free for an unprivileged user on the file system holding `dir` (`statvfs`).
pub fn free_bytes(dir: &Path) -> Result<u64, OpsError> {
    let path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| OpsError::Unexpected(format!("{}: NUL in path", dir.display())))?;
    // SAFETY: statvfs is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `st` a live statvfs.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(OpsError::io(
            format!("statvfs {}", dir.display()),
            std::io::Error::last_os_error(),
        ));
    }
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    let (blocks, size) = (st.f_bavail as u64, st.f_frsize as u64);
    Ok(blocks.saturating_mul(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(steps: &[StepKind], fillfactor: u32) -> OpsConfig {
        OpsConfig {
            scales: vec![1],
            steps: steps.to_vec(),
            jobs: 1,
            dump_format: DumpFormat::Custom,
            repeat: 1,
            workload_seconds: 10,
            workload_clients: 4,
            init: pgrush_init::InitConfig {
                fillfactor,
                ..pgrush_init::InitConfig::default()
            },
            target: crate::ops::Target::Throwaway { bin_dir: None },
            pgrush_exe: "pgrush".into(),
            sync_standby: false,
        }
    }

    #[test]
    fn the_estimate_grows_with_scale_steps_and_lower_fillfactor() {
        let load = config(&[StepKind::Load], 100);
        let all = config(&StepKind::ALL, 100);
        // Load at scale 100: 1.51 GB of tables, 1 GB of WAL, the fixed part; +20 %.
        let expected = ((1.51e9 + 1.0e9 + FIXED_BYTES) * MARGIN) as u64;
        assert!(
            estimate(&load, 100).abs_diff(expected) < 1_000_000,
            "{}",
            estimate(&load, 100)
        );
        assert!(estimate(&load, 10) < estimate(&load, 100));
        assert!(estimate(&all, 100) > 3 * estimate(&load, 100) / 2);
        assert!(estimate(&config(&[StepKind::Load], 50), 100) > estimate(&load, 100));
        let plain = OpsConfig {
            dump_format: DumpFormat::Plain,
            ..config(&[StepKind::Load, StepKind::Dump], 100)
        };
        let custom = config(&[StepKind::Load, StepKind::Dump], 100);
        assert!(estimate(&plain, 10) > estimate(&custom, 10));
    }

    #[test]
    fn free_space_of_the_temp_dir_is_known() {
        assert!(free_bytes(&std::env::temp_dir()).unwrap() > 0);
        assert!(free_bytes(Path::new("/no/such/dir")).is_err());
    }
}
