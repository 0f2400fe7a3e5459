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
}

impl Default for H2Settings {
    fn default() -> Self {
        H2Settings {
            max_streams: 100,
            window_size: 65_535,
            max_data_frame_len: 0,
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
