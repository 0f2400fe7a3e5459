//! `-k start|stop|restart|graceful|graceful-stop`, as `apache2 -k` does:
//! read the configuration to find `PidFile`, and signal the server whose
//! process ID it holds (SIGTERM, SIGHUP, SIGUSR1, SIGWINCH). `restart` and
//! `graceful` start a server when none runs; `start` starts one in the
//! background (in the foreground with `-D FOREGROUND` or `-X`), returning
//! once it listens, or with its start-up error.

use crate::cli::{Action, Start};
use crate::pidfile;
use std::io::Read;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;

/// Environment variable naming the descriptor a background server writes
/// one byte to once it listens.
const READY_FD: &str = "HTACCEL_READY_FD";

pub fn signal(start: Start, action: Action) -> Result<(), String> {
    let loaded = start.load()?;
    let Some(configured) = &loaded.build.global.pid_file else {
        return Err(
            "htaccel: -k needs a PidFile directive: it is how the running server is found".into(),
        );
    };
    let path = pidfile::path(configured, &loaded.env.server_root);
    let recorded = pidfile::read(&path);
    let running = recorded.filter(|&pid| alive(pid));
    let not_running = || match recorded {
        None => println!("htaccel (no pid file) not running"),
        Some(pid) => println!("htaccel (pid {pid}?) not running"),
    };
    let send = |pid: i32, sig: libc::c_int| {
        // SAFETY: kill has no memory-safety preconditions.
        if unsafe { libc::kill(pid, sig) } == 0 {
            Ok(())
        } else {
            Err(format!(
                "htaccel: could not send signal to pid {pid}: {}",
                std::io::Error::last_os_error()
            ))
        }
    };
    match (action, running) {
        (Action::Stop, Some(pid)) => send(pid, libc::SIGTERM),
        (Action::GracefulStop, Some(pid)) => send(pid, libc::SIGWINCH),
        (Action::Restart, Some(pid)) => send(pid, libc::SIGHUP),
        (Action::Graceful, Some(pid)) => send(pid, libc::SIGUSR1),
        (Action::Stop | Action::GracefulStop, None) => {
            not_running();
            Ok(())
        }
        (Action::Start, Some(pid)) => {
            println!("htaccel (pid {pid}) already running");
            Ok(())
        }
        (Action::Restart | Action::Graceful, None) => {
            println!("htaccel not running, trying to start");
            start_server(start)
        }
        (Action::Start, None) => start_server(start),
    }
}

/// Whether `pid` names a live process.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

/// Start a server: in the foreground when asked, else detached.
fn start_server(start: Start) -> Result<(), String> {
    if start.defined("FOREGROUND") || start.single {
        start.redirect_startup_log()?;
        let threads = if start.single { 1 } else { 0 };
        return crate::run::serve(Box::new(move || start.load()), None, threads);
    }
    detach()
}

/// Run this command again without `-k`, in a new session, and return once
/// it says it listens (or fail with its exit status once it ended).
fn detach() -> Result<(), String> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!(
            "htaccel: pipe: {}",
            std::io::Error::last_os_error()
        ));
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "-k") {
        args.drain(i..(i + 2).min(args.len()));
    }
    args.retain(|a| !a.to_string_lossy().starts_with("-k"));
    let exe = std::env::current_exe().map_err(|e| format!("htaccel: {e}"))?;
    let mut child = std::process::Command::new(exe);
    child
        .args(&args)
        .env(READY_FD, write_end.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec: setsid
    // and fcntl on a descriptor this process owns.
    unsafe {
        child.pre_exec(move || {
            libc::setsid();
            let flags = libc::fcntl(write_end, libc::F_GETFD);
            libc::fcntl(write_end, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            Ok(())
        });
    }
    let spawned = child.spawn();
    // SAFETY: both ends are ours; the child holds its own copy.
    let mut reader = unsafe {
        libc::close(write_end);
        std::fs::File::from_raw_fd(read_end)
    };
    let mut child = spawned.map_err(|e| format!("htaccel: could not start: {e}"))?;
    let mut byte = [0u8; 1];
    if matches!(reader.read(&mut byte), Ok(1)) {
        return Ok(());
    }
    let status = child.wait().map_err(|e| format!("htaccel: {e}"))?;
    Err(format!("htaccel: the server did not start ({status})"))
}

/// In a server started by [`detach`]: say that it listens, and let go of
/// the terminal (standard error goes to `/dev/null` from now on, as
/// Apache's detached parent does; the error log is where messages go).
pub fn tell_ready() {
    let Some(fd) = std::env::var(READY_FD)
        .ok()
        .and_then(|v| v.parse::<RawFd>().ok())
    else {
        return;
    };
    std::env::remove_var(READY_FD);
    // SAFETY: the descriptor was handed to this process for this write;
    // /dev/null replaces descriptor 2 (dup2 is atomic) and is closed after.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 2);
            libc::close(null);
        }
        libc::write(fd, b"1".as_ptr().cast(), 1);
        libc::close(fd);
    }
}
