//! The `IndexOptions` keywords as bits, with Apache's values, and the
//! default widths of the fancy listing's columns.

/// How an `IndexOptions` width was set (`K_NOADJUST`, `K_ADJUST`, unset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Adjust {
    /// A number (or the default after `-NameWidth`).
    Fixed,
    /// `=*`: as wide as the widest entry.
    Fit,
    /// Never set: the default width, and (for descriptions) room taken
    /// from suppressed columns.
    #[default]
    Unset,
}

pub const NO_OPTIONS: u32 = 1 << 0;
pub const ICONS_ARE_LINKS: u32 = 1 << 1;
pub const SCAN_HTML_TITLES: u32 = 1 << 2;
pub const SUPPRESS_ICON: u32 = 1 << 3;
pub const SUPPRESS_LAST_MOD: u32 = 1 << 4;
pub const SUPPRESS_SIZE: u32 = 1 << 5;
pub const SUPPRESS_DESC: u32 = 1 << 6;
pub const SUPPRESS_PREAMBLE: u32 = 1 << 7;
pub const SUPPRESS_COLSORT: u32 = 1 << 8;
pub const SUPPRESS_RULES: u32 = 1 << 9;
pub const FOLDERS_FIRST: u32 = 1 << 10;
pub const VERSION_SORT: u32 = 1 << 11;
pub const TRACK_MODIFIED: u32 = 1 << 12;
pub const FANCY_INDEXING: u32 = 1 << 13;
pub const TABLE_INDEXING: u32 = 1 << 14;
pub const IGNORE_CLIENT: u32 = 1 << 15;
pub const IGNORE_CASE: u32 = 1 << 16;
pub const EMIT_XHTML: u32 = 1 << 17;
pub const SHOW_FORBIDDEN: u32 = 1 << 18;
pub const ADD_ALT_CLASS: u32 = 1 << 19;
/// No `IndexOptions` at this level: inherit.
pub const OPTION_UNSET: u32 = 1 << 20;

/// The size of the icons Apache ships (`IconWidth`/`IconHeight` alone).
pub const DEFAULT_ICON_WIDTH: i32 = 20;
pub const DEFAULT_ICON_HEIGHT: i32 = 22;
pub const DEFAULT_NAME_WIDTH: i32 = 23;
pub const DEFAULT_DESC_WIDTH: i32 = 23;

/// The keyword's bit, for the keywords that are plain bits.
pub fn keyword(w: &str) -> Option<u32> {
    const WORDS: &[(&str, u32)] = &[
        ("FancyIndexing", FANCY_INDEXING),
        ("FoldersFirst", FOLDERS_FIRST),
        ("HTMLTable", TABLE_INDEXING),
        ("IconsAreLinks", ICONS_ARE_LINKS),
        ("IgnoreCase", IGNORE_CASE),
        ("IgnoreClient", IGNORE_CLIENT),
        ("ScanHTMLTitles", SCAN_HTML_TITLES),
        ("SuppressColumnSorting", SUPPRESS_COLSORT),
        ("SuppressDescription", SUPPRESS_DESC),
        ("SuppressHTMLPreamble", SUPPRESS_PREAMBLE),
        ("SuppressIcon", SUPPRESS_ICON),
        ("SuppressLastModified", SUPPRESS_LAST_MOD),
        ("SuppressSize", SUPPRESS_SIZE),
        ("SuppressRules", SUPPRESS_RULES),
        ("TrackModified", TRACK_MODIFIED),
        ("VersionSort", VERSION_SORT),
        ("XHTML", EMIT_XHTML),
        ("ShowForbidden", SHOW_FORBIDDEN),
        ("AddAltClass", ADD_ALT_CLASS),
    ];
    WORDS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(w))
        .map(|&(_, bit)| bit)
}
