//! Running programs under MPI launchers on this machine: Open MPI's `mpirun` (Debian's
//! `openmpi-bin`: `mpirun -np N --oversubscribe PROGRAM`, as root too, with no network but
//! loopback) and MPICH's Hydra (Debian's `mpich`: `mpiexec.hydra -n N PROGRAM`).
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

/// Open MPI's launcher: Debian's `mpirun.openmpi` when it is there (`mpirun` may be
/// MPICH's, by the alternatives system), else `mpirun`.
pub fn open_mpi_launcher() -> &'static str {
    let debian = std::path::Path::new("/usr/bin/mpirun.openmpi");
    if debian.exists() {
        "/usr/bin/mpirun.openmpi"
    } else {
        "mpirun"
    }
}

/// `mpirun -np PROCESSES` (Open MPI's, [`open_mpi_launcher`]) with [`LOCAL_ARGS`] and [`ROOT_ENV`], with every inherited
/// launcher variable removed ([`crate::clear_launcher_env`], so an outer launcher does not
/// leak in): add the program and its arguments.
pub fn mpirun(processes: u32) -> Command {
    let mut cmd = Command::new(open_mpi_launcher());
    crate::clear_launcher_env(&mut cmd);
    cmd.envs(ROOT_ENV)
        .arg("-np")
        .arg(processes.to_string())
        .args(LOCAL_ARGS);
    cmd
}

/// MPICH's launcher, Hydra (Debian's `mpich`).
pub const HYDRA_LAUNCHER: &str = "mpiexec.hydra";

/// `mpiexec.hydra -n PROCESSES`, with every inherited launcher variable removed: add the
/// program and its arguments. Each process gets PMI's `PMI_RANK` and `PMI_SIZE` (and
/// `PMI_FD`); Hydra runs as root without being told and passes the whole environment.
pub fn hydra(processes: u32) -> Command {
    let mut cmd = Command::new(HYDRA_LAUNCHER);
    crate::clear_launcher_env(&mut cmd);
    cmd.arg("-n").arg(processes.to_string());
    cmd
}
