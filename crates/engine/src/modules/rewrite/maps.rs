//! `RewriteMap`: named key → value lookups for `${map:key|default}`.
//!
//! Maps are defined in the server configuration only (Apache refuses
//! them in `.htaccess` and `<Directory>`), and used from any context.
//! Supported: `txt:` (a text file of `key value` lines), `rnd:` (the
//! same, a random `|`-separated alternative of the value) and the internal
//! functions `int:toupper`, `int:tolower`, `int:escape`, `int:unescape`.
//! `prg:` (an external program), `dbm:` and `dbd:`/`fastdbd:` are refused
//! at start-up with a clear message rather than silently returning
//! nothing.
//!
//! Apache re-reads a text map per key until the key is cached, and drops
//! its cache when the file's mtime changes. We load the whole file when its
//! stamp changes (bounded in size) and answer every key from memory: the
//! same answers, without a file read per new key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The largest map file read (larger files are refused at lookup time
/// with an error-log line).
pub const MAX_MAP_BYTES: u64 = 64 << 20;

/// Apache's `REWRITE_MAX_TXT_MAP_LINE`: longer lines are read in pieces.
const MAX_LINE: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntFunc {
    ToUpper,
    ToLower,
    Escape,
    Unescape,
}

#[derive(Debug)]
enum Kind {
    Txt { path: PathBuf, random: bool },
    Int(IntFunc),
}

/// The loaded contents of a text map and the stamp they were read at.
#[derive(Debug, Default)]
struct Cache {
    stamp: Option<(u64, u64, i64, u64)>,
    entries: HashMap<String, String>,
}

/// One `RewriteMap`.
#[derive(Debug)]
pub struct RewriteMap {
    pub name: String,
    kind: Kind,
    cache: Mutex<Cache>,
}

/// Why a lookup failed in a way the error log should hear about.
pub type MapLog = Option<String>;

impl RewriteMap {
    /// Parse `RewriteMap name type:source [user:group]` (Apache's
    /// `cmd_rewritemap`); relative paths are taken from `server_root`.
    pub fn parse(name: &str, source: &str, server_root: &Path) -> Result<RewriteMap, String> {
        let lower = source.to_ascii_lowercase();
        let file = |rest: &str| -> PathBuf {
            let p = Path::new(rest);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                server_root.join(p)
            }
        };
        let kind = if let Some(rest) = strip(&lower, source, "txt:") {
            Kind::Txt {
                path: file(rest),
                random: false,
            }
        } else if let Some(rest) = strip(&lower, source, "rnd:") {
            Kind::Txt {
                path: file(rest),
                random: true,
            }
        } else if lower.starts_with("dbm") {
            return Err(format!(
                "RewriteMap: dbm maps are not supported by htaccel (map {name}); use a txt: map"
            ));
        } else if lower.starts_with("dbd:") || lower.starts_with("fastdbd:") {
            return Err("RewriteMap types dbd and fastdbd require mod_dbd!".into());
        } else if lower.starts_with("prg:") {
            return Err(format!(
                "RewriteMap: prg maps (external programs) are not supported by htaccel (map {name})"
            ));
        } else if let Some(rest) = strip(&lower, source, "int:") {
            Kind::Int(match rest {
                "toupper" => IntFunc::ToUpper,
                "tolower" => IntFunc::ToLower,
                "escape" => IntFunc::Escape,
                "unescape" => IntFunc::Unescape,
                _ => return Err(format!("RewriteMap: internal map not found:{rest}")),
            })
        } else {
            Kind::Txt {
                path: file(source),
                random: false,
            }
        };
        if let Kind::Txt { path, .. } = &kind {
            if std::fs::metadata(path).is_err() {
                return Err(format!(
                    "RewriteMap: file for map {name} not found:{}",
                    path.display()
                ));
            }
        }
        Ok(RewriteMap {
            name: name.to_string(),
            kind,
            cache: Mutex::new(Cache::default()),
        })
    }

    /// The value for `key`, `None` when there is none (or it is empty).
    /// The second value is an error-log line for a map file that cannot
    /// be read.
    pub fn lookup(&self, key: &str) -> (Option<String>, MapLog) {
        // Map files are checked by time, `rnd:` picks at random: an answer
        // that used a map is not kept (`answer_memo`).
        crate::answer_memo::note_volatile();
        match &self.kind {
            Kind::Int(f) => (Some(int_map(*f, key)), None),
            Kind::Txt { path, random } => {
                let info = match crate::fs::stat(&path.to_string_lossy()) {
                    Ok(i) => i,
                    Err(e) => {
                        return (
                            None,
                            Some(format!(
                            "({}){e}: AH00661: mod_rewrite: can't access text RewriteMap file {}",
                            e.raw_os_error().unwrap_or(0),
                            path.display()
                        )),
                        )
                    }
                };
                let stamp = (info.dev, info.inode, info.mtime_us, info.size);
                let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
                let mut log = None;
                if cache.stamp != Some(stamp) {
                    match load(path) {
                        Ok(entries) => {
                            cache.entries = entries;
                            cache.stamp = Some(stamp);
                        }
                        Err(msg) => {
                            cache.entries.clear();
                            cache.stamp = None;
                            log = Some(msg);
                        }
                    }
                }
                let value = cache.entries.get(key).cloned();
                drop(cache);
                let value = match value {
                    Some(v) if *random => Some(pick_random(&v)),
                    other => other,
                };
                (value.filter(|v| !v.is_empty()), log)
            }
        }
    }
}

fn strip<'a>(lower: &str, source: &'a str, prefix: &str) -> Option<&'a str> {
    if lower.starts_with(prefix) {
        Some(&source[prefix.len()..])
    } else {
        None
    }
}

/// Read a text map: for each key the value of its first line that has
/// one. Lines starting with `#` or a blank are ignored; lines longer than
/// Apache's buffer are read in pieces, as Apache reads them.
fn load(path: &Path) -> Result<HashMap<String, String>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    // Opened without blocking: a FIFO (Apache waits for its writer) or a
    // device (Apache reads it) is refused, so that no lookup can hold the
    // worker thread; the lookup misses, as it does for a directory.
    let opened = crate::fs::open_nonblocking(path).and_then(|(f, meta)| {
        if !meta.is_file() {
            return Ok(false);
        }
        f.take(MAX_MAP_BYTES + 1).read_to_end(&mut bytes)?;
        Ok(true)
    });
    if let Ok(false) = opened {
        return Err(format!(
            "mod_rewrite: text RewriteMap file {} is not a regular file",
            path.display()
        ));
    }
    if let Err(e) = opened {
        return Err(format!(
            "({}){e}: AH00655: mod_rewrite: can't open text RewriteMap file {}",
            e.raw_os_error().unwrap_or(0),
            path.display()
        ));
    }
    if bytes.len() as u64 > MAX_MAP_BYTES {
        return Err(format!(
            "mod_rewrite: text RewriteMap file {} is larger than {MAX_MAP_BYTES} bytes",
            path.display()
        ));
    }
    Ok(parse_text(&bytes))
}

/// The entries of a text map's contents.
pub fn parse_text(bytes: &[u8]) -> HashMap<String, String> {
    let mut entries = HashMap::new();
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        for piece in line.chunks(MAX_LINE) {
            let Some(&first) = piece.first() else {
                continue;
            };
            if first == b'#' || first.is_ascii_whitespace() || first == 0x0b {
                continue;
            }
            let is_space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
            let key_end = piece.iter().position(is_space).unwrap_or(piece.len());
            if key_end == piece.len() {
                continue;
            }
            let rest = &piece[key_end..];
            let vstart = rest.iter().position(|b| !is_space(b)).unwrap_or(rest.len());
            let rest = &rest[vstart..];
            let vend = rest.iter().position(is_space).unwrap_or(rest.len());
            if vend == 0 {
                continue;
            }
            // In the text form request paths use, so that a key of bytes
            // that are not UTF-8 matches the same bytes in a request.
            let key = crate::path_text::from_slice(&piece[..key_end]).into_owned();
            let value = crate::path_text::from_slice(&rest[..vend]).into_owned();
            entries.entry(key).or_insert(value);
        }
    }
    entries
}

/// One of the `|`-separated alternatives, at random (`rnd:` maps).
fn pick_random(value: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let parts: Vec<&str> = value.split('|').collect();
    if parts.len() == 1 {
        return value.to_string();
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    parts[(h.finish() % parts.len() as u64) as usize].to_string()
}

/// The internal map functions.
pub fn int_map(f: IntFunc, key: &str) -> String {
    match f {
        IntFunc::ToUpper => key.to_ascii_uppercase(),
        IntFunc::ToLower => key.to_ascii_lowercase(),
        IntFunc::Escape => crate::uri::escape_path(&crate::path_text::bytes(key)).into_owned(),
        IntFunc::Unescape => unescape(key),
    }
}

/// Apache's `ap_unescape_url` used for its result only: every valid
/// `%XX` decoded, a bad one kept as written, the string ends at a decoded
/// NUL.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && hex(b[i + 1]).is_some() && hex(b[i + 2]).is_some() {
            let v = hex(b[i + 1]).unwrap_or(0) * 16 + hex(b[i + 2]).unwrap_or(0);
            if v == 0 {
                break;
            }
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}
