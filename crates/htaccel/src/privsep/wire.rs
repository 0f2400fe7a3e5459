//! The channel between the server and its privileged broker: a pair of
//! Unix `SOCK_SEQPACKET` sockets, so that each message arrives whole and
//! alone, carrying at most one descriptor (`SCM_RIGHTS`).
//!
//! A message is a kind byte and its bytes; an empty message is never
//! sent, so that reading zero bytes means the other side is gone.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The largest message read; longer ones are cut by the sender.
pub const MAX_MESSAGE: usize = 32 * 1024;

/// One end of the channel.
pub struct Channel(OwnedFd);

/// A connected pair of ends, closed on `exec`.
pub fn pair() -> io::Result<(Channel, Channel)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: socketpair writes two descriptors into the array on success.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe {
        Ok((
            Channel(OwnedFd::from_raw_fd(fds[0])),
            Channel(OwnedFd::from_raw_fd(fds[1])),
        ))
    }
}

/// Room for one descriptor's control message, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuffer([u8; 64]);

impl Channel {
    /// Send `bytes` (cut to [`MAX_MESSAGE`]) and, if given, a copy of `fd`.
    pub fn send(&self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
        let bytes = &bytes[..bytes.len().min(MAX_MESSAGE)];
        debug_assert!(!bytes.is_empty());
        let mut iov = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let mut control = ControlBuffer([0; 64]);
        // SAFETY: an all-zero msghdr is a valid empty one.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if let Some(fd) = fd {
            let size = std::mem::size_of::<RawFd>() as u32;
            // SAFETY: the control buffer is larger than CMSG_SPACE of one
            // descriptor and aligned; CMSG_FIRSTHDR then points into it.
            unsafe {
                msg.msg_control = control.0.as_mut_ptr().cast();
                msg.msg_controllen = libc::CMSG_SPACE(size) as usize;
                let header = libc::CMSG_FIRSTHDR(&msg);
                (*header).cmsg_level = libc::SOL_SOCKET;
                (*header).cmsg_type = libc::SCM_RIGHTS;
                (*header).cmsg_len = libc::CMSG_LEN(size) as usize;
                std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd.as_raw_fd());
            }
        }
        loop {
            // SAFETY: msg points to live buffers for the whole call.
            let n = unsafe { libc::sendmsg(self.0.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
            if n >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// The next message and the descriptor it carried; `None` once the
    /// other end is closed.
    pub fn recv(&self) -> io::Result<Option<(Vec<u8>, Option<OwnedFd>)>> {
        let mut buf = vec![0u8; MAX_MESSAGE];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut control = ControlBuffer([0; 64]);
        // SAFETY: an all-zero msghdr is a valid empty one.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len();
        let n = loop {
            // SAFETY: msg points to live buffers for the whole call.
            let n = unsafe { libc::recvmsg(self.0.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        // Every descriptor received is owned here, so none leaks.
        let mut fds = Vec::new();
        // SAFETY: the kernel filled msg_control with well-formed headers;
        // CMSG_NXTHDR stays within msg_controllen.
        unsafe {
            let mut header = libc::CMSG_FIRSTHDR(&msg);
            while !header.is_null() {
                if (*header).cmsg_level == libc::SOL_SOCKET
                    && (*header).cmsg_type == libc::SCM_RIGHTS
                {
                    let data = libc::CMSG_DATA(header);
                    let len = (*header).cmsg_len - libc::CMSG_LEN(0) as usize;
                    for i in 0..len / std::mem::size_of::<RawFd>() {
                        let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                        fds.push(OwnedFd::from_raw_fd(fd));
                    }
                }
                header = libc::CMSG_NXTHDR(&msg, header);
            }
        }
        if n == 0 {
            return Ok(None);
        }
        if msg.msg_flags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0 || fds.len() > 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "privileged channel: malformed message",
            ));
        }
        buf.truncate(n);
        Ok(Some((buf, fds.pop())))
    }
}

#[cfg(test)]
mod tests {
    use super::pair;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;

    #[test]
    fn messages_carry_their_bytes_and_one_descriptor() {
        let (a, b) = pair().unwrap();
        let mut file = tempfile_in_target();
        file.write_all(b"passed").unwrap();
        a.send(b"Lone", Some(file.as_fd())).unwrap();
        a.send(b"D", None).unwrap();
        let (bytes, fd) = b.recv().unwrap().unwrap();
        assert_eq!(bytes, b"Lone");
        let mut got = std::fs::File::from(fd.expect("a descriptor"));
        got.rewind().unwrap();
        let mut text = String::new();
        got.read_to_string(&mut text).unwrap();
        assert_eq!(text, "passed");
        let (bytes, fd) = b.recv().unwrap().unwrap();
        assert_eq!((bytes.as_slice(), fd.is_none()), (&b"D"[..], true));
        drop(a);
        assert!(b.recv().unwrap().is_none());
    }

    fn tempfile_in_target() -> std::fs::File {
        let path = std::env::temp_dir().join(format!("htaccel-wire-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let _ = std::fs::remove_file(&path);
        f
    }
}
