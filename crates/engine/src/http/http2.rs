//! What the server needs to run an HTTP/2 session: the settings of the
//! server that chose the protocol (`modules::http2`).

/// An HTTP/2 session's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H2Settings {
    /// `H2MaxSessionStreams`: streams the client may open at once.
    pub max_streams: u32,
    /// `H2WindowSize`: the flow-control window of each stream the client sends on.
    pub window_size: u32,
    /// `H2MaxDataFrameLen`: the largest DATA frame sent (0: the peer's limit).
    pub max_data_frame_len: u32,
    /// `H2EarlyHints`: `103 Early Hints` answers reach the client. Off,
    /// the session drops every 103 a stream's request makes (mod_http2's
    /// stream does), while the request still made it.
    pub early_hints: bool,
}

impl Default for H2Settings {
    fn default() -> Self {
        H2Settings {
            max_streams: 100,
            window_size: 65_535,
            max_data_frame_len: 0,
            early_hints: false,
        }
    }
}

/// The HTTP/2 stream a request arrived on: what mod_http2 shows of it
/// (`H2_STREAM_ID`, `H2_STREAM_TAG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H2Stream {
    /// The session's number among the server's connections.
    pub session: u64,
    pub id: u32,
}

/// An HTTP/1.1 request whose `Upgrade: h2c` the server accepted (core's
/// `core_upgrade_handler` with mod_http2's `h2_protocol_switch`): the
/// answer is `101 Switching Protocols`, after which the connection speaks
/// HTTP/2 and the request is answered again as the session's stream 1,
/// whose header block mod_http2 makes from the request (`h2_request_rcreate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H2cUpgrade {
    /// The session's settings (the request's server's).
    pub settings: H2Settings,
    /// `HTTP2-Settings` is a SETTINGS payload nghttp2 accepts (its
    /// base64url decoded, a multiple of six bytes, each value in range).
    /// Otherwise Apache still switches, and the session ends at once.
    pub client_settings_valid: bool,
    /// Whether the `101` is sent: Apache sends no interim answer to an
    /// HTTP/1.0 request (`ap_send_interim_response`), and switches anyway.
    pub interim: bool,
    pub method: String,
    pub scheme: &'static str,
    pub authority: String,
    /// `:path`: the request's path as Apache decoded it, and its query.
    pub path: bytes::Bytes,
    /// The request's fields, lower-cased, without those connection-specific
    /// ones mod_http2 leaves out of a stream's request.
    pub headers: Vec<(String, bytes::Bytes)>,
}

/// The HTTP/2 settings of cleartext connections to `site`'s address that
/// may begin with HTTP/2's preface (`H2Direct`, on where `Protocols` lists
/// `h2c`); `None`: such a connection speaks HTTP/1.x.
pub(crate) fn h2c_direct(site: &crate::site::Site) -> Option<H2Settings> {
    let http2 = site.http2.as_ref()?;
    (site.modules.protocols.lists("h2c") && http2.direct != Some(false)).then(|| http2.settings())
}
