//! Password and group files, parsed once and kept while they do not change.
//!
//! Apache reads `AuthUserFile`/`AuthGroupFile` from disk on every
//! authentication, which makes an edit visible on the next request. We
//! keep that visibility without the re-parse: each use stats the file and
//! parses it again only when its identity, size or modification time
//! moved. A file that cannot be opened is an error every time, as in
//! Apache (500).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What identifies one version of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_ns: i64,
    ctime: i64,
    ctime_ns: i64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_ns: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_ns: meta.ctime_nsec(),
        }
    }
}

/// Files larger than this are refused rather than read into memory.
pub const MAX_FILE: u64 = 64 << 20;

/// Parsed files by path, with the stamp they were parsed at.
type Entries<T> = HashMap<PathBuf, (Stamp, Arc<T>)>;

/// A cache of parsed files of one kind.
pub struct FileCache<T> {
    entries: Mutex<Option<Entries<T>>>,
    parse: fn(&[u8]) -> T,
}

impl<T> FileCache<T> {
    pub const fn new(parse: fn(&[u8]) -> T) -> Self {
        FileCache {
            entries: Mutex::new(None),
            parse,
        }
    }

    /// The parsed content of `path`, or the reason it could not be read.
    pub fn get(&self, path: &Path) -> std::io::Result<Arc<T>> {
        // Read outside the caches the watcher keeps true: an answer that
        // depends on it is not kept (`answer_memo`).
        crate::answer_memo::note_volatile();
        // One stat per use while the file is unchanged.
        let meta = std::fs::metadata(path)?;
        if path == Path::new("/dev/null") {
            // The one special file Apache's `ap_pcfg_openfile` accepts.
            return Ok(Arc::new((self.parse)(b"")));
        }
        if !meta.is_file() {
            // Apache's `ap_pcfg_openfile` refuses it ("not a regular
            // file", EBADF); it never reads a device or a FIFO here.
            return Err(std::io::Error::from_raw_os_error(libc::EBADF));
        }
        let stamp = Stamp::of(&meta);
        if let Some((s, v)) = self
            .entries
            .lock()
            .ok()
            .and_then(|e| e.as_ref()?.get(path).cloned())
        {
            if s == stamp {
                return Ok(v);
            }
        }
        if meta.size() > MAX_FILE {
            return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
        }
        // Opened without blocking and read only if it is (still) a
        // regular file: a FIFO swapped in since the stat cannot hold the
        // worker thread.
        let (mut file, opened) = crate::fs::open_regular(path)?;
        let mut bytes = Vec::with_capacity(opened.size().min(MAX_FILE) as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, MAX_FILE), &mut bytes)?;
        let parsed = Arc::new((self.parse)(&bytes));
        if let Ok(mut e) = self.entries.lock() {
            let e = e.get_or_insert_with(HashMap::new);
            if e.len() > 1024 {
                e.clear();
            }
            // The version read, which a change since the stat may have
            // replaced: the next use then sees a new stamp and reads again.
            e.insert(path.to_path_buf(), (Stamp::of(&opened), parsed.clone()));
        }
        Ok(parsed)
    }
}

/// Lines as Apache's `ap_cfg_getline` gives them: split at LF, leading and
/// trailing white space removed. `max` bounds a line as Apache's buffer
/// does: reading stops at the first line that does not fit.
pub fn config_lines(bytes: &[u8], max: Option<usize>) -> Vec<&[u8]> {
    let mut out = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if max.is_some_and(|m| line.len() >= m) {
            break;
        }
        out.push(line.trim_ascii());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static PARSES: AtomicUsize = AtomicUsize::new(0);

    fn count(b: &[u8]) -> usize {
        PARSES.fetch_add(1, Ordering::SeqCst);
        b.len()
    }

    #[test]
    fn reparses_only_on_change() {
        let dir = std::env::temp_dir().join(format!("htaccel-fc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p");
        std::fs::write(&f, "abc").unwrap();
        let cache = FileCache::new(count);
        assert_eq!(*cache.get(&f).unwrap(), 3);
        assert_eq!(*cache.get(&f).unwrap(), 3);
        assert_eq!(PARSES.load(Ordering::SeqCst), 1);
        std::fs::write(&f, "abcd").unwrap();
        assert_eq!(*cache.get(&f).unwrap(), 4);
        assert_eq!(PARSES.load(Ordering::SeqCst), 2);
        assert!(cache.get(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lines_trimmed_and_bounded() {
        assert_eq!(
            config_lines(b" a \nb\r\n", None),
            vec![&b"a"[..], b"b", b""]
        );
        assert_eq!(config_lines(b"a\nlong\nb", Some(4)), vec![&b"a"[..]]);
    }
}
