//! Query cancellation: a CancelRequest sent over a fresh connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;

use crate::error::{Error, strerror};

/// Where the server that holds the session listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CancelTarget {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Cancels the query running on a connection (`PQcancel`); cheap to clone, `Send`.
#[derive(Debug, Clone)]
pub struct CancelToken {
    target: Option<CancelTarget>,
    process_id: i32,
    secret_key: Vec<u8>,
}

impl CancelToken {
    pub(crate) fn new(target: Option<CancelTarget>, process_id: i32, secret_key: Vec<u8>) -> Self {
        CancelToken {
            target,
            process_id,
            secret_key,
        }
    }

    /// Sends the CancelRequest and waits for the server to close that socket.
    /// Errors use libpq's PQcancel wording.
    pub fn cancel(&self) -> Result<(), Error> {
        let mut msg = Vec::with_capacity(12 + self.secret_key.len());
        let len = (12 + self.secret_key.len()) as u32;
        msg.extend_from_slice(&len.to_be_bytes());
        msg.extend_from_slice(&80877102u32.to_be_bytes());
        msg.extend_from_slice(&self.process_id.to_be_bytes());
        msg.extend_from_slice(&self.secret_key);
        let connect_err = |e: std::io::Error| {
            Error::Usage(format!("could not connect to server: {}", strerror(&e)))
        };
        let send_err = |e: std::io::Error| {
            Error::Usage(format!("could not send cancel packet: {}", strerror(&e)))
        };
        let mut buf = [0u8; 16];
        match &self.target {
            Some(CancelTarget::Tcp(addr)) => {
                let mut s = TcpStream::connect(addr).map_err(connect_err)?;
                s.write_all(&msg).map_err(send_err)?;
                // The server closes the socket once the request is processed.
                let _ = s.read(&mut buf);
            }
            Some(CancelTarget::Unix(path)) => {
                let mut s = crate::connect::connect_unix(path).map_err(connect_err)?;
                s.write_all(&msg).map_err(send_err)?;
                let _ = s.read(&mut buf);
            }
            None => return Err(Error::Usage("no connection to the server".into())),
        }
        Ok(())
    }
}
