//! A request's environment (Apache's `r->subprocess_env`): variables set
//! by `SetEnv`, `SetEnvIf`, `RewriteRule [E=]`, read by `Require env`,
//! `Header … env=`, `%{ENV:…}`, and passed to CGI/FastCGI back-ends.
//! Names compare without regard to ASCII case (it is an APR table),
//! order is kept, a name appears once.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    vars: Vec<(String, String)>,
}

impl Env {
    pub fn get(&self, name: &str) -> Option<&str> {
        let found = self
            .vars
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str());
        if found.is_some() && is_per_request(name) {
            // A value of this request only: an answer that reads it is
            // not kept (crate::answer_memo).
            crate::answer_memo::note_volatile();
        }
        found
    }
    /// A variable's value without telling the answer memo that it was
    /// read: for a module that carries the value on, not for deciding
    /// anything from it.
    pub(crate) fn get_unrecorded(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self
            .vars
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(slot) => slot.1 = value,
            None => {
                if self.vars.capacity() == 0 {
                    // Requests that set one variable usually set several.
                    self.vars = Vec::with_capacity(8);
                }
                self.vars.push((name.to_string(), value));
            }
        }
    }
    pub fn unset(&mut self, name: &str) {
        self.vars.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
    /// The environment an internal redirect starts with: every variable
    /// renamed `REDIRECT_<NAME>` (Apache's `rename_original_env`).
    pub fn for_redirect(&self) -> Env {
        Env {
            vars: self
                .vars
                .iter()
                .map(|(n, v)| (format!("REDIRECT_{n}"), v.clone()))
                .collect(),
        }
    }
}

/// Variables that differ between requests alike in every other way:
/// mod_http2's that name the stream (`H2_STREAM_ID`, `H2_STREAM_TAG`) and
/// mod_unique_id's token (under any `REDIRECT_` prefix).
pub(crate) fn is_per_request(name: &str) -> bool {
    (name.len() > 10 && name.as_bytes()[..10].eq_ignore_ascii_case(b"H2_STREAM_"))
        || crate::modules::hooks::per_request_variable(name)
}
