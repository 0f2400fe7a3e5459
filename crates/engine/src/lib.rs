//! htaccel's engine: the meaning of Apache configuration.
//!
//! It turns the syntax tree of `htaccel-conf` into typed per-directory
//! configuration through one directive registry, keeps the compiled
//! per-directory configuration cached, and runs a request through Apache's
//! phases to a [`http::Response`]. It never touches a socket: the server
//! crate carries out what the engine decides.

pub(crate) mod answer_memo;
pub(crate) mod clock;
pub mod config;
pub(crate) mod dirconf;
pub mod dns;
pub mod engine;
pub mod env;
pub(crate) mod error_backend;
pub mod error_log_format;
pub(crate) mod errors;
pub mod expr;
pub(crate) mod filecache;
pub(crate) mod filters;
pub(crate) mod fs;
pub(crate) mod handler;
pub mod header_table;
pub(crate) mod htaccess;
pub mod http;
pub mod ipset;
pub(crate) mod log_condition;
pub mod log_format;
pub mod modules;
pub(crate) mod open_writers;
pub(crate) mod os;
pub mod path_text;
pub(crate) mod regex_engine;
pub mod registry;
pub(crate) mod regsub;
pub(crate) mod request;
pub(crate) mod sightings;
pub mod site;
pub(crate) mod statcache;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tree;
pub(crate) mod uri;
pub(crate) mod vhosts;
pub(crate) mod walk;
pub(crate) mod walk_memo;
pub mod watch;
