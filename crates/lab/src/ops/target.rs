//! Opening the server a [`Target`] names: a throwaway cluster, an existing local
//! cluster adopted with `--pgdata` ([`adopted`](super::adopted)), or a server named by
//! connection options.

use crate::ops::adopted;
use crate::ops::config::{OpsConfig, Target};
use crate::ops::error::OpsError;
use crate::ops::server::Server;

impl Server {
    /// Checks the programs the steps need, then starts the throwaway cluster,
    /// adopts the local one or connects to the named server.
    pub fn open(cfg: &OpsConfig) -> Result<Server, OpsError> {
        match &cfg.target {
            Target::Throwaway { bin_dir } => Server::start_throwaway(bin_dir.as_deref(), cfg),
            Target::DataDir(dir) => adopted::open(cfg, dir),
            Target::Server(request) => Server::connect(request, cfg),
        }
    }
}
