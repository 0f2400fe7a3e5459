//! A request body kept whole before it goes to a backend, when the body
//! must be sent with its length (`proxy-sendcl`) and is longer than
//! mod_proxy's prefetch: the prefetch stays in memory, the rest goes to an
//! unlinked temporary file, as Apache's `ap_proxy_spool_input` does. So the
//! memory a connection holds stays one prefetch whatever the body's size.
//!
//! The file's reads and writes run on one thread of their own, never on a
//! worker thread: a slow disk delays the spooling requests only. One
//! thread rather than tokio's blocking pool, whose threads (one per
//! concurrent write) cost 1 to 2 MiB of memory each: 20 spooling
//! connections took 20 MiB more. Buffers go to that thread and come back.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, OnceLock};

/// The largest body spooled (Apache's default `LimitRequestBody`); more is
/// a 413 (Apache spools without a bound, see docs/deviations.md).
pub(crate) const SPOOL_MAX: u64 = 1 << 30;
/// What is read back from the file at a time.
const PIECE: usize = 64 * 1024;

/// A body's bytes: `head` in memory, then the file's.
pub(crate) struct Spooled {
    pub head: Vec<u8>,
    file: Option<Arc<File>>,
    file_len: u64,
}

impl Spooled {
    pub(crate) fn new(head: Vec<u8>) -> Self {
        Spooled {
            head,
            file: None,
            file_len: 0,
        }
    }

    /// All of the body's length.
    pub(crate) fn len(&self) -> u64 {
        self.head.len() as u64 + self.file_len
    }

    /// Append `data` to the file (created with the first write); gives the
    /// buffer back, emptied.
    pub(crate) async fn append(&mut self, data: Vec<u8>) -> io::Result<Vec<u8>> {
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(blocking(temp_file).await?);
                self.file = Some(f.clone());
                f
            }
        };
        let at = self.file_len;
        let n = data.len() as u64;
        let mut data = blocking(move || file.write_all_at(&data, at).map(|()| data)).await?;
        self.file_len += n;
        data.clear();
        Ok(data)
    }

    /// The piece of the file at `offset`, in `buf` (empty at its end).
    pub(crate) async fn piece(&self, offset: u64, mut buf: Vec<u8>) -> io::Result<Vec<u8>> {
        let want = (self.file_len.saturating_sub(offset)).min(PIECE as u64) as usize;
        buf.clear();
        let Some(file) = self.file.clone().filter(|_| want > 0) else {
            return Ok(buf);
        };
        buf.resize(want, 0);
        blocking(move || file.read_exact_at(&mut buf, offset).map(|()| buf)).await
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The spool thread's queue (the thread starts with the first job).
fn spool_thread() -> &'static Mutex<Sender<Job>> {
    static QUEUE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let _ = std::thread::Builder::new()
            .name("htaccel-spool".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            });
        Mutex::new(tx)
    })
}

/// Run `f` on the spool thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    let gone = || io::Error::other("the spool thread is gone");
    spool_thread()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| gone())?;
    rx.await.unwrap_or_else(|_| Err(gone()))
}

/// The temporary directory, as APR finds it (`TMPDIR`, `TMP`, `TEMP`,
/// else `/tmp`).
fn temp_dir() -> PathBuf {
    ["TMPDIR", "TMP", "TEMP"]
        .iter()
        .find_map(|v| std::env::var_os(v).filter(|d| !d.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// A new file no other process can open: `O_TMPFILE`, or where the file
/// system lacks it a uniquely named file removed at once.
fn temp_file() -> io::Result<File> {
    let dir = temp_dir();
    let unnamed = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(&dir);
    if let Ok(f) = unnamed {
        return Ok(f);
    }
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let path = dir.join(format!(
        "htaccel-body.{}.{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn head_then_file() {
        let mut s = Spooled::new(b"head".to_vec());
        assert_eq!(s.piece(0, Vec::new()).await.unwrap(), b"");
        let buf = s.append(vec![b'a'; PIECE + 10]).await.unwrap();
        assert!(buf.is_empty() && buf.capacity() >= PIECE);
        s.append(b"tail".to_vec()).await.unwrap();
        assert_eq!(s.len(), 4 + PIECE as u64 + 14);
        let first = s.piece(0, buf).await.unwrap();
        assert_eq!(first.len(), PIECE);
        let second = s.piece(PIECE as u64, first).await.unwrap();
        assert_eq!(second, [&[b'a'; 10][..], b"tail"].concat());
        assert!(s.piece(PIECE as u64 + 14, second).await.unwrap().is_empty());
    }
}
