//! mod_autoindex's request side: a directory listing for a directory
//! without an index, when `Options Indexes` allows it. Each entry is
//! looked up as a sub-request, as Apache does, so files the configuration
//! denies (`.htaccess` under the stock `<FilesMatch "^\.ht">`) are not listed.

use crate::http::autoindex::{self, DirEntryInfo, ListingOptions};
use crate::http::Response;
use crate::request::Ctx;

pub fn listing(ctx: &mut Ctx<'_>) -> Response {
    let mut entries = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&ctx.filename) {
        for e in rd.flatten() {
            use std::os::unix::ffi::OsStrExt;
            let name = e.file_name().as_bytes().to_vec();
            let is_dir = std::fs::metadata(e.path())
                .map(|m| m.is_dir())
                .unwrap_or(false);
            entries.push(DirEntryInfo { name, is_dir });
        }
    }
    let visible = |entry: &DirEntryInfo| {
        let name = String::from_utf8_lossy(&entry.name);
        let (sub, result) = ctx.sub_request_dirent(&name);
        let kind_ok = matches!(
            sub.finfo.map(|f| f.kind),
            Some(crate::fs::Kind::File) | Some(crate::fs::Kind::Dir)
        );
        kind_ok && matches!(result, Ok(()) | Err(300..=399))
    };
    let opts = ListingOptions {
        query: ctx.args.as_deref(),
        signature: None,
        head: ctx.req.method == "HEAD",
    };
    autoindex::listing(ctx.uri.as_bytes(), &entries, visible, &opts)
}
