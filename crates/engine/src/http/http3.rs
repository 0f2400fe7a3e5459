//! What the server needs to run HTTP/3 for a server: the settings of
//! htaccel's own `htaccel_http3` module (`modules::http3`).

/// The HTTP/3 settings of one server with `H3Engine on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H3Settings {
    /// `H3MaxStreams`: request streams the client may open at once.
    pub max_streams: u32,
    /// `H3Port`: the UDP port (`None`: the TLS address's own port).
    pub port: Option<u16>,
    /// `H3AltSvc` and `H3AltSvcMaxAge`: the `ma` of the `Alt-Svc` field
    /// HTTPS answers carry (`None`: not advertised).
    pub alt_svc_max_age: Option<u32>,
    /// mod_http2's `H2EarlyHints` of the same server: HTTP/3 sends the
    /// `103 Early Hints` answers HTTP/2 would.
    pub early_hints: bool,
}

/// What a server's HTTPS answers advertise (`Alt-Svc: h3=":PORT"; ma=…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AltSvc {
    /// `None`: the port the client connected to.
    pub port: Option<u16>,
    pub max_age: u32,
}

impl H3Settings {
    pub fn alt_svc(&self) -> Option<AltSvc> {
        self.alt_svc_max_age.map(|max_age| AltSvc {
            port: self.port,
            max_age,
        })
    }
}
