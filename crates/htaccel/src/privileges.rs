//! Dropping root after the listeners are bound, as Apache's mod_unixd does
//! with `User` and `Group` (the root part that stays is `privsep`).

use std::ffi::CString;

/// Look up a user or group given by name or `#uid`.
pub fn lookup_user(name: &str) -> Result<(u32, u32), String> {
    if let Some(n) = name.strip_prefix('#') {
        let uid: u32 = n.parse().map_err(|_| format!("bad user id {name}"))?;
        return Ok((uid, uid));
    }
    let c = CString::new(name).map_err(|_| format!("bad user name {name}"))?;
    // SAFETY: getpwnam returns a pointer to static storage or null; we read
    // two integers from it immediately, on this thread, before any other call.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return Err(format!("bad user name {name}"));
    }
    // SAFETY: pw is non-null and points to a valid passwd record.
    unsafe { Ok(((*pw).pw_uid, (*pw).pw_gid)) }
}

pub fn lookup_group(name: &str) -> Result<u32, String> {
    if let Some(n) = name.strip_prefix('#') {
        return n.parse().map_err(|_| format!("bad group id {name}"));
    }
    let c = CString::new(name).map_err(|_| format!("bad group name {name}"))?;
    // SAFETY: as for getpwnam above.
    let gr = unsafe { libc::getgrnam(c.as_ptr()) };
    if gr.is_null() {
        return Err(format!("bad group name {name}"));
    }
    // SAFETY: gr is non-null and points to a valid group record.
    unsafe { Ok((*gr).gr_gid) }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid that `User`/`Group` name.
pub fn resolve(user: &str, group: Option<&str>) -> Result<(u32, u32), String> {
    let (uid, default_gid) = lookup_user(user)?;
    let gid = match group {
        Some(g) => lookup_group(g)?,
        None => default_gid,
    };
    Ok((uid, gid))
}

/// Switch every thread of the process to `uid`/`gid`, keeping one
/// capability: `CAP_LEASE`, so that the engine can ask the kernel whether
/// a writer holds an access file open (`engine::open_writers`) whoever
/// owns the file. It lets the process take leases on files it can open,
/// nothing else. Must run before any worker thread exists (the server
/// calls it right after binding): capabilities belong to a thread, and the
/// threads created later inherit this one's.
pub fn drop_to(uid: u32, gid: u32, user: &str) -> std::io::Result<()> {
    let name = CString::new(user).unwrap_or_default();
    // SAFETY: plain system calls with valid arguments; failure is reported.
    unsafe {
        if libc::setgid(gid) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::initgroups(name.as_ptr(), gid) != 0 && libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let keep = libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0;
        if libc::setuid(uid) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if keep {
            libc::prctl(libc::PR_SET_KEEPCAPS, 0, 0, 0, 0);
            // Every capability root had is still permitted: keep only
            // CAP_LEASE, or none; never start with more.
            if set_capabilities(1 << CAP_LEASE).is_err() {
                set_capabilities(0)?;
            }
        }
    }
    Ok(())
}

/// `CAP_LEASE` (linux/capability.h).
const CAP_LEASE: u32 = 28;

/// Make `mask` (capabilities 0 to 31) the calling thread's permitted and
/// effective sets, with nothing inheritable (`capset`, version 3).
fn set_capabilities(mask: u32) -> std::io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let none = Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    };
    let data = [
        Data {
            effective: mask,
            permitted: mask,
            inheritable: 0,
        },
        none,
    ];
    // SAFETY: the header and the two data words are the layout capset(2)
    // expects for version 3; both outlive the call.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether `uid` can reach and list `dir` (every ancestor searchable, the
/// directory itself readable), judged from the permission bits.
pub fn can_read_dir(dir: &std::path::Path, uid: u32, gid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let allowed = |m: &std::fs::Metadata, bit: u32| {
        let mode = m.mode();
        if m.uid() == uid {
            mode & (bit << 6) != 0
        } else if m.gid() == gid {
            mode & (bit << 3) != 0
        } else {
            mode & bit != 0
        }
    };
    let mut p = dir.to_path_buf();
    match std::fs::metadata(&p) {
        Ok(m) if allowed(&m, 0o4) && allowed(&m, 0o1) => {}
        _ => return false,
    }
    while p.pop() {
        match std::fs::metadata(&p) {
            Ok(m) if allowed(&m, 0o1) => {}
            _ => return false,
        }
    }
    true
}
