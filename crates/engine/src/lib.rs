//! htaccel's engine: the meaning of Apache configuration.
//!
//! It turns the syntax tree of `htaccel-conf` into typed per-directory
//! configuration through one directive registry, keeps the compiled
//! per-directory configuration cached, and runs a request through Apache's
//! phases to a [`http::Response`]. It never touches a socket: the server
//! crate carries out what the engine decides.

pub mod answer_memo;
pub mod config;
pub mod dirconf;
pub mod engine;
pub mod env;
pub mod error_backend;
pub mod errors;
pub mod expr;
pub mod filecache;
pub mod filters;
pub mod fs;
pub mod handler;
pub mod header_table;
pub mod htaccess;
pub mod http;
pub mod ipset;
pub mod log_condition;
pub mod log_format;
pub mod modules;
pub mod open_writers;
pub mod os;
pub mod path_text;
pub mod regex_engine;
pub mod registry;
pub mod regsub;
pub mod request;
pub mod site;
pub mod statcache;
pub mod stats;
pub mod tree;
pub mod uri;
pub mod walk;
pub mod walk_memo;
pub mod watch;
