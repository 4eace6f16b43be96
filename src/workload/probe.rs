//! What a workload may learn about the server besides its own connections.

/// The server's process and counters. Every method has a default that knows nothing.
pub trait ServerProbe {
    /// The server's process id, when it runs on this machine.
    fn server_pid(&mut self) -> Option<u32> {
        None
    }
    /// `SHOW GLOBAL STATUS`.
    fn global_status(&mut self) -> Option<Vec<(String, String)>> {
        None
    }
    /// `SELECT VERSION()`.
    fn server_version(&mut self) -> Option<String> {
        None
    }
    /// `Err` with a one-line reason when the server is known to have stopped (checked after a failure,
    /// for a better message).
    fn check_alive(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// A probe that knows nothing (a remote server).
pub struct NoProbe;
impl ServerProbe for NoProbe {}
