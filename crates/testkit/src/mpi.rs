//! Running programs under Open MPI's launcher (Debian's `openmpi-bin`) on this machine:
//! `mpirun -np N --oversubscribe PROGRAM`, as root too, with no network but loopback.
//!
//! `mpirun` gives each process `OMPI_COMM_WORLD_RANK` and `OMPI_COMM_WORLD_SIZE` (and
//! PMIx's `PMIX_RANK`). The programs need not call `MPI_Init`: pgrush only reads the
//! variables. Open MPI refuses to run as root unless both `OMPI_ALLOW_RUN_AS_ROOT` and
//! `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM` are set (or `--allow-run-as-root` is given), which
//! [`mpirun`] does.
//!
//! ```no_run
//! let out = pgrush_testkit::run(
//!     pgrush_testkit::mpi::mpirun(4).args(["printenv", "OMPI_COMM_WORLD_RANK"]),
//! );
//! assert_eq!(out.code, 0);
//! ```

use std::process::Command;

/// The `mpirun` arguments that keep Open MPI on this machine, over loopback, with more
/// processes than CPUs allowed.
pub const LOCAL_ARGS: [&str; 7] = [
    "--oversubscribe",
    "--mca",
    "btl",
    "self",
    "--mca",
    "oob_tcp_if_include",
    "lo",
];

/// The variables that let Open MPI run as root.
pub const ROOT_ENV: [(&str, &str); 2] = [
    ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
    ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
];

/// `mpirun -np PROCESSES` with [`LOCAL_ARGS`] and [`ROOT_ENV`], with every inherited
/// launcher variable removed ([`crate::clear_launcher_env`], so an outer launcher does not
/// leak in): add the program and its arguments.
pub fn mpirun(processes: u32) -> Command {
    let mut cmd = Command::new("mpirun");
    crate::clear_launcher_env(&mut cmd);
    cmd.envs(ROOT_ENV)
        .arg("-np")
        .arg(processes.to_string())
        .args(LOCAL_ARGS);
    cmd
}
