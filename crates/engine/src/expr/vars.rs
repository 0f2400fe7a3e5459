//! The names an expression may use, resolved when it is parsed.
//!
//! Apache looks every `%{NAME}`, function and operator up while parsing
//! (`core_expr_lookup`), so a misspelt name fails the configuration file
//! rather than expanding to nothing at request time. The tables here are
//! that lookup: variable and function names compare without regard to
//! ASCII case, unary operators exactly, binary operators without case.

/// A variable of the core (`%{NAME}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    // Request headers, read through the header table (and noted for `Vary`).
    HttpUserAgent,
    HttpProxyConnection,
    HttpReferer,
    HttpCookie,
    HttpForwarded,
    HttpHost,
    HttpAccept,
    // The request.
    RequestMethod,
    RequestScheme,
    RequestUri,
    RequestFilename,
    RemoteHost,
    RemoteIdent,
    RemoteUser,
    ServerAdmin,
    ServerName,
    ServerPort,
    ServerProtocol,
    ScriptFilename,
    PathInfo,
    QueryString,
    IsSubreq,
    DocumentRoot,
    AuthType,
    TheRequest,
    ContentType,
    Handler,
    RequestLogId,
    ScriptUser,
    ScriptGroup,
    DocumentUri,
    LastModified,
    ContextPrefix,
    ContextDocumentRoot,
    RequestStatus,
    RemoteAddr,
    RemotePort,
    // The connection.
    Https,
    Ipv6,
    ConnLogId,
    ConnRemoteAddr,
    Http2,
    // Neither: the clock and the server.
    TimeYear,
    TimeMon,
    TimeDay,
    TimeHour,
    TimeMin,
    TimeSec,
    TimeWday,
    Time,
    ServerSoftware,
    ApiVersion,
}

/// Every variable with its name, in Apache's lookup order.
const VARS: &[(&str, Var)] = &[
    ("TIME_YEAR", Var::TimeYear),
    ("TIME_MON", Var::TimeMon),
    ("TIME_DAY", Var::TimeDay),
    ("TIME_HOUR", Var::TimeHour),
    ("TIME_MIN", Var::TimeMin),
    ("TIME_SEC", Var::TimeSec),
    ("TIME_WDAY", Var::TimeWday),
    ("TIME", Var::Time),
    ("SERVER_SOFTWARE", Var::ServerSoftware),
    ("API_VERSION", Var::ApiVersion),
    ("HTTP_USER_AGENT", Var::HttpUserAgent),
    ("HTTP_PROXY_CONNECTION", Var::HttpProxyConnection),
    ("HTTP_REFERER", Var::HttpReferer),
    ("HTTP_COOKIE", Var::HttpCookie),
    ("HTTP_FORWARDED", Var::HttpForwarded),
    ("HTTP_HOST", Var::HttpHost),
    ("HTTP_ACCEPT", Var::HttpAccept),
    ("REQUEST_METHOD", Var::RequestMethod),
    ("REQUEST_SCHEME", Var::RequestScheme),
    ("REQUEST_URI", Var::RequestUri),
    ("REQUEST_FILENAME", Var::RequestFilename),
    ("REMOTE_HOST", Var::RemoteHost),
    ("REMOTE_IDENT", Var::RemoteIdent),
    ("REMOTE_USER", Var::RemoteUser),
    ("SERVER_ADMIN", Var::ServerAdmin),
    ("SERVER_NAME", Var::ServerName),
    ("SERVER_PORT", Var::ServerPort),
    ("SERVER_PROTOCOL", Var::ServerProtocol),
    ("SCRIPT_FILENAME", Var::ScriptFilename),
    ("PATH_INFO", Var::PathInfo),
    ("QUERY_STRING", Var::QueryString),
    ("IS_SUBREQ", Var::IsSubreq),
    ("DOCUMENT_ROOT", Var::DocumentRoot),
    ("AUTH_TYPE", Var::AuthType),
    ("THE_REQUEST", Var::TheRequest),
    ("CONTENT_TYPE", Var::ContentType),
    ("HANDLER", Var::Handler),
    ("REQUEST_LOG_ID", Var::RequestLogId),
    ("SCRIPT_USER", Var::ScriptUser),
    ("SCRIPT_GROUP", Var::ScriptGroup),
    ("DOCUMENT_URI", Var::DocumentUri),
    ("LAST_MODIFIED", Var::LastModified),
    ("CONTEXT_PREFIX", Var::ContextPrefix),
    ("CONTEXT_DOCUMENT_ROOT", Var::ContextDocumentRoot),
    ("REQUEST_STATUS", Var::RequestStatus),
    ("REMOTE_ADDR", Var::RemoteAddr),
    ("REMOTE_PORT", Var::RemotePort),
    ("HTTPS", Var::Https),
    ("IPV6", Var::Ipv6),
    ("CONN_LOG_ID", Var::ConnLogId),
    ("CONN_REMOTE_ADDR", Var::ConnRemoteAddr),
    ("HTTP2", Var::Http2),
];

impl Var {
    /// The variable `%{name}` names, if the core has it.
    pub fn lookup(name: &str) -> Option<Var> {
        VARS.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// Apache's spelling of the name.
    pub fn name(self) -> &'static str {
        VARS.iter()
            .find(|(_, v)| *v == self)
            .map(|(n, _)| *n)
            .unwrap_or("")
    }

    /// For the `HTTP_*` variables: the request header they read.
    pub fn header(self) -> Option<&'static str> {
        Some(match self {
            Var::HttpUserAgent => "User-Agent",
            Var::HttpProxyConnection => "Proxy-Connection",
            Var::HttpReferer => "Referer",
            Var::HttpCookie => "Cookie",
            Var::HttpForwarded => "Forwarded",
            Var::HttpHost => "Host",
            Var::HttpAccept => "Accept",
            _ => return None,
        })
    }
}

/// A string function of the core (`name(arg)` or `%{name:arg}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// The process environment.
    Osenv,
    /// Notes, then the request environment, then the process environment.
    Env,
    /// A response header (`headers_out`, then `err_headers_out`).
    Resp,
    /// A request header, noted for `Vary` (`req`, `http`).
    Req,
    /// A request header, not noted for `Vary`.
    ReqNovary,
    Note,
    /// The request environment only.
    Reqenv,
    Tolower,
    Toupper,
    Escape,
    Unescape,
    File,
    Filesize,
    Base64,
    Unbase64,
    Sha1,
    Md5,
    Ldap,
}

const FUNCS: &[(&str, Func)] = &[
    ("osenv", Func::Osenv),
    ("env", Func::Env),
    ("resp", Func::Resp),
    ("req", Func::Req),
    ("http", Func::Req),
    ("note", Func::Note),
    ("reqenv", Func::Reqenv),
    ("req_novary", Func::ReqNovary),
    ("tolower", Func::Tolower),
    ("toupper", Func::Toupper),
    ("escape", Func::Escape),
    ("unescape", Func::Unescape),
    ("file", Func::File),
    ("filesize", Func::Filesize),
    ("base64", Func::Base64),
    ("unbase64", Func::Unbase64),
    ("sha1", Func::Sha1),
    ("md5", Func::Md5),
    ("ldap", Func::Ldap),
];

impl Func {
    pub fn lookup(name: &str) -> Option<Func> {
        FUNCS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, f)| *f)
    }

    /// Apache's name of the function.
    pub fn name(self) -> &'static str {
        FUNCS
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("")
    }

    /// Functions that read files: refused where expressions are restricted.
    pub fn is_restricted(self) -> bool {
        matches!(self, Func::File | Func::Filesize)
    }
}

/// Apache's wording for a name that is not known, by kind of name.
pub fn not_found(kind: &str, name: &str) -> String {
    let prefix = if kind.ends_with("operator") { "-" } else { "" };
    format!("{kind} '{prefix}{name}' does not exist")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(Var::lookup("request_uri"), Some(Var::RequestUri));
        assert_eq!(Var::lookup("HTTP_ACCEPT_ENCODING"), None);
        assert_eq!(Func::lookup("ToLower"), Some(Func::Tolower));
        assert_eq!(Func::lookup("HTTP"), Some(Func::Req));
        assert_eq!(Var::RequestUri.name(), "REQUEST_URI");
        assert_eq!(Var::HttpHost.header(), Some("Host"));
    }

    #[test]
    fn not_found_wording() {
        assert_eq!(not_found("Variable", "X"), "Variable 'X' does not exist");
        assert_eq!(
            not_found("Unary operator", "q"),
            "Unary operator '-q' does not exist"
        );
    }
}
