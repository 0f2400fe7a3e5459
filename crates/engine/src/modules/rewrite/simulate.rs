//! Rules run over a request that touches nothing: no file system, no
//! sub-requests, fixed addresses. For fuzzing and property tests, where
//! what matters is that any rule text and any URL compile and run to an
//! answer without panicking, in bounded time.

use super::exec::{self, Outcome, PerDir, State};
use super::parse;
use super::vars::{Fact, Host};
use htaccel_conf::Origin;
use std::sync::Arc;

/// A request with fixed answers and no file system.
#[derive(Default)]
pub struct StaticHost {
    pub headers: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
    pub subreq: bool,
}

impl Host for StaticHost {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
    fn env(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
    fn set_env(&mut self, name: &str, value: String) {
        self.unset_env(name);
        self.env.push((name.to_string(), value));
    }
    fn unset_env(&mut self, name: &str) {
        self.env.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    fn fact(&mut self, f: Fact) -> Option<String> {
        Some(
            match f {
                Fact::ServerName => "localhost",
                Fact::ServerPort => "80",
                Fact::RequestScheme => "http",
                Fact::RequestUri => "/",
                Fact::RemoteAddr | Fact::ServerAddr => "127.0.0.1",
                _ => return None,
            }
            .to_string(),
        )
    }
    fn stat(&mut self, _path: &str) -> Option<crate::fs::FileInfo> {
        None
    }
    fn lstat(&mut self, _path: &str) -> Option<crate::fs::FileInfo> {
        None
    }
    fn subreq_ok(&self) -> bool {
        false
    }
    fn matches_vhost(&self, host: &str, port: u16) -> bool {
        host == "localhost" && port == 80
    }
    fn is_subreq(&self) -> bool {
        self.subreq
    }
    fn subreq_uri_status(&mut self, _uri: &str) -> u16 {
        404
    }
    fn subreq_file(&mut self, _path: &str) -> (u16, bool) {
        (404, false)
    }
    fn lookahead(&mut self, _path: &str, _file: bool, _var: &str) -> String {
        String::new()
    }
    fn map(&mut self, _name: &str, _key: &str) -> Option<String> {
        None
    }
    fn add_cookie(&mut self, _spec: &str) {}
    fn now(&self) -> i64 {
        0
    }
}

/// What [`run`] produced.
#[derive(Debug)]
pub struct Simulated {
    pub outcome: Outcome,
    pub filename: String,
    pub args: Option<String>,
}

/// Compile `text` (`RewriteCond`/`RewriteRule` lines, other lines
/// ignored) and run it in the directory `/docroot/` over `filename` and
/// `query`. A line that does not compile is the error.
pub fn run(text: &str, filename: &str, query: Option<&str>) -> Result<Simulated, String> {
    let origin = Origin::new("simulated", 1);
    let mut rules = Vec::new();
    let mut conds = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if name.eq_ignore_ascii_case("RewriteCond") {
            conds.push(parse::parse_cond(rest, &origin, true, &mut |_| {})?);
        } else if name.eq_ignore_ascii_case("RewriteRule") {
            let c = std::mem::take(&mut conds);
            rules.push(Arc::new(parse::parse_rule(rest, &origin, c)?));
        }
    }
    let mut st = State {
        filename: filename.to_string(),
        args: query.map(str::to_string),
        status: 200,
        ..State::default()
    };
    let perdir = PerDir {
        directory: "/docroot/",
        base: None,
    };
    let res = exec::apply_list(
        &rules,
        Some(perdir),
        &mut st,
        &mut StaticHost::default(),
        16_380,
    );
    Ok(Simulated {
        outcome: res.outcome,
        filename: st.filename,
        args: st.args,
    })
}
