//! systemd's readiness protocol (`sd_notify`), so that a unit with
//! `Type=notify` knows when htaccel serves (after every listener is bound
//! and privileges are dropped), when it reloads and stops, and, with
//! `WatchdogSec=`, that it is still alive.
//!
//! The protocol is one datagram per state change, `KEY=VALUE` lines, sent
//! to the Unix socket named by `$NOTIFY_SOCKET` (a path, or an abstract
//! name written with a leading `@`). Five lines of socket code do not
//! warrant a crate; without `$NOTIFY_SOCKET` (not started by systemd)
//! every call does nothing.

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

/// Where the service manager listens, read once at start.
#[derive(Clone, Debug)]
pub struct Notifier {
    socket: Option<String>,
    watchdog: Option<Duration>,
}

impl Notifier {
    /// From the environment systemd sets: `NOTIFY_SOCKET`, and
    /// `WATCHDOG_USEC` when `WATCHDOG_PID` is unset or this process.
    pub fn from_env() -> Notifier {
        let socket = std::env::var("NOTIFY_SOCKET")
            .ok()
            .filter(|s| !s.is_empty());
        let for_us = std::env::var("WATCHDOG_PID")
            .ok()
            .is_none_or(|p| p.parse::<u32>().ok() == Some(std::process::id()));
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&us| us > 0 && for_us)
            .map(Duration::from_micros);
        Notifier { socket, watchdog }
    }

    /// Tells the service manager `state` (e.g. `READY=1`). Failures are
    /// returned for the caller to log; the server runs on regardless.
    pub fn notify(&self, state: &str) -> std::io::Result<()> {
        let Some(path) = &self.socket else {
            return Ok(());
        };
        let socket = UnixDatagram::unbound()?;
        match path.strip_prefix('@') {
            Some(name) => {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
                socket.send_to_addr(state.as_bytes(), &addr)?;
            }
            None => {
                socket.send_to(state.as_bytes(), path)?;
            }
        }
        Ok(())
    }

    /// How often to say `WATCHDOG=1`: half the manager's interval, as
    /// sd_watchdog_enabled(3) advises; `None` without a watchdog.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog.map(|d| d / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::Notifier;
    use std::os::unix::net::UnixDatagram;
    use std::time::Duration;

    #[test]
    fn states_reach_the_socket_by_path_and_by_abstract_name() {
        let dir = std::env::temp_dir().join(format!("htaccel-sdnotify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier {
            socket: Some(path.to_string_lossy().into_owned()),
            watchdog: Some(Duration::from_secs(30)),
        };
        n.notify("READY=1\nSTATUS=serving").unwrap();
        let mut buf = [0u8; 64];
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=serving");
        assert_eq!(n.watchdog_interval(), Some(Duration::from_secs(15)));

        use std::os::linux::net::SocketAddrExt;
        let name = format!("htaccel-sdnotify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
        let abstract_listener = UnixDatagram::bind_addr(&addr).unwrap();
        let n = Notifier {
            socket: Some(format!("@{name}")),
            watchdog: None,
        };
        n.notify("STOPPING=1").unwrap();
        let len = abstract_listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"STOPPING=1");
        assert_eq!(n.watchdog_interval(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_manager_nothing_is_sent() {
        let n = Notifier {
            socket: None,
            watchdog: None,
        };
        assert!(n.notify("READY=1").is_ok());
    }
}
